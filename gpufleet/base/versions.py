"""Every upstream version gpufleet pins, in one table.

Nothing else in the repository may spell a pinned version (tests/unit/test_versions_single_source.py
enforces it), so Renovate or a human updates exactly one place. Versions that travel together
(a chart and the app it ships) are one value.
"""

from __future__ import annotations

from typing import Optional
from dataclasses import dataclass, field


@dataclass(frozen=True)
class HelmChart:
    """A Helm chart pinned together with the application version it ships.

    What Helm checks at deploy time and what it trusts: docs/security.md ("Downloads at deploy time")."""

    name: str
    repo: str
    """An `https://` chart repository (its index.yaml) or an `oci://` registry path; never an index on a moving
    branch (tests/unit/test_chart_pins.py). For a chart with an `archive`, the index.yaml at the commit the digest was
    read from (raw.githubusercontent.com/<owner>/<repo>/<commit>/...), kept as the source of that digest: Helm is given
    the archive and does not read it."""
    version: str
    """The exact chart version (no range: Helm would pick the newest match)."""
    app_version: str
    archive: str = ""
    """The chart archive itself at a URL that does not follow a moving index, for a chart whose repository index lives
    on a branch (GitHub Pages or a repository's own folder): Helm downloads this file and never reads that index.
    Either the file at a git commit (raw.githubusercontent.com/<owner>/<repo>/<commit>/<file>.tgz: the commit fixes the
    bytes) or the GitHub release asset the index points to (github.com/<owner>/<repo>/releases/download/<tag>/<file>.tgz:
    trusts the project not to replace the asset of a published release). Default: none, the chart comes from `repo`."""
    digest: str = ""
    """sha256 of the chart archive as its repository publishes it (index.yaml `digest`), where we could read one, with
    its source beside the pin. Compared in CI with the archive in ../shared/reference/charts when that is the published
    file; Helm 3.20 does not compare it at deploy time (pkg/downloader/chart_downloader.go). Default: none recorded."""
    crds: str = "none"
    """How the chart's CRDs follow a chart bump (docs/upgrades.md, "CRDs move with their charts"). Helm installs a
    chart's `crds/` folders (its own and its enabled subcharts') only when the release is first installed and never
    upgrades or deletes them (helm.sh/docs/chart_best_practices/custom_resource_definitions, "Some caveats and
    explanations"), while CRDs a chart keeps under templates/ are upgraded with the release like any object.
    CRDS_APPLY: gpufleet applies the CRDs of `crd_dirs` from the pinned archive as its own resources (server-side
    apply), ordered before the release, which then installs with skip_crds (components/chart_crds.py).
    CRDS_TEMPLATES: the chart templates its CRDs, Helm upgrades them. CRDS_NONE (default): the chart ships no CRD.
    CRDS_INSTALL_ONLY: crds/ left to Helm (installed once, never upgraded), a known gap named in docs/upgrades.md."""
    crd_dirs: tuple["CrdDir", ...] = ()
    """With CRDS_APPLY: every `crds/` folder of the archive gpufleet applies (tests/unit/test_chart_crds.py checks
    they are all of the archive's `crds/` folders, each in or out by its subchart's condition). With CRDS_TEMPLATES:
    the folders its CRD templates are in, which the review of a chart bump compares (gpufleet/app/review/crds.py)."""
    crds_left: tuple[str, ...] = ()
    """With CRDS_APPLY: files of the archive's `crds/` folders (below its top folder) that gpufleet leaves out on
    purpose, the reason beside the pin: the release skips its crds/, so nothing installs them. Default: none (every
    file of a `crds/` folder is in `crd_dirs`)."""
    crds_deleted_on_uninstall: str = ""
    """With CRDS_APPLY: the chart's own hook that deletes the CRDs gpufleet applies when the release is uninstalled
    (`pulumi destroy`, or a stack that no longer installs the chart), where it is in the pinned archive, when no value
    turns it off. gpufleet keeps those CRDs on delete (retainOnDelete, components/chart_crds.py) and Pulumi's Release
    runs every hook on delete, so the plan says which release undoes that (gpufleet/app/plan/upgrade_warnings.py,
    docs/upgrades.md). Default: none (the chart deletes no CRD on uninstall)."""


CRDS_APPLY = "apply"
CRDS_TEMPLATES = "templates"
CRDS_NONE = "none"
CRDS_INSTALL_ONLY = "install-only"


@dataclass(frozen=True)
class CrdDir:
    """A `crds/` folder of a chart archive whose CRDs gpufleet applies (HelmChart.crd_dirs)."""

    path: str
    """The folder below the archive's top folder: `crds`, or `charts/<subchart>/crds`."""
    condition: str = ""
    """The subchart's `condition` in the chart's Chart.yaml (a values path): Helm installs a subchart's crds/ only when
    it is on, and so does gpufleet, reading the release's values. Default: always (the chart's own crds/)."""
    default: bool = True
    """The condition's value in the chart's values.yaml, used when the release's values do not set it."""


def archive_file_names(chart: HelmChart, suffix: str = ".tgz") -> tuple[str, ...]:
    """Every name a chart's archive may have in a directory: `<name>-<version><suffix>` (what `helm pull` and
    `gpufleet charts fetch` save), the version as pinned, without and with a leading `v`."""
    bare = chart.version.removeprefix("v")
    names = (f"{chart.name}-{chart.version}{suffix}", f"{chart.name}-{bare}{suffix}", f"{chart.name}-v{bare}{suffix}")
    return tuple(dict.fromkeys(names))


def chart_name_of(chart: str, version: str = "") -> str:
    """The chart name in a release's `chart` reference, in any of the forms a Release takes: `name`, `repo/name`,
    `oci://registry/path/name` (optionally `@sha256:<digest>`), or an archive URL `.../<name>-<version>.tgz`."""
    last = str(chart).rstrip("/").rsplit("/", 1)[-1].split("@", 1)[0]
    if last.endswith(".tgz"):
        last = last[: -len(".tgz")]
        if version and last.endswith(f"-{version}"):
            last = last[: -len(version) - 1]
    return last


# NVIDIA GPU Operator. Its default driver, supported driver branches and Kubernetes versions are
# facts of the release: gpufleet/base/catalog/drivers.yaml (`gpu_operator_releases`).
GPU_OPERATOR = HelmChart(
    name="gpu-operator",
    repo="https://helm.ngc.nvidia.com/nvidia",
    version="v26.7.0",
    app_version="v26.7.0",
    # CRDs: applied by gpufleet (crds/ + the NFD subchart's crds/, on: gpufleet sets nfd.enabled), operator.upgradeCRD
    # off. The chart's own pre-upgrade hook (templates/upgrade_crd.yaml at v26.7.0) re-applies only clusterpolicies,
    # nvidiadrivers, gpuclusters and NFD's CRDs, from the operator image: the ComputeDomain CRDs the same crds/ ships
    # stay old, and the review cannot show what the hook changes.
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("crds"), CrdDir("charts/node-feature-discovery/crds", "nfd.enabled")),
)

# AMD GPU Operator (ROCm/gpu-operator, chart `gpu-operator-charts`, `helm repo add rocm
# https://rocm.github.io/gpu-operator`): newest tag v1.5.1 (2026-07-21, commit 858cf255), Chart.yaml
# version/appVersion v1.5.1, kubeVersion >= 1.29 (../shared/reference/amd-gpu-operator/Chart-v1.5.1.yaml).
# rocm.github.io/gpu-operator is GitHub Pages of the repository's gh-pages branch, an index that moves with every
# release: the chart is taken from the gh-pages commit that published v1.5.1 instead, c68b07a34c95ef57df44d4b921bd3e9ad7d0ac68
# ("Release version v1.5.1 (#614)", 2026-07-21), file charts/gpu-operator-charts-v1.5.1.tgz. Its index.yaml at that
# commit gives the digest below (entry gpu-operator-charts v1.5.1); the archive there hashes to it, and so does
# ../shared/reference/charts/gpu-operator-charts-v1.5.1.tgz (checked 2026-12, git show <commit>:<file> | sha256sum).
_ROCM_GH_PAGES = "https://raw.githubusercontent.com/ROCm/gpu-operator/c68b07a34c95ef57df44d4b921bd3e9ad7d0ac68"
AMD_GPU_OPERATOR = HelmChart(
    name="gpu-operator-charts",
    repo=_ROCM_GH_PAGES,
    version="v1.5.1",
    app_version="v1.5.1",
    archive=f"{_ROCM_GH_PAGES}/charts/gpu-operator-charts-v1.5.1.tgz",
    digest="efbd23fe2297350ac23dedf1b916874138f57dd2796b444d1a7f241eaaefc6a8",
    # CRDs: applied by gpufleet: crds/ (DeviceConfig, RemediationWorkflowStatus) and the subcharts' crds/ by their
    # Chart.yaml v1.5.1 conditions (values.yaml defaults all true). The chart's own pre-upgrade hook (`upgradeCRD`,
    # templates/pre-upgrade-hook.yaml) re-applies the same files from the operator image with --force-conflicts:
    # turned off, one writer, as the NVIDIA GPU Operator's upgradeCRD. The remediation-crds subchart
    # (Argo Workflows' 8 CRDs, up to 2.6 MB a file: as plan inputs they made the amd-lab plan take 16 s and 30 MB) stays
    # off: gpufleet turns the remediation workflow controller and its CRDs off (components/gpu_stack/amd_operator.py),
    # since no DeviceConfig it writes enables remediationWorkflow.
    crds=CRDS_APPLY,
    crd_dirs=(
        CrdDir("crds"),
        CrdDir("charts/node-feature-discovery/crds", "node-feature-discovery.enabled"),
        CrdDir("charts/kmm/crds", "kmm.enabled"),
        CrdDir("charts/remediation-crds/crds", "remediation.installCRDs"),
    ),
    # On `helm uninstall` the chart runs a post-delete hook, the Job delete-custom-resource-definitions
    # (templates/post-delete-hook.yaml at v1.5.1, lines 56-151): it deletes deviceconfigs.amd.com and
    # remediationworkflowstatuses.amd.com always (lines 83-88), NFD's CRDs when node-feature-discovery.enabled
    # (115-125), KMM's when kmm.enabled (126-133), Argo's when remediation.enabled and remediation.installCRDs (89-114):
    # with gpufleet's values, exactly the CRDs it applies from crd_dirs (tests/upstream/test_chart_renders.py). No value
    # turns the hook off (no condition around it; its line 1: "Run helm uninstall with --no-hooks to bypass the
    # post-delete hook"). Helm runs it unless Uninstall.DisableHooks (helm pkg/action/uninstall.go), which Pulumi's
    # helm.v3.Release never sets on delete: disableWebhooks sets only install's DisableHooks and disableCRDHooks only
    # upgrade's (pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go, Delete, at commit 94977969 after
    # v4.32.0); either would also drop the pre-upgrade-check hook that holds a chart upgrade while a driver upgrade runs
    # (templates/pre-upgrade-hook.yaml lines 55-106). A post-renderer cannot strip it: the provider's Helm (v3.20.2 in
    # its go.mod) passes no hook to one (helm/helm#7891; later releases change that, helm/helm#13154). The pre-delete
    # hook (templates/pre-delete-hook.yaml, Job delete-leftover-deviceconfigs) deletes every DeviceConfig before. What
    # `pulumi destroy` does then, and how to keep the CRDs: docs/upgrades.md, "What `pulumi destroy` deletes".
    crds_deleted_on_uninstall="templates/post-delete-hook.yaml (Job delete-custom-resource-definitions)",
)
# The AMD GPU Driver the operator builds and loads through KMM when a stack asks for an operator-managed driver
# without a version: the chart's own default (values.yaml deviceConfig.spec.driver.version at v1.5.1).
AMD_GPU_DRIVER_DEFAULT = "30.20.1"
# The operand images of a DeviceConfig at v1.5.1: the chart's own default DeviceConfig spec
# (../shared/reference/charts/gpu-operator-charts-v1.5.1.tgz values.yaml deviceConfig.spec: commonConfig.initContainerImage,
# commonConfig.utilsContainer.image, devicePlugin.devicePluginImage / nodeLabellerImage, metricsExporter.image,
# configManager.image), the images the operator also falls back to for an empty field (ROCm/gpu-operator v1.5.1
# internal/controllers: defaultUtilsImage docker.io/rocm/gpu-operator-utils:latest). gpufleet writes them into its
# DeviceConfigs only with gpufleet:registry.mirror, each as `<mirror>/<source registry>/<path>`
# (components/gpu_stack/amd_operator.py); `:latest` is what v1.5.1 ships for the utils, device plugin and labeller.
AMD_DEVICE_CONFIG_IMAGES = {
    "commonConfig.initContainerImage": "docker.io/library/busybox:1.36",
    "commonConfig.utilsContainer.image": "docker.io/rocm/gpu-operator-utils:latest",
    "devicePlugin.devicePluginImage": "docker.io/rocm/k8s-device-plugin:latest",
    "devicePlugin.nodeLabellerImage": "docker.io/rocm/k8s-device-plugin:labeller-latest",
    "metricsExporter.image": "docker.io/rocm/device-metrics-exporter:v1.5.1",
    "configManager.image": "docker.io/rocm/device-config-manager:v1.5.1",
}

# Kubernetes minor versions gpufleet plans for, and the one a stack gets by default.
# kubernetes-validate ships the OpenAPI schemas we validate every manifest against.
# Default 1.35 (was 1.34, which left GKE standard support on 2026-10-01 and EKS standard support on
# 2026-12-02: gpufleet/base/catalog/kubernetes.yaml). 1.35 is in standard support on both clouds until
# 2027-03/04, is supported by every GPU Operator release in the catalog (v25.10.1, v26.3.3, v26.7.0) and
# has a k3s release; 1.36 is newer but v25.10.1 does not support it.
KUBERNETES_DEFAULT = "1.35"

# k3s release per Kubernetes minor version. The install script is fetched from the
# same tag (never the moving get.k3s.io), so the script and the binary agree.
# Each pin is the newest patch of its minor found in k3s's own release notes (the GitHub release page
# github.com/k3s-io/k3s/releases/tag/<tag>, "Embedded Component Versions"), read 2026-12-04. Newer patches may
# exist: third-party pins name v1.34.11/v1.34.12+k3s1 and v1.35.9+k3s1 (2026-09-30), but no k3s-io page or
# docs file for them could be read here, so they are not pinned (never a tag we have not read).
# Issue 49 (pins "patches behind"): every pin is the newest patch of its minor that has release checksums recorded in
# ../shared/reference/k3s/checksums.yaml (read 2026-12-04); none is recorded for v1.34.11/12, v1.35.9 or v1.36.4/5, so
# they stay unpinned. Tiers there (how far each copy is trusted): the air-gap image tarballs of all four pins are
# `nixpkgs` (NixOS/nixpkgs images-versions.json); the k3s binaries and install.sh are `third-party` copies (v1.34.9 has
# no amd64 binary sum, v1.33.13 and v1.35.8 no install.sh sum). tests/unit/test_k3s_pins.py keeps a pin from moving to
# a tag without recorded checksums.
K3S_RELEASES: dict[str, str] = {
    # github.com/k3s-io/k3s/releases/tag/v1.33.13+k3s2 (backports for 2026-07; Kubernetes v1.33.13, runc v1.4.2).
    "1.33": "v1.33.13+k3s2",
    # github.com/k3s-io/k3s/releases/tag/v1.34.9%2Bk3s1 (backports for 2026-06; Kubernetes v1.34.9, runc v1.4.2).
    "1.34": "v1.34.9+k3s1",
    # github.com/k3s-io/k3s/releases/tag/v1.35.8%2Bk3s1 (backports for 2026-08; Kubernetes v1.35.8, runc v1.4.2).
    "1.35": "v1.35.8+k3s1",
    # k3s-io/docs docs/release-notes/v1.36.X.md @2160a60a (its component table): v1.36.2+k3s1, Jun 24 2026
    # (backports for 2026-06; Kubernetes v1.36.2, runc v1.4.2). Third-party pins name v1.36.5+k3s1 (2026-10), not read
    # from k3s-io, so not pinned. The k3s example stacks run 1.36: 1.35 leaves upstream support on 2027-02-28.
    "1.36": "v1.36.2+k3s1",
}
# Security floor per minor: the first k3s release whose embedded runc is >= 1.3.3, the runc release that fixes
# the container escapes CVE-2025-31133, CVE-2025-52565 and CVE-2025-52881 (also fixed in runc 1.2.8 and
# 1.4.0-rc.3). A pin older than its floor is refused (tests/unit/test_k3s_pins.py). From the k3s release notes
# (k3s-io/docs docs/release-notes/v1.3x.X.md, component tables; read 2026-12-04):
K3S_SECURITY_FLOORS: dict[str, str] = {
    # v1.33.X.md @143463bb: v1.33.6+k3s1 (Nov 20 2025) "Bump runc to v1.3.3 (#13145)"; v1.33.5+k3s1 had runc v1.3.1.
    "1.33": "v1.33.6+k3s1",
    # v1.34.X.md @0887158f: v1.34.2+k3s1 (Nov 20 2025) "Bump runc to v1.3.3 (#13144)"; v1.34.1+k3s1 had runc v1.3.1.
    "1.34": "v1.34.2+k3s1",
    # v1.35.X.md @1349cf8a: the first 1.35 release, v1.35.0+k3s1 (Dec 23 2025), already embeds runc v1.4.0.
    "1.35": "v1.35.0+k3s1",
    # v1.36.X.md @2160a60a: the first 1.36 release, v1.36.0+k3s1 (May 06 2026), embeds runc v1.4.2.
    "1.36": "v1.36.0+k3s1",
}
K3S_INSTALL_SCRIPT_URL = "https://raw.githubusercontent.com/k3s-io/k3s/{tag}/install.sh"
# sha256 of install.sh at each pinned release's tag (`curl -sfL <k3s_install_script_url> | sha256sum`), checked on
# the host before the script runs. The k3s binary itself is checked by that install.sh against the release's
# sha256sum-<arch>.txt, fetched from the same GitHub release over TLS (install.sh download_hash / verify_binary).
# No k3s-io file could be read from here (no github.com release or raw file is reachable, and the k3s snapshot is too
# large to fetch, 2026-12-04): the values below are copies of upstream data kept in other repositories (collected in
# ../shared/reference/k3s/checksums.yaml, read 2026-12-04), each with its provenance tier. Trusted here: the nixpkgs
# tier (NixOS/nixpkgs k3s images-versions.json, written by nixpkgs' update script from the release and checked by every
# nixpkgs build that fetches the file), and a third-party copy only when at least two independent files agree for the
# exact tag. A single third-party copy, or a value the reference flags as suspicious, is not recorded: that file keeps
# the release's own check (install.sh checks the binary against the release's sha256sum-<arch>.txt; an air-gapped
# stack gives the sum itself). A recorded value that proved wrong would stop the install (fail closed), never let an
# unverified file run. A release without a recorded install.sh value runs the script as fetched from its tag over TLS
# (docs/security.md lists it as trusted, not verified).
K3S_INSTALL_SCRIPT_SHA256: dict[str, str] = {
    # third-party, trusted: four independent files pin it for install.sh at the tag's raw URL (one "independently
    # computed from the fixed tag's raw content"), and a runbook gives the same value with the release commit 01b6f04a;
    # install.sh did not change on release-1.36 from v1.36.2 to v1.36.5 (the same value is pinned for those tags).
    # v1.34.9+k3s1 (40b487f0...): one file names this exact tag (the others v1.34.11): not recorded.
    "v1.36.2+k3s1": "46177d4c99440b4c0311b67233823a8e8a2fc09693f6c89af1a7161e152fbfad",
}
# sha256 of the release files an air-gapped k3s install uses (k3s_release_files: the binary and the .tar.zst images
# tarball), keyed `<tag>/<file name>`; provenance and the trust rule as K3S_INSTALL_SCRIPT_SHA256 above. A stack's own
# gpufleet:cluster.k3s.airgap.sha256 value must agree with a recorded one (plan-time refusal otherwise); a file with
# no recorded value needs the stack's.
K3S_RELEASE_SHA256: dict[str, str] = {
    # nixpkgs 114a56c2 pkgs/applications/networking/cluster/k3s/1_33/images-versions.json. (A third-party table gives
    # the amd64 value for v1.34.10+k3s1 too: that copy is the doubtful one, nixpkgs names this tag.)
    "v1.33.13+k3s2/k3s-airgap-images-amd64.tar.zst": "7e59087b6a72e00db45a3bcb4f144114b13eb72dc8947c2b7908a0e1482b42b3",
    "v1.33.13+k3s2/k3s-airgap-images-arm64.tar.zst": "47bc05eb1b21f0f76530a927ec5e1c5c2dec457f0190bf423e7be1d49348b5e6",
    # third-party, trusted: a Terraform module's release manifest and, independently, an upgrade runbook "taken from
    # the release sha256sum-arm64.txt". (The amd64 binary has one copy only: not recorded.)
    "v1.33.13+k3s2/k3s-arm64": "cf6afb3944f9ecf120fa2837b542479018c08f9ea1d1d181d4a68445e7717a8d",
    # nixpkgs 0145c6da .../k3s/1_34/images-versions.json. Its arm64 tar.zst value equals the 1_36 file's for
    # v1.36.2+k3s1 while the amd64 values differ: suspicious, not recorded. (Binaries: no copy, or one repository only.)
    "v1.34.9+k3s1/k3s-airgap-images-amd64.tar.zst": "b01d1c0b5eeff414a405a423851e13575317831eec3f87f22d6a7038f9a1fdb7",
    # nixpkgs 2e753612 .../k3s/1_35/images-versions.json.
    "v1.35.8+k3s1/k3s-airgap-images-amd64.tar.zst": "807160da9a1b3ec86183a777241a6fe948d27fd6fdf3b88d0da39fa3b1ceeddc",
    "v1.35.8+k3s1/k3s-airgap-images-arm64.tar.zst": "18c53139e7ad39009057d5c52ec5501aeea1ada235986e43c7357a3863ff3fdd",
    # third-party, trusted: a Go release catalog and, independently, a runbook whose binary matched sha256sum-amd64.txt.
    "v1.35.8+k3s1/k3s": "12f81c9bb5b71e098a4f7a2d187e350902a9339a6c3d5e56c20a03f7a417e07f",
    # third-party, trusted: three independent files (a Go catalog, an arm64 runbook from sha256sum-arm64.txt, a Go map).
    "v1.35.8+k3s1/k3s-arm64": "898476e008704289382377ef19946f23b511cf2678042cb5c8aef991e64f840a",
    # nixpkgs 102b00ab .../k3s/1_36/images-versions.json, and a third-party change record that checked it against the
    # release's sha256sum-amd64.txt. (arm64 tar.zst: the suspicious duplicate above, not recorded.)
    "v1.36.2+k3s1/k3s-airgap-images-amd64.tar.zst": "da6a3b2dbd55cc368d930078ae8814ed22eb9c92247f7b9b46bf073445ff55b3",
    # third-party, trusted: six independent files agree, one of them checked against sha256sum-amd64.txt. (k3s-arm64:
    # one copy only, not recorded.)
    "v1.36.2+k3s1/k3s": "65a55ec56c24eab44383086166ec620a491952b7e23941a49ddca6e8a4c4b4de",
}
# The release files of a k3s tag (docs.k3s.io/installation/airgap, k3s-io/docs docs/installation/airgap.md: the binary
# `k3s` placed in /usr/local/bin, `k3s-airgap-images-amd64.tar.zst` downloaded from
# github.com/k3s-io/k3s/releases/download/<tag with + as %2B>/; docs/installation/private-registry.md "k3s-images.txt").
# Binaries of other architectures carry the suffix (`k3s-arm64`), sums are sha256sum-<arch>.txt per release.
K3S_RELEASE_DOWNLOAD_URL = "https://github.com/k3s-io/k3s/releases/download/{tag}/{file}"


def k3s_release_files(arch: str) -> dict[str, str]:
    """role -> file name in a k3s release: the binary, the air-gap images tarball, the sha256 sums."""
    return {
        "k3s": "k3s" if arch == "amd64" else f"k3s-{arch}",
        "images": f"k3s-airgap-images-{arch}.tar.zst",
        "sums": f"sha256sum-{arch}.txt",
    }


def k3s_release_url(kubernetes_version: str, file: str) -> str:
    """A file of the pinned k3s release on GitHub ('+' percent-encoded, as k3s_install_script_url)."""
    return K3S_RELEASE_DOWNLOAD_URL.format(tag=k3s_release(kubernetes_version).replace("+", "%2B"), file=file)


def k3s_version_key(tag: str) -> tuple[int, int, int, int]:
    """'v1.33.13+k3s2' -> (1, 33, 13, 2): k3s tags order by Kubernetes version, then k3s revision."""
    kube, _, rev = tag.removeprefix("v").partition("+k3s")
    major, minor, patch = (int(x) for x in kube.split("."))
    return major, minor, patch, int(rev)


def k3s_release(kubernetes_version: str) -> str:
    """The pinned k3s release for a Kubernetes minor version (KeyError if unsupported)."""
    return K3S_RELEASES[kubernetes_version]


def k3s_install_script_url(kubernetes_version: str) -> str:
    """The install script at the same tag as the pinned k3s release. The tag's '+' is percent-encoded
    (%2B), the form k3s users pin raw.githubusercontent.com URLs in; a literal '+' in a URL is read as a
    space by some servers and proxies."""
    return K3S_INSTALL_SCRIPT_URL.format(tag=k3s_release(kubernetes_version).replace("+", "%2B"))


def k3s_install_script_sha256(kubernetes_version: str) -> Optional[str]:
    """The recorded sha256 of the pinned release's install.sh, or None when none is recorded."""
    return K3S_INSTALL_SCRIPT_SHA256.get(k3s_release(kubernetes_version))


def k3s_release_sha256(kubernetes_version: str, file: str) -> Optional[str]:
    """The recorded sha256 of a file of the pinned release (`install.sh`, a binary or an images tarball), or None."""
    release = k3s_release(kubernetes_version)
    if file == "install.sh":
        return K3S_INSTALL_SCRIPT_SHA256.get(release)
    return K3S_RELEASE_SHA256.get(f"{release}/{file}")

# Workload layer (gpufleet:addons). Charts from OCI registries have `repo` = the registry path;
# components/helm_chart.py turns that into the `oci://.../<name>` chart reference Helm expects.
# The CRDs in ../shared/reference/crds/ are from the same tags (tests/upstream/test_workload_crds.py
# compares them).
KUEUE = HelmChart(
    name="kueue",
    repo="oci://registry.k8s.io/kueue/charts",
    version="0.19.2",
    app_version="v0.19.2",
    # CRDs: templates/crd/ (generated, behind the chart's own values), upgraded by Helm with the release.
    crds=CRDS_TEMPLATES,
    crd_dirs=(CrdDir("templates/crd"),),
)
JOBSET = HelmChart(
    name="jobset",
    repo="oci://registry.k8s.io/jobset/charts",
    version="0.12.0",
    app_version="v0.12.0",
    # CRDs: crds/ (jobset.x-k8s.io_jobsets.yaml), which Helm never upgrades: applied by gpufleet.
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("crds"),),
)
# Kubeflow trainer v2 (TrainJob, trainer.kubeflow.org/v1alpha1). Its chart bundles JobSet (value
# `jobset.install`), which we turn off when the JobSet add-on installs it.
KUBEFLOW_TRAINER = HelmChart(
    name="kubeflow-trainer",
    repo="oci://ghcr.io/kubeflow/charts",
    version="2.3.0",
    app_version="v2.3.0",
    # CRDs: its own under templates/crd/ (upgraded by Helm); its bundled JobSet (condition jobset.install, default
    # true) and LWS (dataCache.enabled,dataCache.lws.install; dataCache.enabled defaults to false) keep theirs in crds/:
    # gpufleet applies the JobSet subchart's when the release installs it (a stack with addons.jobset installs the
    # JobSet pin instead, which applies its own).
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("charts/jobset/crds", "jobset.install"), CrdDir("charts/lws/crds", "dataCache.enabled", False)),
)
# Images of the upstream ClusterTrainingRuntimes gpufleet installs (components/workloads/trainer_runtimes.py),
# as kubeflow/trainer v2.3.0 ships them: manifests/base/runtimes/*.yaml name the framework images, and
# manifests/overlays/runtimes/kustomization.yaml pins the project's own images (untagged in base) to the release.
TRAINER_RUNTIME_IMAGES = {
    "torch": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
    "jax": "nvcr.io/nvidia/jax:25.10-py3",
    "deepspeed": f"ghcr.io/kubeflow/trainer/deepspeed-runtime:{KUBEFLOW_TRAINER.app_version}",
    "mlx": f"ghcr.io/kubeflow/trainer/mlx-runtime:{KUBEFLOW_TRAINER.app_version}",
    "xgboost": f"ghcr.io/kubeflow/trainer/xgboost-runtime:{KUBEFLOW_TRAINER.app_version}",
}
# Volcano (volcano-sh/volcano tag v1.15.1, 2026-07-30, commit 0a56ed33; ../shared/reference/crds/volcano/ is from it).
# Its documented repository, volcano-sh.github.io/helm-charts, is index.yaml on volcano-sh/helm-charts' `main` branch,
# rewritten by volcano's release job (.github/workflows/release_chart.yaml at v1.15.1: `cr upload` the chart as the
# release asset volcano-<version>.tgz of release `volcano-<version>` in volcano-sh/helm-charts, then `cr index --push`
# to main). Helm is given that release asset: it trusts the project not to replace the asset of a published release.
# The newest helm-charts data we could read is main be34e957760341901089759761cfba58cfb798c2 (2026-06-01, snapshot of
# 2026-06-14): it lists volcano 1.15.0 (digest 2dd37565917a9b9929385ab4d1f6561cb04d104a993285dab266df1d6644bb3b, url
# .../releases/download/volcano-1.15.0/volcano-1.15.0.tgz), not 1.15.1, which was tagged after it. So the URL below is
# the release job's naming for 1.15.1, not read from an index, and no digest is recorded (tests/unit/test_chart_pins.py
# names the reason). The v1.15.0 -> v1.15.1 diff of installer/helm/chart/volcano is Chart.yaml versions and the image
# tag only, and config/crd/volcano/bases is unchanged (git diff v1.15.0 v1.15.1, volcano-sh/volcano).
_VOLCANO_INDEX_AT_COMMIT = "https://raw.githubusercontent.com/volcano-sh/helm-charts/be34e957760341901089759761cfba58cfb798c2"
VOLCANO = HelmChart(
    name="volcano",
    repo=_VOLCANO_INDEX_AT_COMMIT,
    version="1.15.1",
    app_version="v1.15.1",
    archive="https://github.com/volcano-sh/helm-charts/releases/download/volcano-1.15.1/volcano-1.15.1.tgz",
    # CRDs: templates/ read crd/bases with .Files, so Helm upgrades them with the release.
    crds=CRDS_TEMPLATES,
    crd_dirs=(CrdDir("crd/bases"),),
)
# KEDA (kedacore/charts tag v2.20.2). kedacore.github.io/charts is GitHub Pages of docs/ on kedacore/charts' `main`
# branch (CONTRIBUTING.md: `helm package keda --destination docs`, then `helm repo index ... --merge docs/index.yaml`).
# The archive is docs/keda-2.20.2.tgz at the commit that added it, cbb9bb8ce0809dc9048f72302f7c09765d66ed56 ("prepare
# v2.20.2 release (#895)", 2026-07-31, = tag v2.20.2); the digest is docs/index.yaml's entry keda 2.20.2 at that commit,
# unchanged at main 1444d00d90d7668cf7f53f270777d039371d90d0 (2026-08-13), and that file hashes to it (git show
# <commit>:docs/keda-2.20.2.tgz | sha256sum, read 2026-12-04). ../shared/reference/charts/keda-2.20.2.tgz is a
# `helm package` of the tag, not this file.
_KEDA_AT_COMMIT = "https://raw.githubusercontent.com/kedacore/charts/cbb9bb8ce0809dc9048f72302f7c09765d66ed56/docs"
KEDA = HelmChart(
    name="keda",
    repo=_KEDA_AT_COMMIT,
    version="2.20.2",
    app_version="2.20.2",
    archive=f"{_KEDA_AT_COMMIT}/keda-2.20.2.tgz",
    digest="db60b1fa60f0565fefa4ce2f87e855b6a8854363ee82962fbe28a12a70d64c4c",
    # CRDs: templates/crds/ behind crds.install, upgraded by Helm with the release.
    crds=CRDS_TEMPLATES,
    crd_dirs=(CrdDir("templates/crds", "crds.install"),),
)

# Observability (gpufleet:observability, components/observability/). kube-prometheus-stack from
# prometheus-community/helm-charts tag kube-prometheus-stack-88.5.3 (commit ea930baeebeba39f56d6b44e351f23b2a072a600,
# 2026-08-21): Chart.yaml appVersion v0.93.1 (prometheus-operator), kubeVersion >=1.25.0-0; its values.yaml and the
# prometheus-operator CRDs are ../shared/reference/kube-prometheus-stack/ and crds/prometheus-operator/.
# prometheus-community.github.io/helm-charts is index.yaml on the gh-pages branch of prometheus-community/helm-charts,
# rewritten by chart-releaser on every chart release; its entries point at GitHub release assets
# (github.com/prometheus-community/helm-charts/releases/download/<chart>-<version>/<chart>-<version>.tgz). Helm is given
# that release asset (it trusts the project not to replace the asset of a published release), and the digest is the
# entry of gh-pages commit 0163faed668ae1e60386bb90f489c91ab13b612b (index `generated` 2026-09-04T03:28:15Z, read
# 2026-12-04 from the stored copy of that file; the fetched snapshot, gh-pages 93ff5780 of 2026-08-22, lacks the
# index.yaml blob). The same for the two exporters below. ../shared/reference/charts/kube-prometheus-stack-88.5.3.tgz
# is a `helm package` of the tag, not the release asset.
_PROMETHEUS_COMMUNITY_INDEX_AT_COMMIT = (
    "https://raw.githubusercontent.com/prometheus-community/helm-charts/0163faed668ae1e60386bb90f489c91ab13b612b"
)
_PROMETHEUS_COMMUNITY_RELEASES = "https://github.com/prometheus-community/helm-charts/releases/download"
KUBE_PROMETHEUS_STACK = HelmChart(
    name="kube-prometheus-stack",
    repo=_PROMETHEUS_COMMUNITY_INDEX_AT_COMMIT,
    version="88.5.3",
    app_version="v0.93.1",
    # index entry created 2026-08-21T06:21:19Z
    archive=f"{_PROMETHEUS_COMMUNITY_RELEASES}/kube-prometheus-stack-88.5.3/kube-prometheus-stack-88.5.3.tgz",
    digest="3bff576f57c88f9fcac3286cc6e0d22ddaf7d7e1829c14a09257359f02ca64c9",
    # CRDs: the vendored `crds` subchart's crds/ (condition crds.enabled, default true), never upgraded by Helm: applied
    # by gpufleet. The chart's own crds.upgradeJob is "in preview, off by default" (values.yaml at 88.5.3).
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("charts/crds/crds", "crds.enabled"),),
)
# With metrics.backend amp (no kube-prometheus-stack), the two exporters it would bring, standalone: the very chart
# versions kube-prometheus-stack 88.5.3 depends on (its Chart.yaml `dependencies`,
# ../shared/reference/kube-prometheus-stack/Chart-88.5.3.yaml). prometheus-community/helm-charts tags
# kube-state-metrics-8.4.0 (commit 1982f1c5828920f5d4ea5d04956169e81f8c5129; Chart.yaml appVersion 2.20.0) and
# prometheus-node-exporter-4.56.1 (commit 8b8e639cac80a3001412f187060068978f649a55; appVersion 1.12.1).
KUBE_STATE_METRICS = HelmChart(
    name="kube-state-metrics",
    repo=_PROMETHEUS_COMMUNITY_INDEX_AT_COMMIT,
    version="8.4.0",
    app_version="2.20.0",
    # index entry created 2026-08-18T14:46:47Z (gh-pages 0163faed, as above)
    archive=f"{_PROMETHEUS_COMMUNITY_RELEASES}/kube-state-metrics-8.4.0/kube-state-metrics-8.4.0.tgz",
    digest="74cc198067993744791e92ee280d8f255a0bbd43c86d765814402c455d478680",
)
PROMETHEUS_NODE_EXPORTER = HelmChart(
    name="prometheus-node-exporter",
    repo=_PROMETHEUS_COMMUNITY_INDEX_AT_COMMIT,
    version="4.56.1",
    app_version="1.12.1",
    # index entry created 2026-07-14T17:12:37Z (gh-pages 0163faed, as above)
    archive=f"{_PROMETHEUS_COMMUNITY_RELEASES}/prometheus-node-exporter-4.56.1/prometheus-node-exporter-4.56.1.tgz",
    digest="70fab291e00a34c58fd943bb075fecc2e2e73fa95db1bcbbe7cdfe008795354a",
)
# The DCGM exporter release whose counter list and Grafana dashboard gpufleet's alerts and dashboards are checked
# against (NVIDIA/dcgm-exporter tag 4.5.3-4.8.2, ../shared/reference/dcgm-exporter/). The GPU Operator runs its own
# exporter build (v26.7.0: 4.6.0-4.8.3-distroless); the counter names are the DCGM field names, stable across both.
DCGM_EXPORTER_REFERENCE = "4.5.3-4.8.2"

# node-problem-detector (k3s node health, components/k3s/node_health.py): kubernetes/node-problem-detector release
# tag v1.36.0 (commit 19d58b0eded3a60a999ad0ffa8d69deed0bc94d0, 2026-07-11; version.txt "v1.36.0"; v1.37.0-alpha.1 is
# a pre-release). The release process (docs/release_process.md at the tag) promotes the image built from the tag to
# registry.k8s.io/node-problem-detector/node-problem-detector:<tag>. Upstream's own deployment/node-problem-detector.yaml
# at that tag still names v0.8.19 (not bumped since). The promotion to registry.k8s.io is kubernetes/k8s.io pull
# request 9707, "Promote node-problem-detector v1.34.4, v1.35.3, v1.36.0" (merged 2026-07-11; staging digest of
# v1.36.0 sha256:b4db5a168c5f6192c3fb3d650920d192d83776598fcdfcc092d16ca8dc9213ff); the promoter file copy in our
# code index (registry.k8s.io/images/k8s-staging-npd/images.yaml) predates it and ends at v0.8.20.
NODE_PROBLEM_DETECTOR_IMAGE = "registry.k8s.io/node-problem-detector/node-problem-detector:v1.36.0"

# NVIDIA Network Operator (RDMA on k3s pools). NGC publishes the chart as v<Chart.yaml version>. The
# NicClusterPolicy's components (RDMA shared device plugin, Multus, CNI plugins, NV-IPAM, SR-IOV device
# plugin) use the images the release ships, tagged `network-operator-<app_version>`.
NETWORK_OPERATOR = HelmChart(
    name="network-operator",
    repo="https://helm.ngc.nvidia.com/nvidia",
    version="v26.4.1",
    app_version="v26.4.1",
    # CRDs: crds/ and the subcharts' crds/ (Chart.yaml 26.4.1 conditions nfd.enabled, sriovNetworkOperator.enabled,
    # maintenanceOperator.enabled; values.yaml defaults true, false, false), never upgraded by Helm: applied by gpufleet.
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("crds"), CrdDir("charts/node-feature-discovery/crds", "nfd.enabled"),
              CrdDir("charts/sriov-network-operator/crds", "sriovNetworkOperator.enabled", False),
              CrdDir("charts/maintenance-operator-chart/crds", "maintenanceOperator.enabled", False)),
)
NETWORK_OPERATOR_IMAGE_REPOSITORY = "nvcr.io/nvidia/mellanox"
# The DOCA driver container (NicClusterPolicy `ofedDriver`) the pinned Network Operator release's own sample policy
# names (../shared/reference/network-operator/nicclusterpolicy_cr-v26.4.1.yaml: doca-driver doca3.4.1-26.04-1.1.0.0-1).
# AKS InfiniBand pools run it: AKS node images ship no MLNX_OFED/DOCA driver (Azure/aks-rdma-infiniband
# configs/nicclusterpolicy/base/nic.yaml @700dabb4 deploys the same container).
NETWORK_OPERATOR_DOCA_DRIVER = "doca3.4.1-26.04-1.1.0.0-1"
# The nvidia-peermem reloader of AKS InfiniBand pools with AKS's own driver (components/aks/peermem_reloader.py) runs
# the node's modprobe through `chroot /host`, as NVIDIA's k8s-driver-manager itself does (internal/linuxutils/kmod.go
# @v0.12.0: exec.Command("chroot", root, "modprobe", module)), in the driver manager's own image: the one the pinned
# GPU Operator's bundle names, by digest in catalog/images.yaml (release-bundle tier). Its only Dockerfile at the tag,
# deployments/container/Dockerfile.distroless (tag v0.12.0 = bd62ca7d), copies a static busybox with every applet
# (`busybox --install -s /busybox`, Debian's busybox-static, whose applets include chroot, sh and sleep) onto
# nvcr.io/nvidia/distroless/cc and puts /busybox on PATH; built for amd64 and arm64 (.github/workflows/image.yaml).
# So nothing is installed at run time, unlike the guide's ubuntu:24.04 with `apt install kmod` (docs/security.md).
AKS_PEERMEM_RELOADER_IMAGE = "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0"


def network_operator_component_tag() -> str:
    """Image tag of the NicClusterPolicy components shipped with the pinned Network Operator."""
    return f"network-operator-{NETWORK_OPERATOR.app_version}"


# NFS CSI driver (k3s RWX storage), kubernetes-csi/csi-driver-nfs: chart 4.13.4 / app 4.13.4 (tag v4.13.4 =
# f09798c0, 2026-07-01; the newest line in charts/index.yaml at master d3b27c00, 2026-08-22). The project's repository
# is charts/index.yaml on its master branch, whose entries point at master too, and 4.13.4's archive was replaced in
# place there (815ac441... at 21aaa66c, 2026-07-02; 3b923d98... at eb052a9a, 2026-08-15, "fix: propagate
# volumeSnapshotClass annotations in chart v4.13.4"): the chart is taken from the commit of the file reviewed,
# eb052a9a6723a6eb217ff1141944717d8da6d276, whose sha256 is the charts/index.yaml digest at master d3b27c00 and
# ../shared/reference/charts/csi-driver-nfs-4.13.4.tgz's (SOURCES.md). Was 4.12.1 (7c4b727e) until issue 49.
_CSI_NFS_AT_COMMIT = "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/eb052a9a6723a6eb217ff1141944717d8da6d276"
CSI_DRIVER_NFS = HelmChart(
    name="csi-driver-nfs",
    repo=f"{_CSI_NFS_AT_COMMIT}/charts",
    version="4.13.4",
    app_version="4.13.4",
    archive=f"{_CSI_NFS_AT_COMMIT}/charts/v4.13.4/csi-driver-nfs-4.13.4.tgz",
    digest="3b923d981776f37b19808a3ad790d88517ff437ffce6fa1b97e3a10bb5f771a6",
)

# Image of the NCCL all-reduce check (examples/nccl-allreduce-rdma.yaml, generated by gpufleet/app/verify/nccl/allreduce.py):
# NGC PyTorch ships NCCL with its IB/RoCE transport; CUDA 12.8, runs on the 570+ drivers the catalog pins.
# The example file is generated output (a test keeps it equal to this pin).
NCCL_TEST_IMAGE_REPOSITORY = "nvcr.io/nvidia/pytorch"
NCCL_TEST_IMAGE_TAG = "25.01-py3"


def nccl_test_image() -> str:
    return f"{NCCL_TEST_IMAGE_REPOSITORY}:{NCCL_TEST_IMAGE_TAG}"


# Image of the NCCL all-reduce check on EKS EFA pools (gpufleet/app/verify/nccl/allreduce.py efa_manifests): the AWS Deep Learning
# Containers PyTorch training GPU image for EC2. It must carry libfabric's EFA provider and the aws-ofi-nccl plugin,
# which NGC PyTorch does not. Sources, aws/deep-learning-containers:
# - docs/src/data/pytorch-training/2.10-gpu-ec2.yml (main @e0ecedea, read 2026-12-03): tag
#   "2.10.0-gpu-py313-cu130-ubuntu22.04-ec2", public_registry: true, GA 2026-01-21, end of patching 2027-01-21;
#   docs/src/utils.py build_public_ecr_uri: public.ecr.aws/deep-learning-containers/<repository>:<tag>, and
#   docs/get_started/index.md: every DLC image is on ECR Public and pulls without AWS credentials. The public URI is
#   used so the reference does not depend on the stack's region (the private copies live in a per-region account,
#   docs/reference/region_availability.md; 763104351884 in us-east-1).
# - release tag v2.4-pt-ec2-2.10.0-tr-py313 (70d4a81d): pytorch/training/docker/2.10/py3/cu130/Dockerfile.gpu builds
#   FROM base:13.0.2-gpu-py313-cu130-ubuntu22.04-ec2, whose base/x86_64/gpu/cu130/ubuntu22.04/py313/Dockerfile runs
#   scripts/install_efa.sh 1.47.0: the EFA installer (libfabric with the efa provider, Open MPI) and a check that
#   the aws-ofi-nccl plugin /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so exists; LD_LIBRARY_PATH holds that directory.
# CUDA 13.0.2 needs driver >= 580.95.05 (gpufleet/base/catalog/drivers.yaml); the al2023-nvidia and bottlerocket-nvidia
# AMIs ship R580 (aws_instances.yaml amis). DLC re-publishes security patches under the same tag.
EFA_NCCL_TEST_IMAGE_REPOSITORY = "public.ecr.aws/deep-learning-containers/pytorch-training"
EFA_NCCL_TEST_IMAGE_TAG = "2.10.0-gpu-py313-cu130-ubuntu22.04-ec2"
# The image's CUDA toolkit (base Dockerfile ARGs CUDA_MAJOR/MINOR/PATCH 13/0/2 at the release tag above): checked
# against the EKS GPU AMIs' drivers (tests/unit/test_nccl_efa.py).
EFA_NCCL_TEST_IMAGE_CUDA = "13.0.2"


def efa_nccl_test_image() -> str:
    return f"{EFA_NCCL_TEST_IMAGE_REPOSITORY}:{EFA_NCCL_TEST_IMAGE_TAG}"


# Image of `gpufleet verify`'s DCGM diagnostics Job (and of its scheduling probe pod): the standalone DCGM image
# the pinned GPU Operator chart names (gpu-operator values.yaml v26.7.0, `dcgm.repository/image/version`,
# ../shared/reference/gpu-operator/values-v26.7.0.yaml line 290-292); it ships `dcgmi`.
DCGM_IMAGE = "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"


# --- AWS EKS (issue 3) ---------------------------------------------------------------------------
# Kubernetes minor versions gpufleet plans EKS clusters for (each has EKS-optimized AMIs below).
# Support status and the per-cluster-hour price of each: gpufleet/base/catalog/kubernetes.yaml
# (catalog.eks_kubernetes_version). 1.32 is in EKS extended support and is what awslabs/ai-on-eks
# infra/base/terraform/variables.tf (line 15, `eks_cluster_version` default) deploys.
EKS_KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")

# EKS-optimized AMIs are chosen by AMI type and release, never by AMI id: AMI type -> (the node group's `amiType`,
# the SSM parameter holding the release version for a Kubernetes minor version). AL2023 node groups run the pinned
# release of EKS_AL2023_RELEASE_PINS (below; a bump is a reviewed change), not the SSM `recommended` parameter, whose
# value moves with every AMI release and would roll the nodes (and their NVIDIA driver branch) at the next unrelated
# `pulumi up` (issue 50). Bottlerocket node groups read the release version of their pinned release
# (BOTTLEROCKET_RELEASE_PINS) from that release's own SSM parameter, `{release}` below, whose value does not move: the
# parameters are per variant and architecture, "if you know a specific Bottlerocket version you'd like to use, for
# example `1.11.0`, you can replace `latest` with that version" (bottlerocket-os/bottlerocket QUICKSTART-EKS.md,
# "Finding an AMI", at 91632ff5), and `image_version` holds the "1.N.P-<commit>" EKS wants as the node group's
# releaseVersion (the same page's `get-parameters` example reads `.../latest/image_version`). Paths:
# docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html and
# bottlerocket.dev/en/os/latest/#/install/quickstart/aws/ (SSM parameters).
EKS_AMIS: dict[str, tuple[str, str]] = {
    "al2023-nvidia": (
        "AL2023_x86_64_NVIDIA",
        "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/nvidia/recommended/release_version",
    ),
    "bottlerocket-nvidia": (
        "BOTTLEROCKET_x86_64_NVIDIA",
        "/aws/service/bottlerocket/aws-k8s-{k8s}-nvidia/x86_64/{release}/image_version",
    ),
    # CPU nodes (system pool).
    "al2023-standard": (
        "AL2023_x86_64_STANDARD",
        "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/standard/recommended/release_version",
    ),
}


# Arm (Graviton, Grace) instance types (catalog `arch: arm64`): the arm64 variant of the AMI. AL2023 only: the EKS user
# guide recommends the AL2023 ARM NVIDIA variant for P6e-GB200 (ml-eks-nvidia-ultraserver.html); amiType
# AL2023_ARM_64_NVIDIA is in the EKS API's AMITypes (CreateNodegroup); the SSM path is retrieve-ami-id.html's with arm64.
EKS_ARM_AMIS: dict[str, tuple[str, str]] = {
    "al2023-nvidia": (
        "AL2023_ARM_64_NVIDIA",
        "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/arm64/nvidia/recommended/release_version",
    ),
}


def eks_ami(ami: str, kubernetes_version: str, arch: str = "amd64", release: str = "latest") -> tuple[str, str]:
    """(node group amiType, SSM parameter path of the release version) for an AMI, a Kubernetes minor and the
    instances' CPU architecture (KeyError: no arm64 variant recorded); a Bottlerocket path names `release` (an OS
    version "1.N.P", or "latest")."""
    ami_type, path = (EKS_ARM_AMIS if arch == "arm64" else EKS_AMIS)[ami]
    return ami_type, path.format(k8s=kubernetes_version, release=release)


@dataclass(frozen=True)
class EksAmiRelease:
    """One release of the EKS-optimized AL2023 AMIs for one Kubernetes minor, with the NVIDIA driver its accelerated
    (nvidia) variants ship. The same release version names the standard and nvidia variants, x86_64 and arm64."""

    release: str
    """The managed node group's `releaseVersion` ("<Kubernetes patch>-<YYYYMMDD>", EKS API UpdateNodegroupVersion)."""
    date: str
    """The release date (ISO), the `vYYYYMMDD` of the release's tag."""
    driver: str = field(metadata={"fact": True})
    """The NVIDIA driver (kmod-nvidia-latest-dkms) of the AL2023_x86_64_NVIDIA and AL2023_ARM_64_NVIDIA AMIs. A fact
    of the release, not a gpufleet pin: other tables name the same driver for their own reasons (a GPU's minimum
    driver, a stack's operator driver), so tests/unit/test_versions_single_source.py does not count it as a pin."""

    @property
    def tag(self) -> str:
        """The release's tag, also the version of Karpenter's pinned AMI alias (`al2023@vYYYYMMDD`)."""
        return "v" + self.date.replace("-", "")

    @property
    def driver_branch(self) -> int:
        return int(self.driver.split(".", 1)[0])

    @property
    def minor(self) -> str:
        return ".".join(self.release.split(".")[:2])

    @property
    def known_defect(self) -> bool:
        """The release's own notes name a defect hitting this minor (EKS_AL2023_KNOWN_DEFECTS): never record it."""
        return self.minor in EKS_AL2023_KNOWN_DEFECTS.get(self.tag, ())


# EKS-optimized AL2023 AMI releases gpufleet knows, per Kubernetes minor. Source of every row: awslabs/amazon-eks-ami
# CHANGELOG.md at 81fec2e8 (main, 2026-07-23; the tag v20260724 points at it and its newest entry is v20260714):
# "AMI Release vYYYYMMDD", section "Kubernetes 1.N": the "Release version" cell and the kmod-nvidia-latest-dkms row of
# the AL2023_x86_64_NVIDIA column (the AL2023_ARM_64_NVIDIA column names the same driver, built .el9). The rows mark
# where the driver branch moved for a minor: 1.33 went 570 -> 575 (v20250715, PR #2274) -> 570 (v20250920) -> 580
# (v20251112), the 580 default backported per minor under awslabs/amazon-eks-ami#2470 (PRs #2484 #2496 #2503 #2509).
# That is why a pool's AMI release is pinned and its bump reviewed: a new release may move the driver branch, which
# decides the CUDA versions the nodes run. 1.36 first ships in v20260610. Read 2026-12-05.
# Newer releases are published. The GitHub release pages https://github.com/awslabs/amazon-eks-ami/releases/tag/<tag> of
# v20260728, v20260810, v20260818, v20260903, v20261003, v20261012, v20261023, v20261031, v20261112 and v20261119 were
# read (their "Full Changelog" links name v20260724, v20260801, v20260827, v20260930, v20261019 and v20261107 between
# them), but the only copies that could be read here hold each page's first part: the header, the Source AMI table and
# the release version of the newest minor only (1.36.2-20260728, 1.36.2-20260810, 1.36.2-20260818, 1.36.3-20260903;
# from v20261003 on the newest minor is 1.37, which gpufleet does not plan for: 1.37.1-20261023, 1.37.1-20261031,
# 1.37.1-20261119). Neither the release versions of 1.32-1.35 nor any package table (the kmod-nvidia-latest-dkms row)
# of those pages could be read, and the repository's snapshot stops at 81fec2e8, so none of them is recorded: a row
# without its driver could not show a driver-branch move in the review, the reason releases are pinned at all.
# Add them from the pages' "Kubernetes 1.N" sections to bump, skipping EKS_AL2023_KNOWN_DEFECTS.
EKS_AL2023_RELEASES: dict[str, EksAmiRelease] = {r.release: r for r in (
    EksAmiRelease("1.32.13-20260714", "2026-07-14", "580.159.03"),
    EksAmiRelease("1.32.13-20260505", "2026-05-05", "580.126.09"),
    EksAmiRelease("1.32.9-20260116", "2026-01-16", "580.105.08"),
    EksAmiRelease("1.33.13-20260714", "2026-07-14", "580.159.03"),
    EksAmiRelease("1.33.11-20260505", "2026-05-05", "580.126.09"),
    EksAmiRelease("1.33.5-20260116", "2026-01-16", "580.105.08"),
    EksAmiRelease("1.33.5-20251112", "2025-11-12", "580.95.05"),
    EksAmiRelease("1.33.5-20251023", "2025-10-23", "570.195.03"),
    EksAmiRelease("1.33.5-20250920", "2025-09-20", "570.172.08"),
    EksAmiRelease("1.33.0-20250715", "2025-07-15", "575.57.08"),
    EksAmiRelease("1.34.9-20260714", "2026-07-14", "580.159.03"),
    EksAmiRelease("1.34.7-20260505", "2026-05-05", "580.126.09"),
    EksAmiRelease("1.34.2-20260116", "2026-01-16", "580.105.08"),
    EksAmiRelease("1.34.1-20251112", "2025-11-12", "580.95.05"),
    EksAmiRelease("1.34.1-20251016", "2025-10-16", "570.195.03"),
    EksAmiRelease("1.35.6-20260714", "2026-07-14", "580.159.03"),
    EksAmiRelease("1.35.4-20260505", "2026-05-05", "580.126.09"),
    EksAmiRelease("1.35.0-20260116", "2026-01-16", "580.105.08"),
    EksAmiRelease("1.36.2-20260714", "2026-07-14", "580.159.03"),
    EksAmiRelease("1.36.1-20260610", "2026-06-10", "580.159.03"),
)}

# The AL2023 AMI release every EKS node group (standard and nvidia) and Karpenter GPU pool runs, per Kubernetes minor:
# the newest release of EKS_AL2023_RELEASES (v20260714 for every minor: nothing newer could be recorded, see above, so the
# plan's age warning stays until a bump). A pool may name another known release of its minor (nodePools[*].amiRelease).
# Bump here: the review shows each pool's nodes replaced, rolling, with the old and new driver
# (gpufleet/base/platforms/eks/review.py).
EKS_AL2023_RELEASE_PINS: dict[str, str] = {
    "1.32": "1.32.13-20260714",
    "1.33": "1.33.13-20260714",
    "1.34": "1.34.9-20260714",
    "1.35": "1.35.6-20260714",
    "1.36": "1.36.2-20260714",
}


# AL2023 AMI releases with a defect their own release notes name, per affected Kubernetes minor: never record or pin one
# for those minors (tests/unit/test_eks_ami_releases.py holds the table to that). v20261003's page: "This release
# contains kernel 6.12.110 in Amazon Linux 2023 AMIs which might cause kernel panic on certain instances for kubernetes
# versions 1.31 to 1.35. See #2845" (https://github.com/awslabs/amazon-eks-ami/releases/tag/v20261003). v20261012's
# page: its kernel 6.12.111-136.204 "fixes a kernel panic during memory reclaim (#2845) that caused nodes to
# unexpectedly reboot on releases v20260930 and v20261003" (https://github.com/awslabs/amazon-eks-ami/releases/tag/
# v20261012), so the first release a bump of 1.32-1.35 may take is v20261012. The minors are v20261003's (v20260930's
# page was not read); 1.36 and 1.37 run kernel 6.18 (the pages' Source AMI tables: al2023-ami-minimal-...-kernel-6.18).
EKS_AL2023_KNOWN_DEFECTS: dict[str, tuple[str, ...]] = {
    "v20260930": ("1.31", "1.32", "1.33", "1.34", "1.35"),
    "v20261003": ("1.31", "1.32", "1.33", "1.34", "1.35"),
}


def eks_al2023_release(kubernetes_version: str, override: Optional[str] = None) -> EksAmiRelease:
    """The AL2023 AMI release a pool on a Kubernetes minor runs: `override` (a pool's amiRelease) or the minor's pin
    (KeyError: not a known release)."""
    return EKS_AL2023_RELEASES[override or EKS_AL2023_RELEASE_PINS[kubernetes_version]]


def eks_al2023_releases(kubernetes_version: str) -> list[str]:
    """The known releases of a Kubernetes minor, newest first (what a pool's amiRelease may name)."""
    rows = [r for r in EKS_AL2023_RELEASES.values() if r.minor == kubernetes_version]
    return [r.release for r in sorted(rows, key=lambda r: r.date, reverse=True)]


@dataclass(frozen=True)
class BottlerocketRelease:
    """One Bottlerocket OS release with the NVIDIA driver each of its aws-k8s-<minor>-nvidia variants ships. One version
    names every variant (all Kubernetes minors, x86_64 and arm64); the driver may differ per minor."""

    version: str
    """The OS version "1.N.P": Karpenter's pinned alias is `bottlerocket@v1.N.P` (EC2NodeClass CRD, amiSelectorTerms)."""
    date: str
    """The release date (ISO): the day the release's tracking issue in bottlerocket-os/bottlerocket says "has been
    released" (the GitHub release page shows no date in the copies read)."""
    drivers: tuple[tuple[str, str], ...] = field(metadata={"fact": True})
    """(Kubernetes minor, NVIDIA driver) of each aws-k8s-<minor>-nvidia variant of a minor gpufleet plans for: facts of
    the release (bottlerocket.dev "GPU Driver Versions"), not gpufleet pins."""

    @property
    def tag(self) -> str:
        return "v" + self.version

    def driver(self, minor: str) -> Optional[str]:
        """The NVIDIA driver of the release's aws-k8s-<minor>-nvidia variant (None: no such variant recorded)."""
        return dict(self.drivers).get(minor)


def _same(driver: str, *minors: str) -> tuple[tuple[str, str], ...]:
    return tuple((m, driver) for m in minors)


# Bottlerocket OS releases gpufleet knows, for the aws-k8s-<minor>-nvidia variants of the minors it plans for. Per row:
# the drivers from bottlerocket.dev's "GPU Driver Versions" page of the release
# (https://bottlerocket.dev/en/os/<1.N>.x/version-information/gpu-drivers/<1.N.P>/, the table "Variant | Kernel Version |
# NVIDIA Driver Version", built from the release's kmod package and variant definitions by the site's
# layouts/shortcodes/nvidia-versions.html), and the date from the release's tracking issue in
# bottlerocket-os/bottlerocket ("Bottlerocket 1.N.P has been released!"). Read 2026-12-05. The rows mark where the
# driver branch moved per minor: 1.32 and 1.33 ran R570 (1.48.0; 1.33 had run 580.65.06 in 1.47.0 and went back to R570
# in 1.48.0, bottlerocket.dev 1.47.0 and 1.48.0 pages) and moved to R580 in 1.53.0 (1.52.0 still includes
# kmod-6.1/6.12-nvidia-r570-tesla in both variants: the site's data/variants/1.52.x), the release that put every k8s
# variant on R580 (bottlerocket-kernel-kit#254, "All Bottlerocket AMIs are on 580"; kernel-kit v5.0.0, 2026-02-19,
# removed the EOL r570 driver); 1.34 shipped R580 from its first variant (1.47.0); 1.35 first ships in 1.53.0, 1.36
# in 1.62.0 at the latest (the first release whose page was read with a 1.36 variant). 1.65.0's date is its
# CHANGELOG.md heading "# v1.65.0 (2026-09-03)" in the merged release PR (bottlerocket-os/bottlerocket#4928, "Prepare the
# 1.65.0 release"; its tracking issue's "released" comment was not read). Newer releases are published (1.68.0 ships
# 580.178.04 on 1.32-1.36 and adds 1.37 with 580 and 595 selectable at boot, bottlerocket.dev 1.68.0 page; 1.66.0's
# tracking issue #4947 says it "passed validation" on 2026-09-22), but no release date of 1.66.0 to 1.68.0 could be read
# here, so they are not recorded: a row without its date cannot be judged for age. Add them, with the date, to bump.
BOTTLEROCKET_RELEASES: dict[str, BottlerocketRelease] = {r.version: r for r in (
    # gpu-drivers/1.65.0/; CHANGELOG v1.65.0 (2026-09-03), #4928.
    BottlerocketRelease("1.65.0", "2026-09-03", _same("580.178.04", "1.32", "1.33", "1.34", "1.35", "1.36")),
    # gpu-drivers/1.62.0/; released 2026-06-04 (bottlerocket-os/bottlerocket#4849).
    BottlerocketRelease("1.62.0", "2026-06-04", _same("580.159.03", "1.32", "1.33", "1.34", "1.35", "1.36")),
    # gpu-drivers/1.57.0/ (the site's data/nvidia/1.57.0 kmod-6.1/6.12-nvidia-r580: 580.126.09, and
    # data/variants/1.57.x: aws-k8s-1.29..1.35-nvidia, bottlerocket-project-website 6102096); released 2026-03-25 (#4790).
    BottlerocketRelease("1.57.0", "2026-03-25", _same("580.126.09", "1.32", "1.33", "1.34", "1.35")),
    # gpu-drivers/1.53.0/; released 2026-01-20 (#4741).
    BottlerocketRelease("1.53.0", "2026-01-20", _same("580.95.05", "1.32", "1.33", "1.34", "1.35")),
    # gpu-drivers/1.48.0/; released 2025-10-01 (#4648).
    BottlerocketRelease("1.48.0", "2025-10-01", (("1.32", "570.172.08"), ("1.33", "570.172.08"), ("1.34", "580.65.06"))),
)}

# The Bottlerocket release every Bottlerocket pool runs, per Kubernetes minor: the newest dated release of
# BOTTLEROCKET_RELEASES with a variant for the minor (1.65.0 for every minor). A pool may name another known release
# (nodePools[*].amiRelease). Bump here: the review shows each pool's nodes replaced, rolling, with the old and new
# driver. Karpenter pools select the alias `bottlerocket@v1.N.P`; managed node groups take their releaseVersion from the
# release's own SSM parameter (EKS_AMIS), since EKS wants a Bottlerocket releaseVersion as "1.N.P-<commit>" (a bare
# "1.N.P" is refused: InvalidParameterException "Requested release version 1.34.0 is not valid for kubernetes version
# 1.32", while "1.34.0-18d04e52" is accepted, cloudposse/terraform-aws-eks-node-group#209; "1.47.0-6154605b" in
# aws-controllers-k8s/community#2644) and no source gpufleet could read states these releases' commits: the parameter
# of a fixed version names the release's commit and does not move, so the release is pinned all the same.
BOTTLEROCKET_RELEASE_PINS: dict[str, str] = {
    "1.32": "1.65.0",
    "1.33": "1.65.0",
    "1.34": "1.65.0",
    "1.35": "1.65.0",
    "1.36": "1.65.0",
}


def bottlerocket_releases(kubernetes_version: str) -> list[str]:
    """The known Bottlerocket releases with a variant for a Kubernetes minor, newest first (what amiRelease may name)."""
    rows = [r for r in BOTTLEROCKET_RELEASES.values() if r.driver(kubernetes_version)]
    return [r.version for r in sorted(rows, key=lambda r: r.date, reverse=True)]


@dataclass(frozen=True)
class NodeImage:
    """The AMI release a pool runs, as the plan, the review and the age warning see it (either family)."""

    family: str
    """"EKS AL2023 AMI" or "Bottlerocket"."""
    release: str
    """AL2023: the node group's releaseVersion; Bottlerocket: the OS version."""
    tag: str
    """The version of Karpenter's alias: `al2023@<tag>`, `bottlerocket@<tag>`."""
    date: str
    driver: str = field(metadata={"fact": True})

    @property
    def driver_branch(self) -> int:
        return int(self.driver.split(".", 1)[0])


def node_image_pins(ami: str) -> dict[str, str]:
    """The pin table of an AMI family (the key of nodePools[*].ami): minor -> release."""
    return BOTTLEROCKET_RELEASE_PINS if ami.startswith("bottlerocket") else EKS_AL2023_RELEASE_PINS


def node_image_releases(ami: str, kubernetes_version: str) -> list[str]:
    """The known releases of an AMI family for a minor, newest first."""
    return (bottlerocket_releases if ami.startswith("bottlerocket") else eks_al2023_releases)(kubernetes_version)


def node_image(ami: str, kubernetes_version: str, override: Optional[str] = None) -> NodeImage:
    """The release a pool of AMI family `ami` on a Kubernetes minor runs: `override` (its amiRelease) or the minor's pin
    (KeyError: not a known release of that family and minor)."""
    if ami.startswith("bottlerocket"):
        r = BOTTLEROCKET_RELEASES[override or BOTTLEROCKET_RELEASE_PINS[kubernetes_version]]
        driver = r.driver(kubernetes_version)
        if driver is None:
            raise KeyError(f"Bottlerocket {r.version} has no aws-k8s-{kubernetes_version}-nvidia variant recorded")
        return NodeImage("Bottlerocket", r.version, r.tag, r.date, driver)
    a = eks_al2023_release(kubernetes_version, override)
    return NodeImage("EKS AL2023 AMI", a.release, a.tag, a.date, a.driver)


# Cluster autoscaler chart (kubernetes/autoscaler, tag cluster-autoscaler-chart-9.59.0 = 5a0b98e4, 2026-07-21, the newest
# chart; its cluster-autoscaler/charts/cluster-autoscaler/Chart.yaml says appVersion 1.35.0). The app's minor must match
# the cluster's (kubernetes/autoscaler README "Releases"), so the image tag is set per Kubernetes minor from
# CLUSTER_AUTOSCALER_IMAGES below. kubernetes.github.io/autoscaler is index.yaml on the gh-pages branch of
# kubernetes/autoscaler (chart-releaser), whose entries point at GitHub release assets: Helm is given the asset of
# release cluster-autoscaler-chart-9.59.0 (it trusts the project not to replace the asset of a published release).
# Digest: that index's entry cluster-autoscaler 9.59.0 at gh-pages be36214bc8a1bf19000bbc7aa480952a3f5cf9f7 (2026-07-26,
# read 2026-12-04). ../shared/reference/charts/cluster-autoscaler-9.59.0.tgz is a `helm package` of the tag (sha256
# ced8419d...), not the release asset (SOURCES.md). Was 9.52.1 (appVersion 1.34.1) until issue 49.
_AUTOSCALER_INDEX_AT_COMMIT = "https://raw.githubusercontent.com/kubernetes/autoscaler/be36214bc8a1bf19000bbc7aa480952a3f5cf9f7"
CLUSTER_AUTOSCALER = HelmChart(
    name="cluster-autoscaler",
    repo=_AUTOSCALER_INDEX_AT_COMMIT,
    version="9.59.0",
    app_version="v1.35.0",
    archive="https://github.com/kubernetes/autoscaler/releases/download/cluster-autoscaler-chart-9.59.0/cluster-autoscaler-9.59.0.tgz",
    digest="90276dafe65cf5d4328ef8313baf6cfb9d130683e0c9f3c28a03b4d8a9ed8f6e",
)
# The image per Kubernetes minor. kubernetes/autoscaler cluster-autoscaler/README.md "Releases" (master b6e1991f,
# 2025-10-31): the CA minor must match the cluster's ("versioning scheme was changed to match Kubernetes minor releases
# exactly"), and "we recommend that users always use the _latest_ Cluster Autoscaler release that corresponds to the
# minor version of Kubernetes that their cluster is running"; fixes are backported to n-3 release branches. So each tag
# is the newest cluster-autoscaler-<minor>.<patch> tag of kubernetes/autoscaler (snapshot of 2026-08-22, read
# 2026-12-04), tagged commit and date beside it. Registry: kubernetes/k8s.io#9676 (merged 2026-07-03) promoted v1.36.0,
# v1.35.1, v1.34.4 and v1.33.5 to registry.k8s.io; for the 2026-07-22 patches and v1.32.6/v1.32.7 no promotion PR
# could be read here (the k8s.io snapshot is too large to fetch), so their presence in registry.k8s.io is not checked.
CLUSTER_AUTOSCALER_IMAGES: dict[str, str] = {
    # 1.32 is past the n-3 backport window (newest minor 1.36): its newest tag is v1.32.7 (f645beb1, 2026-02-13).
    "1.32": "v1.32.7",
    "1.33": "v1.33.6",  # be4b5a18, 2026-07-22
    "1.34": "v1.34.5",  # cb2123ed, 2026-07-22
    "1.35": "v1.35.2",  # 2d425888, 2026-07-22
    "1.36": "v1.36.1",  # 35e8a280, 2026-07-22 (../shared/reference/SOURCES.md)
}

# aws-efa-k8s-device-plugin from aws/eks-charts (values checked against
# ../shared/reference/aws/efa-k8s-device-plugin-values-v0.5.30.yaml). aws.github.io/eks-charts is the gh-pages branch
# of aws/eks-charts, which holds the archives themselves and an index.yaml rewritten on every publish. The archive is
# the file at the gh-pages commit that added it, efd1867e103bcffad70ac23987cf64e594fd665b ("Publish stable charts
# v0.0.241", 2026-07-29); the digest is its index.yaml entry aws-efa-k8s-device-plugin v0.5.30, unchanged at gh-pages
# c7f9ea56017831aa11ea7e81112f8cd6cc0fd2db (2026-08-03), and that file hashes to it (read 2026-12-04).
# ../shared/reference/charts/aws-efa-k8s-device-plugin-v0.5.30.tgz is a `helm package` of master at bfe91c4b9257, not this file.
_EKS_CHARTS_AT_COMMIT = "https://raw.githubusercontent.com/aws/eks-charts/efd1867e103bcffad70ac23987cf64e594fd665b"
EFA_DEVICE_PLUGIN = HelmChart(
    name="aws-efa-k8s-device-plugin",
    repo=_EKS_CHARTS_AT_COMMIT,
    version="v0.5.30",
    app_version="v0.5.20",
    archive=f"{_EKS_CHARTS_AT_COMMIT}/aws-efa-k8s-device-plugin-v0.5.30.tgz",
    digest="43b3d666f81a40b7f7ac88ee04a64954abaaa061b1e5f54dc7ce4beb3374e32a",
)

# EKS managed add-ons gpufleet installs. Their versions are resolved per Kubernetes version by the
# `aws.eks.get_addon_version` data source (the default build EKS publishes for that version) unless
# pinned here: a pin wins, so set one to freeze an add-on.
EKS_ADDONS: dict[str, str | None] = {
    "aws-ebs-csi-driver": None,
    "aws-fsx-csi-driver": None,
    "eks-pod-identity-agent": None,  # Karpenter's controller role with identity pod-identity
    # Node health for managed node auto repair (gpufleet:observability.nodeHealth): aws/eks-node-monitoring-agent,
    # chart/app 1.7.0 at tag v1.7.0 (../shared/reference/aws/eks-node-monitoring-agent/). Resolved per Kubernetes
    # version by EKS unless pinned here.
    "eks-node-monitoring-agent": None,
}

# EKS add-ons EKS itself installs on every cluster gpufleet creates (bootstrapSelfManagedAddons left at its default,
# true: the self-managed vpc-cni, coredns and kube-proxy). Neither EKS nor gpufleet updates them when the control plane
# moves to a new minor ("Amazon EKS doesn't automatically update an add-on when new versions are released or after you
# update your cluster to a new Kubernetes minor version", EKS User Guide, "Update an Amazon EKS add-on"), so a minor
# bump lists the version to move each to (gpufleet/app/plan/kube_needs.py). Per add-on and minor: the latest version
# of the Amazon EKS add-on type the EKS User Guide's table lists ("If you're self-managing this add-on, the versions
# in the table might not be the same as the available self-managed versions"). Read 2026-12-05 from the tool
# library's stored copies of the pages (their crawl date is not recorded); the copies disagree with each other (the
# tables are rewritten with every build), so each add-on's rows come from one copy only, the newest found, named
# beside it. A minor that copy does not list is absent: the plan then says to ask `aws eks describe-addon-versions`.
EKS_SELF_MANAGED_ADDONS: dict[str, dict[str, str]] = {
    # docs.aws.amazon.com/ja_jp/eks/latest/userguide/managing-kube-proxy.md, "kube-proxy versions" (rows 1.31-1.36).
    "kube-proxy": {
        "1.32": "v1.32.13-eksbuild.16",
        "1.33": "v1.33.10-eksbuild.13",
        "1.34": "v1.34.6-eksbuild.13",
        "1.35": "v1.35.3-eksbuild.13",
        "1.36": "v1.36.0-eksbuild.14",
    },
    # docs.amazonaws.cn/en_us/eks/latest/userguide/managing-coredns.md, "CoreDNS versions": the stored excerpt ends after
    # the 1.34 row (1.32, 1.33 not read; no 1.36 row in any copy found).
    "coredns": {
        "1.34": "v1.13.2-eksbuild.7",
        "1.35": "v1.14.2-eksbuild.4",
    },
    # docs.aws.amazon.com/ko_kr/eks/latest/userguide/managing-vpc-cni.html, "Amazon VPC CNI versions" (rows 1.27-1.33,
    # one version for all of them; no copy found lists 1.34-1.36).
    "vpc-cni": {
        "1.32": "v1.20.1-eksbuild.3",
        "1.33": "v1.20.1-eksbuild.3",
    },
}

# GKE: Kubernetes minor versions gpufleet plans for (the cluster's minimum master version; the release
# channel picks the patch). Keep in step with the GKE release notes' supported minors.
# 1.32-1.34 are past GKE standard support (Extended channel only; a plan warns), 1.35/1.36 are in it:
# gpufleet/base/catalog/kubernetes.yaml (catalog.gke_kubernetes_version).
GKE_KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")

# AKS: Kubernetes minor versions gpufleet plans for (an alias minor version: AKS picks the latest GA patch,
# supported-kubernetes-versions.md "Alias minor version"). 1.33 and 1.34 are past community support on 2026-12-04
# and run only with LTS (Premium tier); gpufleet/base/catalog/kubernetes.yaml `aks` has the calendar.
AKS_KUBERNETES_VERSIONS = ("1.33", "1.34", "1.35", "1.36")

# GKE GPUDirect: the NCCL plugin installer (and what it needs) per GPUDirect kind, pinned to the
# GoogleCloudPlatform/container-engine-accelerators commits cluster-toolkit's gke-node-pool pins
# (modules/compute/gke-node-pool/gpu_direct.tf): TCPX NCCL plugin v3.1.9 (rxdm v2.0.12). TCPXO: the manifest at
# bd4a7491 installs NCCL plugin v1.0.14 (nccl-plugin-gpudirecttcpx-dev:v1.0.14), which gpudirect-tcpxo/README.md
# ("Nov 19, 2025") pairs with the TCPXO daemon (rxdm) tcpgpudmarxd-dev:v1.0.20 and NCCL 2.28. RDMA (A3 Ultra H200, A4 B200): gIB NCCL plugin v1.0.6, the installer at commit
# 2c776f7e (Google's docs apply it from master; gpufleet pins the commit so a re-run installs the same plugin).
_GKE_ACCELERATORS_RAW = "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators"
GKE_GPUDIRECT_MANIFESTS: dict[str, dict[str, str]] = {
    "TCPX": {
        "nccl-installer": f"{_GKE_ACCELERATORS_RAW}/fee883360a660f71ba07478db95d5c1325322f77/gpudirect-tcpx/nccl-tcpx-installer.yaml",
        "nccl-config": f"{_GKE_ACCELERATORS_RAW}/fee883360a660f71ba07478db95d5c1325322f77/gpudirect-tcpx/nccl-config.yaml",
        "nri-device-injector": f"{_GKE_ACCELERATORS_RAW}/fee883360a660f71ba07478db95d5c1325322f77/nri_device_injector/nri-device-injector.yaml",
    },
    "TCPXO": {
        "nccl-installer": f"{_GKE_ACCELERATORS_RAW}/bd4a7491672b48dfec28f3679b679a614f6cbbc7/gpudirect-tcpxo/nccl-tcpxo-installer.yaml",
        "nri-device-injector": f"{_GKE_ACCELERATORS_RAW}/bd4a7491672b48dfec28f3679b679a614f6cbbc7/nri_device_injector/nri-device-injector.yaml",
    },
    "RDMA": {
        "nccl-installer": f"{_GKE_ACCELERATORS_RAW}/2c776f7e9656a2b6476f19938b738b4186000ce3/gpudirect-rdma/nccl-rdma-installer.yaml",
    },
    # A4X (issue 49): the arm64 gIB plugin (nccl-plugin-gib-arm64:v1.0.4) on nvidia-gb200 arm64 nodes, the last commit
    # that changed the manifest (503e4b7b); the x86 installer above selects H200 and B200 nodes only
    # (gcp_machines.yaml gke_a4x_gib). Both are the DaemonSet kube-system/nccl-rdma-installer, so a stack runs one of
    # them (gpufleet/base/spec/platforms/gke.py refuses RDMA pools of both).
    "RDMA-a4x": {
        "nccl-installer": f"{_GKE_ACCELERATORS_RAW}/503e4b7bd381a5a18acfc17b6f4fc5343f35380d/gpudirect-rdma/nccl-rdma-installer-a4x.yaml",
    },
}

# GKE DRA pools (nodePools[*].allocation: dra with cluster.gke.gpuStack: gke): GKE's driver installation is disabled on
# them (GKE "Prepare GKE infrastructure for DRA workloads", set-up-dra: "Automatic GPU driver installation isn't
# supported with DRA"), so gpufleet applies Google's COS driver-installer DaemonSet, as Google's DRA tutorial does
# (GoogleCloudPlatform/ai-on-gke, tutorials/dynamic-resource-allocation/gpu-fungibility: daemonset-preloaded.yaml).
# Both manifests create kube-system/nvidia-driver-installer and run only on GPU nodes without GKE's driver label
# (cloud.google.com/gke-gpu-driver-version DoesNotExist); the A4X one only on a4x-highgpu-4g(-nolssd) and installs
# `--version=latest` without the partition-gpus init container. Pinned at the last commits that changed them
# (f2cf4197, 2025-07-02; 2dd8fc9b, 2025-03-06) instead of master, so a re-run applies the same installer.
GKE_COS_DRIVER_INSTALLERS: dict[str, str] = {
    "default": f"{_GKE_ACCELERATORS_RAW}/f2cf4197a5c3f0f20133be15d5fad8b7453beed5/nvidia-driver-installer/cos/daemonset-preloaded.yaml",
    "a4x": f"{_GKE_ACCELERATORS_RAW}/2dd8fc9b04257ff3010b4c9112fa559f1a8f19a7/nvidia-driver-installer/cos/daemonset-preloaded-latest-a4x.yaml",
}
# Machine types the A4X installer selects (its nodeAffinity on node.kubernetes.io/instance-type).
GKE_A4X_DRIVER_INSTALLER_MACHINES = ("a4x-highgpu-4g", "a4x-highgpu-4g-nolssd")

# Images of `gpufleet verify`'s NCCL all-reduce on GKE GPUDirect pools (gpufleet/app/verify/nccl/gke.py): per kind the NCCL
# test image (the NCCL plugin, Open MPI, sshd and nccl-tests) and the receive-datapath manager (rxdm) sidecar, the
# pair Google's own two-pod NCCL test runs at the same container-engine-accelerators commits as the installers above:
# - TCPX @fee88336 gpudirect-tcpx/nccl-test-latest.yaml: nccl-plugin-gpudirecttcpx-dev:v3.1.9, tcpgpudmarxd-dev:v2.0.12
#   (the same pair cluster-toolkit @1047080375af examples/gke-a3-highgpu/nccl-test.yaml runs);
# - TCPXO @bd4a7491 gpudirect-tcpxo/nccl-test-latest.yaml: nccl-plugin-gpudirecttcpx-dev:v1.0.14,
#   tcpgpudmarxd-dev:v1.0.20 (README.md "Nov 19, 2025" release).
# - RDMA (gIB) @2c776f7e gpudirect-rdma/nccl-test.yaml: nccl-plugin-gib-diagnostic:v1.0.6 (no rxdm), the image
#   cluster-toolkit @c5eb7824 examples/gke-a3-ultragpu/nccl-jobset-example.yaml runs its self-driving test with.
# A NCCL test image must match the installer's plugin version (gpudirect-tcpxo/README.md: "pods running within the
# same workload need to use the same version of the NCCL plugin"): move these with GKE_GPUDIRECT_MANIFESTS.
_GCE_AI_INFRA = "us-docker.pkg.dev/gce-ai-infra"
GKE_GPUDIRECT_TEST_IMAGES: dict[str, dict[str, str]] = {
    "TCPX": {
        "nccl-test": f"{_GCE_AI_INFRA}/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",
        "rxdm": f"{_GCE_AI_INFRA}/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12",
    },
    "TCPXO": {
        "nccl-test": f"{_GCE_AI_INFRA}/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14",
        "rxdm": f"{_GCE_AI_INFRA}/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.20",
    },
    "RDMA": {
        "nccl-test": f"{_GCE_AI_INFRA}/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.0.6",
    },
}

# Karpenter (aws/karpenter-provider-aws, chart `karpenter` at tag v1.14.1: ../shared/reference/karpenter/
# Chart-v1.14.1.yaml and values-v1.14.1.yaml). Compatibility (v1.14 docs, upgrading/compatibility.md): K8s 1.33 needs
# >= 1.5, 1.34 >= 1.6, 1.35 >= 1.9, so one pin covers EKS_KUBERNETES_VERSIONS. Its CRDs (karpenter.sh/v1 NodePool,
# karpenter.k8s.aws/v1 EC2NodeClass) ship in the chart's crds/ and are the ones in ../shared/reference/crds/karpenter/.
KARPENTER = HelmChart(
    name="karpenter",
    repo="oci://public.ecr.aws/karpenter",
    version="1.14.1",
    app_version="1.14.1",
    # CRDs: crds/ (NodePool, NodeClaim, EC2NodeClass, NodeOverlay, CapacityBuffer), never upgraded by Helm: applied by
    # gpufleet from this archive (Karpenter's upgrade guide offers the karpenter-crd chart for the same purpose:
    # karpenter.sh/docs/upgrading/upgrade-guide, "CRD Upgrades"; one archive keeps one pin).
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("crds"),),
)
# NVIDIA's DRA driver for GPUs (kubernetes-sigs/dra-driver-nvidia-gpu, moved from NVIDIA/k8s-dra-driver-gpu), tag
# v0.4.1 (764900e7, 2026-06-30; newest release): chart deployments/helm/dra-driver-nvidia-gpu, version and appVersion
# 0.4.1, kubeVersion >=1.32.0-0 (../shared/reference/dra-driver-nvidia-gpu/Chart-v0.4.1.yaml), pushed by
# hack/build-and-publish-chart.sh to oci://registry.k8s.io/dra-driver-nvidia/charts (docs/install.md installs it from
# there). ../shared/reference/charts/dra-driver-nvidia-gpu-0.4.1.tgz is that packaging (sha256 23ca81a6... in its
# SOURCES.md); no registry digest was read, so none is recorded. Facts of the release: catalog/dra.yaml.
DRA_DRIVER_NVIDIA_GPU = HelmChart(
    name="dra-driver-nvidia-gpu",
    repo="oci://registry.k8s.io/dra-driver-nvidia/charts",
    version="0.4.1",
    app_version="0.4.1",
    # CRDs: crds/ (ComputeDomain, ComputeDomainClique), applied by gpufleet; where the GPU Operator runs, its release's
    # copies are the ones applied (docs/dra.md "Who owns the ComputeDomain CRDs").
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("crds"),),
)

# EC2NodeClass amiSelectorTerms alias per gpufleet GPU AMI: Karpenter picks the NVIDIA variant of the family for GPU
# instance types itself. The EC2NodeClass CRD (../shared/reference/crds/karpenter/karpenter.k8s.aws_ec2nodeclasses.yaml,
# `amiSelectorTerms[].alias`): "family@version", the version "pinned to a specific AMI release, with that AMIs version
# format (ex: "al2023@v20240625" or "bottlerocket@v1.10.0")", or "latest", which "will result in drift when a new AMI
# is released. This is **not** recommended for production environments." Both families are pinned: AL2023 pools to the
# release of EKS_AL2023_RELEASE_PINS (`al2023@vYYYYMMDD`), Bottlerocket pools to the release of
# BOTTLEROCKET_RELEASE_PINS (`bottlerocket@v1.N.P`), or to a pool's own amiRelease of the same table. (Until issue 50's
# last item Bottlerocket followed `latest`: the bottlerocket-os/bottlerocket snapshot gpufleet's sources hold stops at
# v1.26.1, before any aws-k8s-1.32..1.36 variant; bottlerocket.dev's per-release "GPU Driver Versions" pages and the
# releases' tracking issues supply the version, date and driver, see BOTTLEROCKET_RELEASES.)
KARPENTER_AMI_ALIASES: dict[str, str] = {
    "al2023-nvidia": "al2023@{tag}",
    "bottlerocket-nvidia": "bottlerocket@{tag}",
}


def karpenter_ami_alias(ami: str, kubernetes_version: str, override: Optional[str] = None) -> str:
    """The EC2NodeClass alias of a pool's AMI at the pinned release of the minor (or the pool's amiRelease)."""
    return KARPENTER_AMI_ALIASES[ami].format(tag=node_image(ami, kubernetes_version, override).tag)


# Cold start (components/cold_start/, docs/cold-start.md).
# The pre-pull DaemonSet copies a static busybox into a shared emptyDir, then runs `busybox true` from it in one init
# container per listed image, so the kubelet pulls each image without needing a shell inside it (the same trick as
# che-incubator/kubernetes-image-puller); a pause container holds the pod. The musl variant's busybox is a static binary.
# By tag, not digest: no registry was reachable to read their digests (2026-12-04), and none is recorded unread.
PREPULL_BUSYBOX_IMAGE = "docker.io/library/busybox:1.37.0-musl"
PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
# The model cache prefetch Job's image per source scheme: the cloud's own CLI (AWS CLI v2 `aws s3 sync`, Google Cloud
# CLI `gcloud storage rsync`), and for Hugging Face a Python image into which an init container, without the cache's
# credentials, installs huggingface_hub and its dependencies hash-locked (its `snapshot_download` resumes and skips
# files already present).
MODEL_PREFETCH_IMAGES = {
    "s3": "docker.io/amazon/aws-cli:2.27.63",
    "gs": "docker.io/google/cloud-sdk:530.0.0-alpine",
    "hf": "docker.io/library/python:3.12-slim",
}
# What the hf:// prefetch installs, exactly: `pip install --require-hashes --no-deps --only-binary=:all:` of these
# wheels, so a re-published or unpinned dependency cannot run beside the token. huggingface_hub 0.34.4's Requires-Dist
# (its wheel's METADATA) and requests' own dependencies, at the versions pip resolved for CPython 3.12 (the image's
# Python) on 2026-12-04; the sha256 of each wheel file as PyPI served it (`pip download`, which checks the index's
# sha256 of every file it fetches, then `sha256sum`). Pure-Python wheels where one exists (charset_normalizer too);
# PyYAML has none, so both its manylinux x86_64 and aarch64 cp312 wheels are listed. hf-xet (Requires-Dist on x86_64
# and arm64) is left out: huggingface_hub 0.34.4 downloads over HTTP without it (file_download.py: "Falling back to
# regular HTTP download" when is_xet_available() is false).
HUGGINGFACE_HUB_REQUIREMENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("huggingface_hub==0.34.4", ("9b365d781739c93ff90c359844221beef048403f1bc1f1c123c191257c3c890a",)),
    ("filelock==4.3.2", ("02a8801bc6b2a80921bf3d7895c63084d53bae2a3c86783adce5ae2b89a1825b",)),
    ("fsspec==2026.9.0", ("8dd6e646e99ea382bd85f97a45e6b526a442d79423a7dc673f1e2756d05fcb5f",)),
    ("packaging==26.4", ("81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2",)),
    ("pyyaml==6.0.4", ("93bfb2459195406a518e2f487a9bbf01df240175f31e06f5a252ac6734c7bbf0",    # cp312 manylinux x86_64
                       "45e37dd647db9d67b757444c74060c064ace5fdaa08f42bf4fda3812275d423e")),  # cp312 manylinux aarch64
    ("requests==2.34.2", ("2a0d60c172f83ac6ab31e4554906c0f3b3588d37b5cb939b1c061f4907e278e0",)),
    ("tqdm==4.70.1", ("c293e525e6fef9c20e8728fd4612df02a0aa31bb5fe91ecd93e123b1b7bffa73",)),
    ("typing_extensions==4.16.0", ("481caa481374e813c1b176ada14e97f1f67a4539ce9cfeb3f350d78d6370c2e8",)),
    ("charset_normalizer==3.5.3", ("96e268b0cbda016ac519513294fcd17032264085b600abaac58b93049477e132",)),  # py3-none-any
    ("idna==3.20", ("ab7ae7122974553370f0bdb919e1a960b2cd1bc1ef0276416d896db81c14582c",)),
    ("urllib3==2.8.0", ("0cf3cae568d36aa9576b28dfb35f11328f1cb974ca7647d9475ebb86c75ac6e3",)),
    ("certifi==2026.10.19.post1", ("1324c476b4811eff41a8bc2122cd0bbd4d9c7234c725446d99ab1612b3a7fdd2",)),
)


def huggingface_hub_requirements() -> str:
    """HUGGINGFACE_HUB_REQUIREMENTS as a pip requirements file (`name==version --hash=sha256:...`, one per line)."""
    return "".join(f"{req} " + " ".join(f"--hash=sha256:{h}" for h in hashes) + "\n"
                   for req, hashes in HUGGINGFACE_HUB_REQUIREMENTS)


# Inference serving (components/serving/, docs/inference.md). Versions that must agree are checked together
# (the GKE platform's `inference_extension_releases`, gpufleet/base/platforms/gke/scheduling.py).
# LeaderWorkerSet (kubernetes-sigs/lws) tag v0.10.0 (2161f38f): chart charts/lws, pushed by hack/push-chart.sh to
# oci://registry.k8s.io/lws/charts with the promoted image registry.k8s.io/lws/lws:v0.10.0; the CRDs ship in its crds/
# (../shared/reference/charts/SOURCES.md: sha256 ebb63d03...; no registry digest read, so none recorded).
LWS = HelmChart(
    name="lws",
    repo="oci://registry.k8s.io/lws/charts",
    version="v0.10.0",
    app_version="v0.10.0",
    # CRDs: crds/ (LeaderWorkerSet, DisaggregatedSet*), never upgraded by Helm: applied by gpufleet.
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("crds"),),
)
# Gateway API standard channel, v1.6.1 (kubernetes-sigs/gateway-api, 8bb74df0): the release asset standard-install.yaml
# holds every CRD of config/crd/standard and the safe-upgrades ValidatingAdmissionPolicy (../shared/reference/crds/
# SOURCES.md). No chart ships the standard channel, so it is applied as a manifest.
GATEWAY_API = "v1.6.1"
GATEWAY_API_STANDARD_INSTALL = (
    f"https://github.com/kubernetes-sigs/gateway-api/releases/download/{GATEWAY_API}/standard-install.yaml")
# Gateway API Inference Extension v1.5.0 (df9f8909, 2026-04-18): the API gpufleet installs and routes by
# (InferencePool inference.networking.k8s.io/v1). GKE installs its CRDs itself from 1.34.0-gke.1626000; elsewhere
# gpufleet applies INFERENCE_EXTENSION_INSTALL. v1.5.0 is the release every other pin here was built against: agentgateway
# 1.4.1's and llm-d-router v0.10.0's go.mod both require sigs.k8s.io/gateway-api-inference-extension v1.5.0. (v1.6.0,
# 2026-08-10, changed InferencePool only in its bundle-version annotation and in no longer requiring
# endpointPickerRef: ../shared/reference/crds/SOURCES.md.)
INFERENCE_EXTENSION = "v1.5.0"
# The endpoint picker (EPP) and the InferencePool of each model server: llm-d's router chart `llm-d-router-gateway`
# v0.10.0 (llm-d/llm-d-router tag v0.10.0, 71f4f099, 2026-08-17), the successor of the Inference Extension's
# `inferencepool` chart, which ends at v1.5.0 (v1.6.0 removed config/charts and moved the EPP to llm-d/llm-d-router).
# Published by hack/push-chart.sh to oci://ghcr.io/llm-d/charts (HELM_CHART_REPO = IMAGE_REGISTRY/charts) with the EPP
# image ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0. Why this and not inferencepool v1.5.0 (docs/inference.md,
# "The endpoint picker"): it is maintained, its EPP carries llm-d's prefill/decode scheduling (the disagg profile
# handler and deciders, pkg/epp/framework/plugins/scheduling/profilehandler/disagg at the tag), and it renders the same
# InferencePool v1 from the same Inference Extension v1.5.0 (go.mod), so the CRDs and the gateways stay as they are.
# The EPP image is exactly the chart's: ../shared/reference/charts/llm-d-router-gateway-v0.10.0.tgz values.yaml
# `router.epp.image` = ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0, IfNotPresent (the routerlib subchart's
# default, `main` with Always, is what the release edit overrides); gpufleet passes no tag of its own. No source in
# ../shared/reference/digests.yaml gives a digest for it, so it runs by tag (tests/upstream/test_serving_examples.py
# test_the_picker_runs_the_image_its_chart_pins).
ENDPOINT_PICKER = HelmChart(
    name="llm-d-router-gateway",
    repo="oci://ghcr.io/llm-d/charts",
    version="v0.10.0",
    app_version="v0.10.0",
)
ENDPOINT_PICKER_INFERENCE_EXTENSION = "v1.5.0"
# The decode pods' routing sidecar of prefill/decode disaggregation, from the same llm-d-router release as the picker
# (Makefile at v0.10.0: SIDECAR_IMAGE = ghcr.io/llm-d/llm-d-router-disagg-sidecar:<tag>, built from Dockerfile.sidecar
# by .github/workflows/ci-build-images.yaml `build-sidecar` with the release tag, as the EPP image is).
DISAGG_SIDECAR_IMAGE = f"ghcr.io/llm-d/llm-d-router-disagg-sidecar:{ENDPOINT_PICKER.version}"
# The Inference Extension's own CRDs on the platforms whose gateway gpufleet installs (GKE installs them itself): the
# release asset manifests.yaml = `kustomize build config/crd` at the tag (Makefile target `artifacts` at v1.5.0:
# InferencePool inference.networking.k8s.io/v1, InferenceObjective, InferenceModelRewrite, InferencePoolImport; the
# same four files as ../shared/reference/crds/gateway-api-inference-extension/), what the extension's getting-started
# guide applies ("Install the Inference Extension CRDs", site-src/guides/index.md at v1.5.0).
INFERENCE_EXTENSION_INSTALL = (
    "https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/"
    f"{INFERENCE_EXTENSION}/manifests.yaml")
# agentgateway v1.4.1 (agentgateway/agentgateway 163ea214, 2026-07-29): the serving gateway that implements the
# Inference Extension on EKS, k3s, AKS and existing clusters (docs/inference.md, "Which gateway"). Two charts of one
# release, published to oci://cr.agentgateway.dev/charts (controller/Makefile release-charts; the extension's guide
# installs them from there): `agentgateway-crds` (its agentgateway.dev CRDs, as templates) and `agentgateway` (the
# control plane, image cr.agentgateway.dev/controller:v1.4.1; InferencePool routing behind `inferenceExtension.enabled`).
# go.mod at the tag: sigs.k8s.io/gateway-api v1.6.1 (= GATEWAY_API) and sigs.k8s.io/gateway-api-inference-extension
# v1.5.0 (= INFERENCE_EXTENSION): the releases it routes for.
AGENTGATEWAY_CRDS = HelmChart(
    name="agentgateway-crds",
    repo="oci://cr.agentgateway.dev/charts",
    version="1.4.1",
    app_version="1.4.1",
)
AGENTGATEWAY = HelmChart(
    name="agentgateway",
    repo="oci://cr.agentgateway.dev/charts",
    version="1.4.1",
    app_version="1.4.1",
)
AGENTGATEWAY_GATEWAY_API = "v1.6.1"
AGENTGATEWAY_INFERENCE_EXTENSION = "v1.5.0"
# Envoy Gateway v1.9.0 (envoyproxy/gateway 39763b1c): chart charts/gateway-helm, published as
# oci://docker.io/envoyproxy/gateway-helm 1.9.0 (tools/make/helm.mk), image docker.io/envoyproxy/gateway:v1.9.0. Its
# `crds` subchart bundles the Envoy Gateway CRDs and the Gateway API v1.6.1 *experimental* CRDs (go.mod at the tag:
# sigs.k8s.io/gateway-api v1.6.1).
ENVOY_GATEWAY = HelmChart(
    name="gateway-helm",
    repo="oci://docker.io/envoyproxy",
    version="1.9.0",
    app_version="v1.9.0",
    # CRDs: the `crds` subchart's crds/ (condition crds.enabled, default true) holds Envoy Gateway's own CRDs
    # (generated/, gateway.envoyproxy.io) and gatewayapi-crds.yaml, the Gateway API experimental bundle. gpufleet applies
    # generated/; the Gateway API is gpufleet's own standard-channel ConfigFile (GATEWAY_API_STANDARD_INSTALL,
    # components/serving/gateway.py), so the experimental bundle is left out: applying it too would make two owners of
    # each standard CRD. With the release skipping crds/, the experimental-only kinds (TCPRoute, UDPRoute, TLSRoute,
    # XListenerSet, ...) are no longer installed on a new cluster: Envoy Gateway probes each optional Gateway API CRD at
    # start and leaves out the watches it cannot satisfy (internal/provider/kubernetes/controller.go at v1.9.0,
    # tcpRouteCRDExists ...), and gpufleet routes by HTTPRoute only. No CRD-upgrade hook.
    crds=CRDS_APPLY,
    crd_dirs=(CrdDir("charts/crds/crds/generated", "crds.enabled"),),
    crds_left=("charts/crds/crds/gatewayapi-crds.yaml",),
)
# Argo CD v3.4.4 (argo-helm chart argo-cd 10.1.1, af0a9310; ../shared/reference/crds/SOURCES.md): the release whose
# CRDs (Application, ApplicationSet, AppProject, all argoproj.io/v1alpha1) `gpufleet export argocd` writes for and is
# checked against. gpufleet does not install Argo CD (EKS's managed capability, or the platform's own install):
# docs/gitops.md.
ARGO_CD = "v3.4.4"
ARGO_CD_API_VERSION = "argoproj.io/v1alpha1"
# The model server image (vLLM's OpenAI-compatible server), vLLM 0.33.0: the newest release on PyPI (the project's
# release list, read 2026-12-05: vllm 0.33.0, 2026-11), published as the image vllm/vllm-openai:v<version>. The metric
# names KEDA and the endpoint picker read are checked against that release's wheel
# (gpufleet/base/spec/features/serving.py EXPORTED_METRICS; tests/unit/test_serving_metrics.py).
VLLM_VERSION = "0.33.0"
VLLM_IMAGE = f"docker.io/vllm/vllm-openai:v{VLLM_VERSION}"
