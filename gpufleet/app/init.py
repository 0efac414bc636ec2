"""`gpufleet init DIR [--platform P] [--stack NAME]`: a separate infrastructure repository that uses gpufleet at a
pinned version, and plans on the first try.

It writes a Pulumi project (Pulumi.yaml with `stackConfigDir: stacks`), a `__main__.py` that runs gpufleet's stack
program (gpufleet.app.program.main, the same one `pulumi up` runs in this repository), a requirements.txt pinning
this gpufleet release with the platform's extra, one stack file for the platform, and two CI workflows: an offline
plan of every stack on each pull request, and `gpufleet up` of the changed stacks on main (gpufleet's own pr.yml and
deploy.yml, cut down). Nothing is overwritten: a file that exists is refused, naming it.

The stack files are small working examples (each plans as it is: tests/cli/test_init.py); the values to replace are
marked `# replace:`.
"""

from __future__ import annotations

import re
from pathlib import Path

PLATFORMS = ("k3s", "eks", "gke", "aks", "existing")

STACKS = {
    "k3s": """\
# A k3s cluster on your own hosts over SSH: one server, one GPU host. Addresses are from the documentation range:
config:
  gpufleet:cluster:
    platform: k3s
    kubernetesVersion: "1.36"
    k3s:
      sshUser: ubuntu
      servers:
        - {name: cp-1, address: 192.0.2.10}   # replace: your server's address
  gpufleet:nodePools:
    - name: l4
      gpu: L4
      gpusPerNode: 1
      pricePerNodeHour: 0.85                  # replace: what one host costs you per hour
      hosts:
        - {name: gpu-1, address: 192.0.2.31}  # replace: your GPU host
  gpufleet:gpuOperator:
    driver: {source: operator}
  gpufleet:workloads:
    cudaVersions: ["12.8"]
  # replace: `pulumi config set --secret gpufleet:sshPrivateKey < ~/.ssh/id_ed25519` writes the real value
  gpufleet:sshPrivateKey:
    secure: v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
""",
    "eks": """\
# An EKS cluster in a new VPC with one L4 pool that scales to zero. `aws configure` (or your SSO profile) gives
# `pulumi up` its credentials.
config:
  aws:region: us-east-1                     # replace: your region
  gpufleet:cluster:
    platform: eks
    kubernetesVersion: "1.35"
    eks:
      network:
        availabilityZones: [us-east-1a, us-east-1b]
  gpufleet:nodePools:
    - name: l4
      instanceType: g6.xlarge
      minNodes: 0
      maxNodes: 2
  gpufleet:gpuOperator:
    driver: {source: preinstalled}
  gpufleet:workloads:
    cudaVersions: ["12.8"]
""",
    "gke": """\
# A regional GKE cluster with one L4 pool that scales to zero. `gcloud auth application-default login` gives
# `pulumi up` its credentials.
config:
  gcp:project: my-gpu-project               # replace: your project
  gcp:region: us-central1
  gpufleet:cluster:
    platform: gke
    kubernetesVersion: "1.35"
    gke:
      region: us-central1
      authorizedNetworks:                   # who may reach the API server (secure-defaults refuses none)
        - {cidr: 203.0.113.0/24, name: office}  # replace: your office/VPN egress
  gpufleet:nodePools:
    - name: l4
      machineType: g2-standard-8
      minNodes: 0
      maxNodes: 2
      gke: {gpuDriverVersion: LATEST}       # GKE's DEFAULT driver is branch 535, past its support end
  gpufleet:workloads:
    cudaVersions: ["12.8"]
""",
    "aks": """\
# An AKS cluster with one A100 pool that scales to zero. `az login` gives `pulumi up` its credentials.
config:
  gpufleet:cluster:
    platform: aks
    kubernetesVersion: "1.35"
    aks:
      location: eastus                      # replace: your region
      entra:
        adminGroupObjectIds: ["00000000-0000-0000-0000-000000000000"]  # replace: your admins' Entra group
  gpufleet:nodePools:
    - name: a100
      vmSize: Standard_NC24ads_A100_v4
      minNodes: 0
      maxNodes: 2
  gpufleet:workloads:
    cudaVersions: ["12.8"]
""",
    "existing": """\
# A Kubernetes cluster you already have (a GPU cloud's managed Kubernetes, or one made elsewhere): gpufleet installs
# the GPU stack on it. Its kubeconfig: `pulumi config set --secret gpufleet:kubeconfig < kubeconfig.yaml`.
config:
  gpufleet:cluster:
    platform: existing
    kubernetesVersion: "1.34"
    existing: {}
  gpufleet:nodePools:
    - name: h100
      minNodes: 1
      maxNodes: 1
      gpu: H100-80GB
      gpusPerNode: 8
      existing:
        nodeSelector: {gpufleet.io/pool: h100}   # replace: a label your GPU nodes carry
  gpufleet:gpuOperator:
    driver: {source: preinstalled}
  gpufleet:workloads:
    cudaVersions: ["12.8"]
  gpufleet:kubeconfig:
    secure: v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
""",
}

MAIN = '''"""The Pulumi program: gpufleet builds the cluster the current stack's file (stacks/Pulumi.<stack>.yaml) declares.

To add your own resources beside it, see gpufleet's docs/components.md; to test them, docs/testing-your-program.md."""

from gpufleet.app.program import main

main()
'''

PROJECT = """\
name: {name}
description: GPU Kubernetes clusters declared with gpufleet, one stack file per environment in stacks/.
runtime:
  name: python
  options:
    toolchain: pip
    virtualenv: venv
stackConfigDir: stacks
"""

# The workflows pin third-party actions by full commit SHA, as gpufleet's own do (.github/workflows/pr.yml).
PLAN_WORKFLOW = """\
# Pull requests: plan every stack offline (no cloud credentials, no Pulumi CLI) and put the plans in the job summary.
# The check fails on a mandatory policy violation (exit 1) or an invalid stack file (exit 2).
name: plan

on:
  pull_request:

permissions: {}

jobs:
  plan:
    runs-on: ubuntu-24.04
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          persist-credentials: false
      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0
        with:
          python-version: "3.12"
      - name: Install
        run: python -m pip install -q -r requirements.txt
      - name: Plan every stack
        run: gpufleet plan --all --details --format markdown --output "$GITHUB_STEP_SUMMARY"
"""

DEPLOY_WORKFLOW = """\
# main: `gpufleet up` of the stacks a push changed, through the real Pulumi CLI, in dependency order. It needs the
# backend's token (secret PULUMI_ACCESS_TOKEN) and the cloud's credentials for the job (see gpufleet's
# .github/workflows/deploy.yml for OIDC roles per cloud).
name: deploy

on:
  push:
    branches: [main]

permissions: {}

concurrency:
  group: deploy
  cancel-in-progress: false

jobs:
  up:
    runs-on: ubuntu-24.04
    environment: production
    permissions:
      contents: read
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          fetch-depth: 0
          persist-credentials: false
      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0
        with:
          python-version: "3.12"
      - name: Install
        run: python -m pip install -q -r requirements.txt
      - uses: pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d # v7.0.0
      - name: Update the changed stacks
        env:
          PULUMI_ACCESS_TOKEN: ${{ secrets.PULUMI_ACCESS_TOKEN }}
          BEFORE: ${{ github.event.before }}
        run: gpufleet up --changed-since "$BEFORE" --yes
"""


class InitError(Exception):
    """A directory init refuses; str() names the file or value and what is allowed."""


def project_name(directory: Path) -> str:
    """A Pulumi project name from the folder's name (letters, digits, `-`, `_`, `.`)."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", directory.resolve().name).strip("-.") or "gpu-infra"
    return name[:100]


def files(directory: Path, platform: str, stack: str, version: str) -> dict[Path, str]:
    """Every file init writes, by path."""
    if platform not in STACKS:
        raise InitError(f"--platform {platform!r}: not allowed (allowed: {', '.join(PLATFORMS)})")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", stack):
        raise InitError(f"--stack {stack!r}: not allowed (allowed: letters, digits, '-', '_' and '.', at most 100)")
    requirement = f"gpufleet[{platform}]=={version}"
    return {
        directory / "Pulumi.yaml": PROJECT.format(name=project_name(directory)),
        directory / "__main__.py": MAIN,
        directory / "requirements.txt": f"# gpufleet at the release this repository was made with: raise it on "
                                        f"purpose, then review the plan.\n{requirement}\n",
        directory / "stacks" / f"Pulumi.{stack}.yaml": STACKS[platform],
        directory / ".github" / "workflows" / "plan.yml": PLAN_WORKFLOW,
        directory / ".github" / "workflows" / "deploy.yml": DEPLOY_WORKFLOW,
        directory / ".gitignore": "venv/\n__pycache__/\n",
    }


def init(directory: Path, platform: str, stack: str, version: str) -> list[Path]:
    """Write the repository; InitError (nothing written) when any of its files exists."""
    wanted = files(directory, platform, stack, version)
    present = [str(p) for p in wanted if p.exists()]
    if present:
        raise InitError(f"{directory}: {', '.join(present)} already exist{'s' if len(present) == 1 else ''}; "
                        "gpufleet init writes a new repository and overwrites nothing (allowed: an empty or new folder)")
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(wanted)
