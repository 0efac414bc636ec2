"""GpuCluster: composes a platform's control plane and GPU pools, then the add-ons. Stays thin."""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import Any, Mapping, Optional

import pulumi

from gpufleet.components.platform import ClusterContext, PlatformInputs, platform
from gpufleet.base.node_labels import node_taints
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec import NAMESPACE, SpecError, StackSpec, load_spec
from gpufleet.base.spec.features.observability import MANAGED_BACKENDS, SCRAPES_GPU_OPERATOR_DCGM
from gpufleet.base.spec.shape import shaped_pools

# Provider config the spec's checks read (the region EKS needs, the project GKE defaults to).
PROVIDER_CONFIG_KEYS = ("aws:region", "gcp:project")


class GpuClusterConfigError(SpecError, pulumi.RunError):
    """Invalid GpuCluster config: every problem, each with its key path, the bad value and what is allowed.
    A SpecError to catch; a pulumi.RunError so `pulumi up` prints the message without a traceback."""


@dataclass(frozen=True)
class GpuClusterArgs:
    spec: StackSpec
    """The validated stack spec (`gpufleet.base.spec.load_spec`, or `GpuClusterArgs.from_config`)."""
    ssh_private_key: Optional[pulumi.Input[str]] = None
    """SSH private key for a platform that joins its hosts over SSH (a secret config value); default: none (a managed
    control plane needs none)."""
    etcd_s3_access_key: Optional[pulumi.Input[str]] = None
    """Access key of the etcd snapshot bucket (a secret config value), when the platform's etcd snapshots go to S3;
    default: none."""
    etcd_s3_secret_key: Optional[pulumi.Input[str]] = None
    """Secret key of the etcd snapshot bucket (a secret config value); default: none."""
    registry_password: Optional[pulumi.Input[str]] = None
    """The registry mirror's password (secret config `gpufleet:registryPassword`), for platforms that write pull
    credentials onto their nodes; default: none."""
    kubeconfig: Optional[pulumi.Input[str]] = None
    """The kubeconfig of a cluster gpufleet does not create (secret config `gpufleet:kubeconfig`), for a platform that
    reaches an existing cluster; default: none (the platform makes the cluster and its kubeconfig)."""

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        ssh_private_key: Optional[pulumi.Input[str]] = None,
        stack: Optional[str] = None,
        etcd_s3_access_key: Optional[pulumi.Input[str]] = None,
        etcd_s3_secret_key: Optional[pulumi.Input[str]] = None,
        kubeconfig: Optional[pulumi.Input[str]] = None,
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
            # The key travels as an Input (the platform keeps it secret); the spec only checks that it is given.
            full[f"{NAMESPACE}:sshPrivateKey"] = "[secret]"
            secret_keys.add(f"{NAMESPACE}:sshPrivateKey")
        for name, value in (("etcdS3AccessKey", etcd_s3_access_key), ("etcdS3SecretKey", etcd_s3_secret_key),
                            ("kubeconfig", kubeconfig)):
            if value is not None:
                full[f"{NAMESPACE}:{name}"] = "[secret]"
                secret_keys.add(f"{NAMESPACE}:{name}")
        try:
            spec = load_spec(stack, full, secret_keys)
        except SpecError as exc:
            raise GpuClusterConfigError(exc.stack, exc.problems) from None
        return cls(spec, ssh_private_key=ssh_private_key, etcd_s3_access_key=etcd_s3_access_key,
                   etcd_s3_secret_key=etcd_s3_secret_key, kubeconfig=kubeconfig)


class GpuCluster(pulumi.ComponentResource):
    """A whole GPU cluster from a validated spec: the platform's control plane and GPU pools, then the GPU
    stack, the platform's add-ons and the workload layer on the resulting ClusterAccess (`self.access`).
    What differs between platforms comes from the platform (components/platform.py), never from a branch here.

    No class-level annotations here: gpufleet/app/package.py derives the component package's outputs from them."""

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:index:GpuCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        plat = platform(spec.cluster.platform)
        built = plat.build(
            name, PlatformInputs(spec, args.ssh_private_key, args.etcd_s3_access_key, args.etcd_s3_secret_key,
                                 args.registry_password, args.kubeconfig), child,
        )
        self.control_plane = built.control_plane
        self.node_pools = built.node_pools
        self.access = built.access
        if spec.registry.mirror:
            # Every chart and object on the cluster pulls from the mirror (components/image_mirror.py).
            from gpufleet.components.image_mirror import MIRROR_FACT

            self.access = dataclasses.replace(self.access, facts={**self.access.facts, MIRROR_FACT: spec.registry.mirror})
        if spec.registry.charts:
            # Every Helm release takes its chart from the stack's chart source (components/helm_chart.py).
            from gpufleet.components.helm_chart import CHARTS_FACT

            self.access = dataclasses.replace(self.access, facts={**self.access.facts, CHARTS_FACT: spec.registry.charts})
        ctx = ClusterContext(name, spec, self.access, child)

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

            # The taints the nodes really carry (node_taints: a platform's own Spot taint too), tolerated by key/effect.
            taints = [t for pool in nvidia_pools for t in node_taints(pool, spec.cluster.platform)]
            amd_taints = [t for pool in amd_pools for t in node_taints(pool, spec.cluster.platform)]
            # The backends that scrape the GPU Operator's DCGM exporter get gpufleet's counter list; only
            # kube-prometheus-stack has the ServiceMonitor CRD (a managed collector reads its own scrape configuration).
            extra = dict(operator_settings(nvidia_pools), rdma=plat.gpu_operator_rdma(nvidia_pools),
                         metrics=metrics_backend in SCRAPES_GPU_OPERATOR_DCGM,
                         service_monitor=metrics_backend == "kube-prometheus-stack")
            self.gpu_operator = GpuOperator(
                f"{name}-gpu-operator",
                GpuOperatorArgs(spec.gpu_operator, taints, nfd_extra_taints=amd_taints,
                                cuda_versions=tuple(spec.workloads.cuda_versions),
                                pin_digests=spec.images.pin_digests, **extra),
                self.access,
                opts=child,
            )
            self.gpu_sharing = None
            if extra.get("device_plugin_config"):
                sharing_args = GpuSharingArgs(nvidia_pools, self.gpu_operator.namespace.metadata["name"])
                self.gpu_sharing = GpuSharing(f"{name}-gpu-sharing", sharing_args, self.access, opts=child)
        if amd_pools and plat.amd_gpu_operator:
            from gpufleet.components.gpu_stack.amd_operator import AmdGpuOperator, AmdGpuOperatorArgs

            self.amd_gpu_operator = AmdGpuOperator(
                f"{name}-amd-gpu-operator",
                AmdGpuOperatorArgs(spec.amd_gpu_operator, amd_pools, own_nfd=not install_nvidia,
                                   rocm_versions=tuple(spec.workloads.rocm_versions)),
                self.access,
                opts=child,
            )
        self.addons = plat.addons(ctx)
        """The platform's add-ons on the cluster, by role (components/<platform>/platform.py `addons`)."""
        self.network_operator = self.addons.get("network-operator")
        self.storage = self.addons.get("storage")

        self.observability = None
        if metrics_backend == "kube-prometheus-stack":
            from gpufleet.components.observability.pools import pool_facts
            from gpufleet.components.observability.stack import Observability, ObservabilityArgs

            npd = plat.node_problem_detector(spec)
            self.observability = Observability(
                f"{name}-observability",
                ObservabilityArgs(spec.observability, pool_facts(spec), node_problem_detector=npd),
                self.access, opts=child,
            )
        self.node_health = plat.node_health(ctx, self.observability)

        from gpufleet.components.workloads.layer import build_workloads

        # kube-prometheus-stack: its in-cluster Service. A managed backend: the query API the platform reports, with
        # the cloud identity it made for KEDA's operator; managed backends have no ServiceMonitor CRD.
        prometheus_url = self.observability.prometheus_url if self.observability else built.prometheus_query_url
        managed = metrics_backend in MANAGED_BACKENDS
        self.workloads = build_workloads(
            name, spec, self.access, child, prometheus_url=prometheus_url, service_monitors=not managed,
            keda_identity=built.keda_identity,
        )
        self.observability = plat.observability_after_workloads(ctx, self.workloads) or self.observability
        from gpufleet.components.serving.layer import build_serving

        self.serving = build_serving(name, spec, self.access, child, keda=self.workloads.get("keda"),
                                     metrics_backend=metrics_backend)
        self.dra_driver = None
        dra_pools = [p for p in nvidia_pools if p.allocation == "dra"]
        if dra_pools:
            from gpufleet.components.gpu_stack.dra_driver import DraDriver, dra_args

            # After the workload layer: ResourceClaimTemplates and ComputeDomains in a Kueue team's namespace wait for it.
            kueue = self.workloads.get("kueue")
            created = {t.namespace_name: kueue.teams[t.name].namespace for t in spec.addons.kueue.teams} if kueue else {}
            args = dataclasses.replace(dra_args(spec, dra_pools, self.access.facts), namespace_creators=created)
            self.dra_driver = DraDriver(f"{name}-dra-driver", args, self.access, opts=child)
        self.cold_start = self._cold_start(name, spec, child)

        self.kubeconfig = self.access.kubeconfig
        self.register_outputs({"kubeconfig": self.kubeconfig})

    def _cold_start(self, name: str, spec: StackSpec, child: pulumi.ResourceOptions) -> dict[str, pulumi.ComponentResource]:
        """Pre-pull DaemonSets of pools that list images, and model caches (docs/cold-start.md): after the storage
        classes and the team namespaces they use exist. Nothing without `coldStart` / `modelCaches`."""
        out: dict[str, pulumi.ComponentResource] = {}
        pulls = [p for p in spec.node_pools if p.cold_start and p.cold_start.pre_pulls(spec.cluster.platform)]
        if not pulls and not spec.model_caches:
            return out
        from gpufleet.base.spec.features.cold_start import rwx_storage_class
        from gpufleet.components.cold_start import ImagePrePull, ImagePrePullArgs, ModelCache, ModelCacheArgs

        for pool in pulls:
            args = ImagePrePullArgs(pool.name, tuple(pool.cold_start.images), node_taints(pool, spec.cluster.platform))
            out[f"prepull-{pool.name}"] = ImagePrePull(f"{name}-prepull-{pool.name}", args, self.access, opts=child)
        after = [r for r in (self.storage, *self.workloads.values()) if r is not None]
        for cache in spec.model_caches:
            args = ModelCacheArgs(cache, cache.storage_class or rwx_storage_class(spec), spec.cluster.protection)
            out[f"model-cache-{cache.namespace}-{cache.name}"] = ModelCache(
                f"{name}-model-cache-{cache.namespace}-{cache.name}", args, self.access,
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after)))
        return out
