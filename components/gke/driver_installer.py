"""GkeDriverInstaller: Google's COS NVIDIA driver-installer DaemonSet for GKE DRA pools, on the cluster's provider.

GKE's driver installation is disabled on DRA pools (GKE "Prepare GKE infrastructure for DRA workloads", set-up-dra:
"Automatic GPU driver installation isn't supported with DRA"), so the driver comes from the DaemonSet Google's DRA
tutorial applies (GoogleCloudPlatform/ai-on-gke gpu-fungibility: container-engine-accelerators
nvidia-driver-installer/cos/daemonset-preloaded.yaml), pinned in gpufleet/base/versions.py. It installs into
/home/kubernetes/bin/nvidia, the nvidiaDriverRoot NVIDIA's DRA driver is given on GKE, and runs only on GPU nodes
without GKE's own driver (nodeAffinity: cloud.google.com/gke-gpu-driver-version DoesNotExist), so pools where GKE
installs the driver are left alone. Used with cluster.gke.gpuStack: gke only: with the GPU Operator, the operator
installs the driver (Ubuntu nodes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import versions
from gpufleet.components.cluster_access import ClusterAccess


def installer_kind(machine_types: list[str]) -> set[str]:
    """Which pinned installers DRA pools of these machine types need: `a4x` (A4X: its own manifest) or `default`."""
    return {"a4x" if m in versions.GKE_A4X_DRIVER_INSTALLER_MACHINES else "default" for m in machine_types}


@dataclass(frozen=True)
class GkeDriverInstallerArgs:
    kind: str = "default"
    """Which pinned manifest (versions.GKE_COS_DRIVER_INSTALLERS): `default` or `a4x`; default: `default`. Both create
    kube-system/nvidia-driver-installer, so a cluster has one (the spec refuses DRA pools needing both)."""


class GkeDriverInstaller(pulumi.ComponentResource):
    """`<name>-<kind>`: the pinned manifest, applied by the Kubernetes provider after the node pools exist."""

    def __init__(self, name: str, args: GkeDriverInstallerArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeDriverInstaller", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=access.ready or [])
        self.manifest = k8s.yaml.v2.ConfigFile(f"{name}-{args.kind}", file=versions.GKE_COS_DRIVER_INSTALLERS[args.kind],
                                               opts=child)
        self.register_outputs({"manifest": versions.GKE_COS_DRIVER_INSTALLERS[args.kind]})
