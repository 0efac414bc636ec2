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


# --- AWS EKS (issue 3) ---------------------------------------------------------------------------
# Kubernetes minor versions gpufleet plans EKS clusters for (each has EKS-optimized AMIs below).
EKS_KUBERNETES_VERSIONS = ("1.33", "1.34", "1.35")

# EKS-optimized GPU AMIs are chosen by SSM parameter, never by AMI id: AMI type -> (the node group's
# `amiType`, the SSM parameter holding the release version for a Kubernetes minor version). The
# release version is read at deploy time and set on the node group, so an AMI update is a visible
# diff. Paths: docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html and
# bottlerocket.dev/en/os/latest/#/install/quickstart/aws/ (SSM parameters).
EKS_AMIS: dict[str, tuple[str, str]] = {
    "al2023-nvidia": (
        "AL2023_x86_64_NVIDIA",
        "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/nvidia/recommended/release_version",
    ),
    "bottlerocket-nvidia": (
        "BOTTLEROCKET_x86_64_NVIDIA",
        "/aws/service/bottlerocket/aws-k8s-{k8s}-nvidia/x86_64/latest/image_version",
    ),
    # CPU nodes (system pool).
    "al2023-standard": (
        "AL2023_x86_64_STANDARD",
        "/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/standard/recommended/release_version",
    ),
}


def eks_ami(ami: str, kubernetes_version: str) -> tuple[str, str]:
    """(node group amiType, SSM parameter path of the release version) for an AMI and a Kubernetes minor."""
    ami_type, path = EKS_AMIS[ami]
    return ami_type, path.format(k8s=kubernetes_version)


# Cluster autoscaler chart (kubernetes/autoscaler, tag cluster-autoscaler-chart-9.52.1). The app's
# minor must match the cluster's (kubernetes/autoscaler README "Releases"), so the image tag is set
# per Kubernetes minor from CLUSTER_AUTOSCALER_IMAGES (tags as kops pins them, kubernetes/kops#17640).
CLUSTER_AUTOSCALER = HelmChart(
    name="cluster-autoscaler",
    repo="https://kubernetes.github.io/autoscaler",
    version="9.52.1",
    app_version="v1.34.0",
)
CLUSTER_AUTOSCALER_IMAGES: dict[str, str] = {
    "1.33": "v1.33.1",
    "1.34": "v1.34.0",
    "1.35": "v1.35.0",
}

# aws-efa-k8s-device-plugin from aws/eks-charts (values checked against
# ../shared/reference/aws/efa-k8s-device-plugin-values-v0.5.30.yaml).
EFA_DEVICE_PLUGIN = HelmChart(
    name="aws-efa-k8s-device-plugin",
    repo="https://aws.github.io/eks-charts",
    version="v0.5.30",
    app_version="v0.5.20",
)

# EKS managed add-ons gpufleet installs. Their versions are resolved per Kubernetes version by the
# `aws.eks.get_addon_version` data source (the default build EKS publishes for that version) unless
# pinned here: a pin wins, so set one to freeze an add-on.
EKS_ADDONS: dict[str, str | None] = {
    "aws-ebs-csi-driver": None,
    "aws-fsx-csi-driver": None,
}
