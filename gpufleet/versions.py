"""Every upstream version gpufleet pins, in one table.

Nothing else in the repository may spell a pinned version (tests/unit/test_versions_single_source.py
enforces it), so Renovate or a human updates exactly one place. Versions that travel together
(a chart and the app it ships) are one value.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HelmChart:
    """A Helm chart pinned together with the application version it ships."""

    name: str
    repo: str
    version: str
    app_version: str


# NVIDIA GPU Operator. Its default driver, supported driver branches and Kubernetes versions are
# facts of the release: gpufleet/catalog/drivers.yaml (`gpu_operator_releases`).
GPU_OPERATOR = HelmChart(
    name="gpu-operator",
    repo="https://helm.ngc.nvidia.com/nvidia",
    version="v26.7.0",
    app_version="v26.7.0",
)

# Kubernetes minor versions gpufleet plans for, and the one a stack gets by default.
# kubernetes-validate ships the OpenAPI schemas we validate every manifest against.
KUBERNETES_DEFAULT = "1.34"

# k3s release per Kubernetes minor version. The install script is fetched from the
# same tag (never the moving get.k3s.io), so the script and the binary agree.
K3S_RELEASES: dict[str, str] = {
    "1.33": "v1.33.5+k3s1",
    "1.34": "v1.34.1+k3s1",
}
K3S_INSTALL_SCRIPT_URL = "https://raw.githubusercontent.com/k3s-io/k3s/{tag}/install.sh"


def k3s_release(kubernetes_version: str) -> str:
    """The pinned k3s release for a Kubernetes minor version (KeyError if unsupported)."""
    return K3S_RELEASES[kubernetes_version]


def k3s_install_script_url(kubernetes_version: str) -> str:
    """The install script at the same tag as the pinned k3s release."""
    return K3S_INSTALL_SCRIPT_URL.format(tag=k3s_release(kubernetes_version))

# Workload layer (gpufleet:addons). Charts from OCI registries have `repo` = the registry path;
# components/helm_chart.py turns that into the `oci://.../<name>` chart reference Helm expects.
# The CRDs in ../shared/reference/crds/ are from the same tags (tests/upstream/test_workload_crds.py
# compares them).
KUEUE = HelmChart(
    name="kueue",
    repo="oci://registry.k8s.io/kueue/charts",
    version="0.19.2",
    app_version="v0.19.2",
)
JOBSET = HelmChart(
    name="jobset",
    repo="oci://registry.k8s.io/jobset/charts",
    version="0.12.0",
    app_version="v0.12.0",
)
# Kubeflow trainer v2 (TrainJob, trainer.kubeflow.org/v1alpha1). Its chart bundles JobSet (value
# `jobset.install`), which we turn off when the JobSet add-on installs it.
KUBEFLOW_TRAINER = HelmChart(
    name="kubeflow-trainer",
    repo="oci://ghcr.io/kubeflow/charts",
    version="2.3.0",
    app_version="v2.3.0",
)
VOLCANO = HelmChart(
    name="volcano",
    repo="https://volcano-sh.github.io/helm-charts",
    version="1.15.1",
    app_version="v1.15.1",
)
KEDA = HelmChart(
    name="keda",
    repo="https://kedacore.github.io/charts",
    version="2.20.2",
    app_version="2.20.2",
)
