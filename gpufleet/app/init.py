"""`gpufleet init DIR [--platform P] [--stack NAME]`: a separate infrastructure repository that uses gpufleet at a
pinned version, and plans on the first try.

It writes a Pulumi project (Pulumi.yaml with `stackConfigDir: stacks`), a `__main__.py` that runs gpufleet's stack
program (gpufleet.app.program.main, the same one `pulumi up` runs in this repository), a requirements.txt pinning
this gpufleet release with the platform's extra, one stack file for the platform (its traits' starter stack,
gpufleet/base/platforms/<name>/program.py), and two CI workflows: an offline
plan of every stack on each pull request, and `gpufleet up` of the changed stacks on main (gpufleet's own pr.yml and
deploy.yml, cut down). Nothing is overwritten: a file that exists is refused, naming it.

The stack files are small working examples (each plans as it is: tests/cli/test_init.py); the values to replace are
marked `# replace:`.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpufleet.base import platforms


def starter_platforms() -> tuple[str, ...]:
    """The platforms `gpufleet init` offers: those whose traits carry a starter stack (ProgramTraits.starter_stack)."""
    return tuple(n for n in platforms.names() if platforms.get(n).program.starter_stack)


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
    if platform not in starter_platforms():
        raise InitError(f"--platform {platform!r}: not allowed (allowed: {', '.join(starter_platforms())})")
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", stack):
        raise InitError(f"--stack {stack!r}: not allowed (allowed: letters, digits, '-', '_' and '.', at most 100)")
    requirement = f"gpufleet[{platform}]=={version}"
    return {
        directory / "Pulumi.yaml": PROJECT.format(name=project_name(directory)),
        directory / "__main__.py": MAIN,
        directory / "requirements.txt": f"# gpufleet at the release this repository was made with: raise it on "
                                        f"purpose, then review the plan.\n{requirement}\n",
        directory / "stacks" / f"Pulumi.{stack}.yaml": platforms.get(platform).program.starter_stack,
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
