"""GpuCluster: composes a platform's control plane and GPU pools, then the add-ons. Stays thin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

import pulumi

from gpufleet.components import platform
from gpufleet.base.node_labels import pool_taints
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec import NAMESPACE, SpecError, StackSpec, load_spec
from gpufleet.base.spec.shape import shaped_pools

# Provider config the spec's checks read (the region EKS needs, the project GKE defaults to).
PROVIDER_CONFIG_KEYS = ("aws:region", "gcp:project")


class GpuClusterConfigError(SpecError, pulumi.RunError):
    """Invalid GpuCluster config: every problem, each with its key path, the bad value and what is allowed.
    A SpecError to catch; a pulumi.RunError so `pulumi up` prints the message without a traceback."""


def _nvidia_gpu_pools(spec: StackSpec) -> tuple[str, ...]:
    """The pools whose nodes carry NVIDIA GPUs (node-problem-detector's XID check runs there)."""
    return tuple(p.name for p in shaped_pools(spec) if p.gpu and not is_amd(p))


def _runs_npd(spec: StackSpec) -> bool:
    """k3s with nodeHealth on and NVIDIA GPU pools: the GPU condition exists, so the alert on it is installed."""
    return spec.cluster.platform == "k3s" and spec.observability.node_health.enabled and bool(_nvidia_gpu_pools(spec))


@dataclass(frozen=True)
class GpuClusterArgs:
    spec: StackSpec
    """The validated stack spec (`gpufleet.base.spec.load_spec`, or `GpuClusterArgs.from_config`)."""
    ssh_private_key: Optional[pulumi.Input[str]] = None
    """k3s: SSH private key for the hosts (a secret config value); default: none (eks and gke need none)."""
    etcd_s3_access_key: Optional[pulumi.Input[str]] = None
    """k3s: access key of the etcd snapshot bucket (a secret config value), when snapshots go to S3; default: none."""
    etcd_s3_secret_key: Optional[pulumi.Input[str]] = None
    """k3s: secret key of the etcd snapshot bucket (a secret config value); default: none."""

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        ssh_private_key: Optional[pulumi.Input[str]] = None,
        stack: Optional[str] = None,
        etcd_s3_access_key: Optional[pulumi.Input[str]] = None,
        etcd_s3_secret_key: Optional[pulumi.Input[str]] = None,
    ) -> "GpuClusterArgs":
        """Args from a plain dict in the stack-config shape, without a stack file: the `gpufleet:` keys with or
        without their namespace (`{"cluster": {...}, "nodePools": [...]}`), validated exactly as a stack file is.
        `aws:region` / `gcp:project` come from the dict when given, else from the stack's config. Raises
        GpuClusterConfigError (a SpecError) listing every problem under `stack` (default: the current stack)."""
        stack = stack or pulumi.get_stack()
        full = {key if ":" in key else f"{NAMESPACE}:{key}": value for key, value in config.items()}
        for key in PROVIDER_CONFIG_KEYS:
            namespace, _, name = key.partition(":")
            value = pulumi.Config(namespace).get(name)
            if value is not None and key not in full:
                full[key] = value
        secret_keys = set()
        if ssh_private_key is not None:
            # The key travels as an Input (K3sCluster keeps it secret); the spec only checks that it is given.
            full[f"{NAMESPACE}:sshPrivateKey"] = "[secret]"
            secret_keys.add(f"{NAMESPACE}:sshPrivateKey")
        for name, value in (("etcdS3AccessKey", etcd_s3_access_key), ("etcdS3SecretKey", etcd_s3_secret_key)):
            if value is not None:
                full[f"{NAMESPACE}:{name}"] = "[secret]"
                secret_keys.add(f"{NAMESPACE}:{name}")
        try:
            spec = load_spec(stack, full, secret_keys)
        except SpecError as exc:
            raise GpuClusterConfigError(exc.stack, exc.problems) from None
        return cls(spec, ssh_private_key=ssh_private_key, etcd_s3_access_key=etcd_s3_access_key,
                   etcd_s3_secret_key=etcd_s3_secret_key)


class GpuCluster(pulumi.ComponentResource):
    """A whole GPU cluster from a validated spec: the platform's control plane and GPU pools, then the GPU
    stack, the platform's add-ons and the workload layer on the resulting ClusterAccess (`self.access`).

    No class-level annotations here: gpufleet/app/package.py derives the component package's outputs from them."""

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:index:GpuCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        built = platform.build(
            spec.cluster.platform, name, platform.PlatformInputs(spec, args.ssh_private_key, args.etcd_s3_access_key, args.etcd_s3_secret_key),
            child,
        )
        self.control_plane = built.control_plane
        self.node_pools = built.node_pools
        self.access = built.access

        metrics_backend = spec.observability.backend(spec.cluster.platform)
        self.gpu_operator = self.amd_gpu_operator = None
        # Each vendor's operator serves only its own pools (issue 17): the NVIDIA GPU Operator tolerates only the
        # NVIDIA pools' taints, the AMD GPU Operator's DeviceConfigs select only the AMD pools' nodes.
        amd_pools = [p for p in shaped_pools(spec) if p.gpu and is_amd(p)]
        nvidia_pools = [p for p in shaped_pools(spec) if not (p.gpu and is_amd(p))]
        install_nvidia = spec.gpu_operator.enabled and built.install_gpu_operator and (nvidia_pools or not amd_pools)
        if install_nvidia:
            from gpufleet.components.gpu_stack.operator import GpuOperator, GpuOperatorArgs

            from gpufleet.components.gpu_stack.sharing import GpuSharing, GpuSharingArgs, operator_settings

            taints = [t for pool in nvidia_pools for t in pool_taints(pool)]
            amd_taints = [t for pool in amd_pools for t in pool_taints(pool)]
            # GPUDirect RDMA over the Network Operator's NICs (k3s); cloud RDMA (EFA) is wired by its platform.
            k3s_rdma = spec.cluster.platform == "k3s" and any(p.rdma for p in nvidia_pools)
            # Both backends that scrape the GPU Operator's DCGM exporter get gpufleet's counter list; only
            # kube-prometheus-stack has the ServiceMonitor CRD (amp's collector reads its own scrape configuration).
            extra = dict(operator_settings(nvidia_pools), rdma=k3s_rdma,
                         metrics=metrics_backend in ("kube-prometheus-stack", "amp"),
                         service_monitor=metrics_backend == "kube-prometheus-stack")
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator",
                GpuOperatorArgs(spec.gpu_operator, taints, nfd_extra_taints=amd_taints,
                                cuda_versions=tuple(spec.workloads.cuda_versions), **extra),
                self.access,
                opts=child,
            )
            self.gpu_sharing = None
            if extra.get("device_plugin_config"):
                sharing_args = GpuSharingArgs(nvidia_pools, self.gpu_operator.namespace.metadata["name"])
                self.gpu_sharing = GpuSharing(f"{name}-gpu-sharing", sharing_args, self.access, opts=child)
        if amd_pools and spec.cluster.platform == "k3s":
            from gpufleet.components.gpu_stack.amd_operator import AmdGpuOperator, AmdGpuOperatorArgs

            self.amd_gpu_operator = AmdGpuOperator(
                f"{name}-amd-gpu-operator",
                AmdGpuOperatorArgs(spec.amd_gpu_operator, amd_pools, own_nfd=not install_nvidia,
                                   rocm_versions=tuple(spec.workloads.rocm_versions)),
                self.access,
                opts=child,
            )
        self.network_operator = self.storage = None
        if spec.cluster.platform == "k3s":
            self._k3s_addons(name, spec, child)

        self.observability = None
        if metrics_backend == "kube-prometheus-stack":
            from gpufleet.components.observability.pools import pool_facts
            from gpufleet.components.observability.stack import Observability, ObservabilityArgs

            self.observability = Observability(
                f"{name}-observability",
                ObservabilityArgs(spec.observability, pool_facts(spec), node_problem_detector=_runs_npd(spec)),
                self.access, opts=child,
            )

        self.node_health = None
        if spec.cluster.platform == "k3s" and spec.observability.node_health.enabled:
            self._k3s_node_health(name, spec, child)

        self.metrics_exporters = None
        if metrics_backend == "amp":
            # The AWS managed collector (components/eks/managed_prometheus.py) scrapes what runs in the cluster:
            # kube-state-metrics (the pool and pending-pod alerts) and node-exporter come from us.
            from gpufleet.components.observability.exporters import MetricsExporters, MetricsExportersArgs

            self.metrics_exporters = MetricsExporters(f"{name}-metrics-exporters", MetricsExportersArgs(), self.access, opts=child)

        from gpufleet.components.workloads.layer import build_workloads

        # kube-prometheus-stack: its in-cluster Service. The managed backends (amp, gke-managed): the query API the
        # platform reports, with the cloud identity it made for KEDA's operator; they have no ServiceMonitor CRD.
        prometheus_url = self.observability.prometheus_url if self.observability else built.prometheus_query_url
        managed = metrics_backend in ("amp", "gke-managed")
        self.workloads = build_workloads(
            name, spec, self.access, child, prometheus_url=prometheus_url, service_monitors=not managed,
            keda_identity=built.keda_identity,
        )
        if metrics_backend == "gke-managed":
            self._gke_managed_observability(name, spec, child)

        self.kubeconfig = self.access.kubeconfig
        self.register_outputs({"kubeconfig": self.kubeconfig})

    def _k3s_node_health(self, name: str, spec: StackSpec, child: pulumi.ResourceOptions) -> None:
        """node-problem-detector on every node, with the XID check on the NVIDIA GPU nodes; scraped (PodMonitor)
        when the stack runs kube-prometheus-stack, whose CRDs it waits for."""
        from gpufleet.components.k3s.node_health import K3sNodeHealth, K3sNodeHealthArgs

        args = K3sNodeHealthArgs(pod_monitor=self.observability is not None)
        ready = [self.observability.release] if self.observability is not None else []
        self.node_health = K3sNodeHealth(f"{name}-node-health", args, self.access, crds_ready=ready, opts=child)

    def _gke_managed_observability(self, name: str, spec: StackSpec, child: pulumi.ResourceOptions) -> None:
        """GKE Managed Service for Prometheus (collection and GKE's DCGM exporter are the cluster's monitoringConfig):
        gpufleet's alert policies, dashboard and the PodMonitorings that feed KEDA's and Kueue's metrics to it."""
        from gpufleet.components.observability.gke_managed import GkeManagedObservability, GkeManagedObservabilityArgs
        from gpufleet.components.observability.pools import pool_facts

        keda, kueue = self.workloads.get("keda"), self.workloads.get("kueue")
        self.observability = GkeManagedObservability(
            f"{name}-observability",
            GkeManagedObservabilityArgs(
                cluster=self.access.name, project=self.access.facts["project"], spec=spec.observability,
                pools=pool_facts(spec), keda_namespace=keda.namespace_name if keda else None,
                kueue_namespace=kueue.namespace_name if kueue else None,
                depends_on=[addon.release for addon in (keda, kueue) if addon],
            ),
            self.access,
            opts=child,
        )

    def _k3s_addons(self, name: str, spec: StackSpec, child: pulumi.ResourceOptions) -> None:
        """RDMA (Network Operator) for rdma pools and CSI storage: what bare-metal hosts lack."""
        rdma_pools = [p for p in spec.node_pools if p.rdma]
        if rdma_pools:
            from gpufleet.components.gpu_stack.network_operator import NetworkOperator, NetworkOperatorArgs

            taints = [t for pool in spec.node_pools for t in pool_taints(pool)]
            self.network_operator = NetworkOperator(
                f"{name}-network-operator", NetworkOperatorArgs(rdma_pools, taints), self.access, opts=child
            )
        if spec.storage.nfs is not None:
            from gpufleet.components.k3s.storage import K3sStorage, K3sStorageArgs

            self.storage = K3sStorage(f"{name}-storage", K3sStorageArgs(spec.storage, protection=spec.cluster.protection), self.access, opts=child)
