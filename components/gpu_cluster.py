"""GpuCluster: composes a platform's control plane and GPU pools, then the add-ons. Stays thin."""

from __future__ import annotations

import dataclasses
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, TypedDict, Union

import pulumi

from gpufleet.base.spec import NAMESPACE, SpecError, StackSpec, load_spec
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.cluster_layers import LAYERS, LayerContext
from gpufleet.components.platform import PlatformInputs, platform

# Provider config the spec's checks read (the region EKS needs, the project GKE defaults to).
PROVIDER_CONFIG_KEYS = ("aws:region", "gcp:project")

BUILT: ContextVar[Optional[list[tuple[str, StackSpec]]]] = ContextVar("gpufleet_built_clusters", default=None)
"""While a list is set here, each GpuCluster built appends (name, spec): gpufleet.testing and `gpufleet plan --program`
read the spec of the cluster a user's program builds, to price it and list its capacity as a stack's plan does."""

_Block = Mapping[str, Any]
StackConfig = TypedDict("StackConfig", {
    "cluster": _Block,
    "nodePools": Sequence[_Block],
    "gpuOperator": _Block,
    "amdGpuOperator": _Block,
    "workloads": _Block,
    "storage": _Block,
    "addons": _Block,
    "observability": _Block,
    "dra": _Block,
    "modelCaches": Sequence[_Block],
    "images": _Block,
    "registry": _Block,
    "serving": _Block,
    "gitops": _Block,
    "dependsOn": Sequence[str],
    "aws:region": str,
    "gcp:project": str,
}, total=False)
"""The `gpufleet:` keys of a stack file, without their namespace, as `GpuClusterArgs.from_config` takes them (each
block in the stack-file shape that `gpufleet schema` prints), and the provider keys it reads. A type checker then
names a misspelt top-level key; the spec names every other problem when the args are built.
tests/unit/test_public_api.py keeps the keys equal to the spec's."""


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
        config: Union[StackConfig, Mapping[str, Any]],
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
    """A whole GPU cluster from a validated spec: the platform's control plane and GPU pools, then the layers
    (components/cluster_layers.py: the GPU operators, the platform's add-ons, observability, the workload layer,
    serving, DRA, cold start) on the resulting ClusterAccess (`self.access`). What differs between platforms comes
    from the platform (components/platform.py), never from a branch here.

    No class-level annotations here: gpufleet/app/package.py derives the component package's outputs from them."""

    def __init__(self, name: str, args: GpuClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:index:GpuCluster", name, None, opts)
        spec = args.spec
        built_here = BUILT.get()
        if built_here is not None:
            built_here.append((name, spec))
        child = pulumi.ResourceOptions(parent=self)
        plat = platform(spec.cluster.platform)
        built = plat.build(
            name, PlatformInputs(spec, args.ssh_private_key, args.etcd_s3_access_key, args.etcd_s3_secret_key,
                                 args.registry_password, args.kubeconfig), child,
        )
        self.control_plane = built.control_plane
        self.node_pools = built.node_pools
        self.access = _with_registry(built.access, spec)
        ctx = LayerContext(name, spec, self.access, child, platform=plat, built=built,
                           metrics_backend=spec.observability.backend(spec.cluster.platform))
        # The layers in order (components/cluster_layers.py), each handed what the earlier ones made; each keeps what
        # it made as an attribute: gpu_operator, gpu_sharing, amd_gpu_operator, addons, network_operator, storage,
        # observability, node_health, workloads, serving, dra_driver, cold_start.
        for layer in LAYERS:
            made = layer(ctx)
            ctx.made.update(made)
            for attribute, value in made.items():
                setattr(self, attribute, value)
        self.kubeconfig = self.access.kubeconfig
        self.register_outputs({"kubeconfig": self.kubeconfig})


def _with_registry(access: ClusterAccess, spec: StackSpec) -> ClusterAccess:
    """The access every layer uses, with the stack's registry: every chart and object pulls from the mirror
    (components/image_mirror.py), and every Helm release takes its chart from the stack's chart source
    (components/helm_chart.py)."""
    facts = dict(access.facts)
    if spec.registry.mirror:
        from gpufleet.components.image_mirror import MIRROR_FACT

        facts[MIRROR_FACT] = spec.registry.mirror
    if spec.registry.charts:
        from gpufleet.components.helm_chart import CHARTS_FACT

        facts[CHARTS_FACT] = spec.registry.charts
    if spec.images.pin_digests:  # gpufleet:images.pinDigests (components/image_digests.py)
        from gpufleet.components.image_digests import DIGESTS_FACT, digest_fact

        facts[DIGESTS_FACT] = digest_fact(spec)
    return access if facts == access.facts else dataclasses.replace(access, facts=facts)
