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

# GKE: Kubernetes minor versions gpufleet plans for (the cluster's minimum master version; the release
# channel picks the patch). Keep in step with the GKE release notes' supported minors.
GKE_KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34")

# GKE GPUDirect: the NCCL plugin installer (and what it needs) per GPUDirect kind, pinned to the
# GoogleCloudPlatform/container-engine-accelerators commits cluster-toolkit's gke-node-pool pins
# (modules/compute/gke-node-pool/gpu_direct.tf): TCPX NCCL plugin v3.1.9 (rxdm v2.0.12), TCPXO NCCL plugin
# v1.0.8-1 (rxdm v1.0.14). RDMA (A3 Ultra, A4) has no pinned upstream manifest yet: gpufleet does not install it.
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
}
