"""The platform interface: what each platform provides GpuCluster, and how GpuCluster finds it.

A platform is a folder, `components/<name>/`, whose `platform.py` defines `PLATFORM`, an instance of a `Platform`
subclass. GpuCluster asks it, at fixed points, for:

1. `build`: the control plane, one component per node pool and the platform's own cloud add-ons (autoscaler, CSI
   drivers, managed Prometheus, ...), returned as a `PlatformBuild` with the `ClusterAccess` everything else uses;
2. its GPU stack choice: whether it wires GPUDirect RDMA over the Network Operator's NICs (`gpu_operator_rdma`).
   Whether the GPU Operator runs and whether AMD's may are facts of the platform's traits, not of its components
   (gpufleet/base/platforms: `addons.own_gpu_stack`, `scheduling.amd_gpus`), so the spec and the plan agree;
3. `addons`: the add-ons that go on the cluster after the GPU operators (k3s: the Network Operator, NFS storage);
4. node health and observability: whether node-problem-detector's GPU condition exists for the alerts
   (`node_problem_detector`), the node-health component (`node_health`) and a managed observability stack that
   needs the workload layer first (`observability_after_workloads`).

Every hook but `build` has a default that adds nothing, so a platform overrides only what it has. GpuCluster never
branches on a platform's name: a new platform is a new folder (docs/platforms.md, with k3s as the worked example).
Platform modules are imported by name, so a stack loads only its own platform's SDK.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Sequence

import pulumi

from gpufleet.base import platforms
from gpufleet.base.spec import NodePoolSpec, StackSpec
from gpufleet.components.cluster_access import ClusterAccess

if TYPE_CHECKING:
    from gpufleet.components.workloads.keda import KedaPodIdentity


@dataclass(frozen=True)
class PlatformInputs:
    spec: StackSpec
    """The validated stack spec."""
    ssh_private_key: Optional[pulumi.Input[str]] = None
    """k3s: SSH private key for the hosts (a secret config value)."""
    etcd_s3_access_key: Optional[pulumi.Input[str]] = None
    """k3s: access key of the etcd snapshot bucket (secret config `gpufleet:etcdS3AccessKey`), when snapshots go to S3."""
    etcd_s3_secret_key: Optional[pulumi.Input[str]] = None
    """k3s: secret key of the etcd snapshot bucket (secret config `gpufleet:etcdS3SecretKey`)."""
    registry_password: Optional[pulumi.Input[str]] = None
    """k3s: the registry mirror's password (secret config `gpufleet:registryPassword`)."""
    kubeconfig: Optional[pulumi.Input[str]] = None
    """existing: the kubeconfig of the cluster gpufleet does not create (secret config `gpufleet:kubeconfig`)."""


@dataclass(frozen=True)
class PlatformBuild:
    control_plane: pulumi.ComponentResource
    access: ClusterAccess
    node_pools: list[pulumi.ComponentResource] = field(default_factory=list)
    install_gpu_operator: Optional[bool] = None
    """Deprecated (0.3), ignored: whether the GPU Operator runs is the platform's trait `addons.own_gpu_stack`
    (gpufleet/base/platforms), which the spec and the plan read too. Goes in 0.4."""
    prometheus_query_url: Optional[pulumi.Input[str]] = None
    """The platform's managed Prometheus query address (amp: the workspace's query endpoint; gke-managed: Managed
    Service for Prometheus's query API), for KEDA's `prometheusServerAddress`; None without one."""
    keda_identity: Optional["KedaPodIdentity"] = None
    """With KEDA on a managed Prometheus: the cloud identity the platform made for KEDA's operator to query it."""

    def __post_init__(self) -> None:
        if self.install_gpu_operator is not None:
            warnings.warn("PlatformBuild.install_gpu_operator is ignored since gpufleet 0.3: declare the platform's "
                          "GPU stack as its AddonTraits.own_gpu_stack (docs/platforms.md)", DeprecationWarning,
                          stacklevel=3)


@dataclass(frozen=True)
class ClusterContext:
    """What a hook after `build` works with: the cluster as GpuCluster has it so far."""

    name: str
    """The GpuCluster's name: children are named `<name>-<role>`."""
    spec: StackSpec
    access: ClusterAccess
    opts: pulumi.ResourceOptions
    """Options for a child of the GpuCluster (its parent is the GpuCluster: a hook's components keep their URNs)."""


class Platform:
    """One platform's answers to GpuCluster. Subclass it in components/<name>/platform.py as `PLATFORM`."""

    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        """The control plane, one component per node pool and the platform's own add-ons, children of `opts.parent`."""
        raise NotImplementedError

    def gpu_operator_rdma(self, nvidia_pools: Sequence[NodePoolSpec]) -> bool:
        """Whether the GPU Operator wires GPUDirect RDMA over the Network Operator's NICs for these pools; default: no
        (a cloud's RDMA, EFA or GPUDirect-TCPX, is wired by its platform in `build`)."""
        return False

    def addons(self, ctx: ClusterContext) -> dict[str, pulumi.ComponentResource]:
        """Add-ons that go on the cluster after the GPU operators, by role (GpuCluster keeps them as `addons`)."""
        return {}

    def node_problem_detector(self, spec: StackSpec) -> bool:
        """Whether `node_health` runs node-problem-detector with the GPU condition the alerts watch; default: no."""
        return False

    def node_health(self, ctx: ClusterContext, observability: Optional[pulumi.ComponentResource]
                    ) -> Optional[pulumi.ComponentResource]:
        """Node health that needs the cluster's observability stack (kube-prometheus-stack, or None); default: none
        (a cloud's node monitoring is part of `build`)."""
        return None

    def observability_after_workloads(self, ctx: ClusterContext, workloads: dict[str, pulumi.ComponentResource]
                                      ) -> Optional[pulumi.ComponentResource]:
        """A managed observability stack that reads the workload layer (its namespaces, its releases to wait for);
        default: none."""
        return None


def platform(name: str) -> Platform:
    """The platform a stack names: `PLATFORM` of the module its traits name (gpufleet.components.<name>.platform for
    the built-in ones), imported only now."""
    return importlib.import_module(platforms.get(name).program.components).PLATFORM
