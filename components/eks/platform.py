"""The EKS platform: network, control plane, the on-demand system node group, one managed node group
per GPU pool (EFA fabric for rdma pools), then the EKS add-ons: cluster autoscaler, EFA device plugin,
EBS and FSx for Lustre storage, and Amazon Managed Service for Prometheus with `metrics.backend: amp` (with KEDA on,
an IRSA role for KEDA's operator to query its workspace). With `cluster.eks.autoscaler: karpenter`, Karpenter (controller and
interruption queue) replaces the cluster autoscaler and each GPU pool is a Karpenter NodePool + EC2NodeClass
instead of a managed node group; Karpenter then drains spot nodes itself from its interruption queue.

Spot interruptions: managed node groups turn on Capacity Rebalancing for spot groups and drain a node
when EC2 sends a rebalance recommendation or interruption notice (EKS User Guide, "Managed node group
capacity types"). The aws-node-termination-handler would duplicate that (its IMDS mode is for
self-managed nodes), so gpufleet does not install it; spot pools carry a taint and never host the
system components.
"""

from __future__ import annotations

import dataclasses
import re

import pulumi

from gpufleet.components.helm_chart import CHARTS_FACT
from gpufleet.components.image_digests import DIGESTS_FACT, digest_fact
from gpufleet.components.image_mirror import MIRROR_FACT

from gpufleet.components.eks.amp_query_access import AmpQueryAccess, AmpQueryAccessArgs, query_endpoint
from gpufleet.components.eks.autoscaler import ClusterAutoscaler, ClusterAutoscalerArgs
from gpufleet.components.eks.cluster import EksCluster, EksClusterArgs
from gpufleet.components.eks.ebs_storage import EbsStorage
from gpufleet.components.eks.managed_prometheus import EksManagedPrometheus, EksManagedPrometheusArgs
from gpufleet.components.eks.node_health import EksNodeHealth
from gpufleet.components.observability.amp_config import ScrapeTargets
from gpufleet.components.observability.pools import pool_facts
from gpufleet.components.eks.efa import EksEfaFabric, EksEfaFabricArgs
from gpufleet.components.eks.efa_device_plugin import EfaDevicePlugin, EfaDevicePluginArgs
from gpufleet.components.eks.fsx_storage import FsxLustreStorage, FsxLustreStorageArgs
from gpufleet.components.eks.karpenter import Karpenter, KarpenterArgs
from gpufleet.components.eks.karpenter_pool import KarpenterNodePool, KarpenterNodePoolArgs
from gpufleet.components.eks.network import EksNetwork, EksNetworkArgs
from gpufleet.components.eks.node_group import EksNodeGroup, EksNodeGroupArgs
from gpufleet.base.node_labels import pool_labels, pool_taints
from gpufleet.components.platform import ClusterContext, Platform, PlatformBuild, PlatformInputs
from gpufleet.components.workloads import keda as keda_addon
from gpufleet.base import labels as L
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.spec.platforms.eks import pool_efa_secondary, pool_instance_types, pool_local_storage, pool_zone, reserved_zone
from gpufleet.base.spec.platforms import eks_endpoints


def accelerator_label_value(gpu_model: str) -> str:
    """The k8s.amazonaws.com/accelerator value of a GPU model, e.g. H100-80GB -> nvidia-h100-80gb (the autoscaler
    only needs the key; the value names the GPU in its metrics)."""
    return "nvidia-" + re.sub(r"[^a-z0-9]+", "-", gpu_model.lower()).strip("-")


def reservation_args(pool) -> dict:
    """EksNodeGroupArgs of a reserved pool: the reservation it targets and what the stack says it holds."""
    r = pool.reservation
    if pool.capacity != "reserved" or r is None:
        return {}
    facts = {"type": r.type, "zone": r.zone, "instance-type": r.instance_type or (pool_instance_types(pool) or [None])[0],
             "instance-count": r.instance_count, "placement-group": r.placement_group}
    return {
        "reservation_id": r.id,
        "reservation_group_arn": r.resource_group_arn,
        "capacity_block": r.type == "capacity-block",
        "reservation_facts": {k: v for k, v in facts.items() if v is not None},
    }


class EksPlatform(Platform):
    """Amazon EKS: everything in the module docstring is made in `build`; with `metrics.backend: amp`, the in-cluster
    exporters the managed collector scrapes are its add-on."""

    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        spec = inputs.spec
        eks = spec.cluster.eks
        k8s_version = spec.cluster.kubernetes_version
        region = pulumi.Config("aws").require("region")

        network = EksNetwork(f"{name}-network", EksNetworkArgs(eks.network, name, region,
                                                              tuple(eks_endpoints.interface_services(spec))), opts=opts)
        control_plane = EksCluster(
            f"{name}-eks",
            EksClusterArgs(
                eks, name, k8s_version, region, network.private_subnet_ids(), network.vpc_id,
                protection=spec.cluster.protection,
            ),
            opts=opts,
        )
        facts = control_plane.access.facts

        system = eks.system_pool
        system_pool = EksNodeGroup(
            f"{name}-pool-{L.SYSTEM_POOL}",
            EksNodeGroupArgs(
                cluster_name=facts["cluster_name"],
                autoscaler_cluster=name,
                kubernetes_version=k8s_version,
                node_role_arn=facts["node_role_arn"],
                subnet_ids=network.private_subnet_ids(),
                instance_types=list(system.instance_types),
                ami="al2023-standard",
                capacity="on-demand",
                min_nodes=system.min_nodes,
                max_nodes=system.max_nodes,
                labels={L.POOL_LABEL: L.SYSTEM_POOL},
                root_volume_gib=system.root_volume_gib,
            ),
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=control_plane.node_role_policies)),
        )

        karpenter = eks.autoscaler.kind == "karpenter"
        pools = []
        karpenter_pools: list[KarpenterNodePoolArgs] = []
        efa_taints: list[dict] = []
        efa_zones: list[str] = []
        for pool in spec.node_pools:
            types = pool_instance_types(pool)
            # A type the catalog lacks runs with the facts its pool states (the spec accepts it only then: eks_checks).
            shape = aws_catalog.instance_types().get(types[0]) or aws_catalog.stack_given(types[0], pool.gpu, pool.gpus_per_node)
            labels = pool_labels(pool, shape.gpu)
            if not karpenter:
                labels[L.EKS_CA_GPU_LABEL] = accelerator_label_value(shape.gpu)
            if pool.ami.startswith("bottlerocket"):
                # Bottlerocket's NVIDIA variants run their own device plugin: keep the GPU Operator's off these nodes, or
                # each GPU is advertised twice (bottlerocket.dev, "NVIDIA GPUs" on aws-k8s-*-nvidia variants).
                labels[L.GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL] = "false"
            taints = pool_taints(pool)
            extra: dict = {}
            if pool.rdma:
                zone = pool_zone(pool, eks)
                efa_zones.append(zone)
                reserved_pg = pool.reservation.placement_group if pool.capacity == "reserved" and pool.reservation else None
                fabric = EksEfaFabric(
                    f"{name}-pool-{pool.name}-efa",
                    EksEfaFabricArgs(network.vpc_id, name, pool.name, placement_group=reserved_pg is None),
                    opts=opts,
                )
                labels[L.EFA_LABEL] = "true"
                efa_taints += taints
                subnets = list(pool.subnet_ids) or network.private_subnet_ids(zone)
                extra = {
                    "efa_interfaces": shape.efa_interfaces,
                    "efa_secondary": pool_efa_secondary(pool),
                    "security_group_ids": [facts["cluster_security_group_id"], fabric.security_group.id],
                    "placement_group": reserved_pg or fabric.placement_group.name,
                }
            elif pool.subnet_ids:
                subnets = list(pool.subnet_ids)
            else:
                # A reserved pool launches only in its reservation's zone (EC2 User Guide, capacity-blocks-launch).
                subnets = network.private_subnet_ids(pool.availability_zone or reserved_zone(pool))
            if karpenter:
                zone = pool_zone(pool, eks) if (pool.rdma or pool.availability_zone or reserved_zone(pool)) else None
                r = pool.reservation if pool.capacity == "reserved" else None
                karpenter_pools.append(KarpenterNodePoolArgs(
                    pool=pool.name,
                    cluster_name=name,
                    node_role=control_plane.node_role.name,
                    instance_types=types,
                    gpus_per_node=shape.gpus,
                    max_nodes=pool.max_nodes,
                    subnet_ids=subnets,
                    security_group_ids=extra.get("security_group_ids") or [facts["cluster_security_group_id"]],
                    capacity=pool.capacity,
                    ami=pool.ami,
                    kubernetes_version=k8s_version,
                    ami_release=pool.ami_release,
                    labels=labels,
                    taints=taints,
                    zones=[zone] if zone else [],
                    root_volume_gib=pool.root_volume_gib,
                    reservation_ids=[r.id] if r is not None and r.id else [],
                    reservation_facts=reservation_args(pool).get("reservation_facts", {}),
                    placement_group=extra.get("placement_group"),
                    efa_only_cards=shape.efa_interfaces if pool.rdma and shape.efa_secondary == "efa-only" else 0,
                    consolidate_after=eks.autoscaler.consolidate_after,
                    disruption_budget=eks.autoscaler.disruption_budget,
                    expire_after=eks.autoscaler.expire_after,
                    disruption_windows=[w.model_dump() for w in eks.autoscaler.disruption_windows],
                    exemptions=dict(pool.exemptions),
                    data_volume_snapshot=pool.cold_start.data_volume_snapshot if pool.cold_start else None,
                    max_parallel_image_pulls=pool.cold_start.parallel_image_pulls if pool.cold_start else None,
                ))
                continue
            pools.append(
                EksNodeGroup(
                    f"{name}-pool-{pool.name}",
                    EksNodeGroupArgs(
                        cluster_name=facts["cluster_name"],
                        autoscaler_cluster=name,
                        kubernetes_version=k8s_version,
                        node_role_arn=facts["node_role_arn"],
                        subnet_ids=subnets,
                        instance_types=types,
                        ami=pool.ami,
                        ami_release=pool.ami_release,
                        capacity=pool.capacity,
                        min_nodes=pool.min_nodes,
                        max_nodes=pool.max_nodes,
                        labels=labels,
                        taints=taints,
                        root_volume_gib=pool.root_volume_gib,
                        gpus=shape.gpus,
                        exemptions=dict(pool.exemptions),
                        max_unavailable=pool.max_unavailable,
                        local_storage=pool_local_storage(pool),
                        data_volume_snapshot=pool.cold_start.data_volume_snapshot if pool.cold_start else None,
                        max_parallel_image_pulls=pool.cold_start.parallel_image_pulls if pool.cold_start else None,
                        node_repair=spec.observability.node_health.enabled,
                        # Scale-down that fits GPU jobs, per GPU group (docs/upgrades.md).
                        autoscaling_options=eks.autoscaler.gpu_scale_down.options() if eks.autoscaler.enabled and shape.gpus else {},
                        **reservation_args(pool),
                        **extra,
                    ),
                    opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=control_plane.node_role_policies)),
                )
            )

        # Add-ons wait for the system nodes they run on; GPU pools may sit at zero.
        # Every GPU pool on Bottlerocket: its NVIDIA variants run their own device plugin, so the GPU Operator runs
        # without one (in mixed stacks the node label above keeps it off the Bottlerocket nodes only).
        bottlerocket_only = bool(spec.node_pools) and all(p.ami.startswith("bottlerocket") for p in spec.node_pools)
        # With gpufleet:registry.mirror, the platform's own charts pull from the mirror too (components/image_mirror.py).
        mirror = {MIRROR_FACT: spec.registry.mirror} if spec.registry.mirror else {}
        if spec.registry.charts:  # and take their charts from the stack's chart source (components/helm_chart.py)
            mirror[CHARTS_FACT] = spec.registry.charts
        if spec.images.pin_digests:  # and pin their images by digest (components/image_digests.py)
            mirror[DIGESTS_FACT] = digest_fact(spec)
        access = dataclasses.replace(
            control_plane.access, ready=[system_pool],
            facts={**facts, "device_plugin_preinstalled": bottlerocket_only, **mirror},
        )
        addons: list[pulumi.ComponentResource] = []
        if karpenter:
            controller = Karpenter(
                f"{name}-karpenter", KarpenterArgs(eks.autoscaler, facts["node_role_arn"]), access, opts=opts,
            )
            addons.append(controller)
            # NodePools and EC2NodeClasses need Karpenter's CRDs: they come with its release.
            pools += [
                KarpenterNodePool(f"{name}-pool-{a.pool}", a, access.provider, depends_on=[controller.release], opts=opts)
                for a in karpenter_pools
            ]
        elif eks.autoscaler.enabled:
            addons.append(ClusterAutoscaler(f"{name}-autoscaler", ClusterAutoscalerArgs(eks.autoscaler, isolated=eks.network.egress == "endpoints"), access, opts=opts))
        if efa_taints:
            addons.append(EfaDevicePlugin(f"{name}-efa-device-plugin", EfaDevicePluginArgs(efa_taints), access, opts=opts))
        addons.append(EbsStorage(f"{name}-ebs", access, opts=opts))
        if spec.observability.node_health.enabled and spec.node_pools:
            addons.append(EksNodeHealth(f"{name}-node-health", access, opts=opts))
        query_url = keda_identity = None
        if spec.observability.backend("eks") == "amp":
            amp = EksManagedPrometheus(
                f"{name}-amp",
                EksManagedPrometheusArgs(
                    cluster_name=name,
                    cluster_arn=facts["cluster_arn"],
                    subnet_ids=network.private_subnet_ids(),
                    security_group_ids=[facts["cluster_security_group_id"]],
                    spec=spec.observability,
                    pools=pool_facts(spec),
                    targets=ScrapeTargets(kueue=spec.addons.kueue.enabled, keda=spec.addons.keda.enabled),
                ),
                opts=opts,
            )
            addons.append(amp)
            query_url = pulumi.Output.from_input(amp.workspace_id).apply(lambda ws: query_endpoint(region, ws))
            if spec.addons.keda.enabled:
                # KEDA's operator queries the workspace with SigV4 (IRSA role, query actions on this workspace only).
                query = AmpQueryAccess(
                    f"{name}-keda-amp-query",
                    AmpQueryAccessArgs(amp.workspace_arn, keda_addon.NAMESPACE, keda_addon.OPERATOR_SERVICE_ACCOUNT),
                    access, opts=opts,
                )
                addons.append(query)
                keda_identity = keda_addon.KedaPodIdentity("aws", aws_role_arn=query.role.arn, aws_region=region)
        if eks.storage.fsx_lustre:
            fsx = eks.storage.fsx_lustre
            zone = fsx.availability_zone or (efa_zones[0] if efa_zones else eks.network.zones()[0])
            addons.append(
                FsxLustreStorage(
                    f"{name}-fsx",
                    FsxLustreStorageArgs(fsx, network.private_subnet_ids(zone)[0], network.vpc_id, spec.cluster.protection),
                    access,
                    opts=opts,
                )
            )
        return PlatformBuild(control_plane=control_plane, access=access, node_pools=[system_pool, *pools],
                             prometheus_query_url=query_url, keda_identity=keda_identity)

    def addons(self, ctx: ClusterContext) -> dict[str, pulumi.ComponentResource]:
        """With `metrics.backend: amp`: the AWS managed collector (EksManagedPrometheus, in `build`) scrapes what runs in
        the cluster, so kube-state-metrics (the pool and pending-pod alerts) and node-exporter come from us."""
        if ctx.spec.observability.backend("eks") != "amp":
            return {}
        from gpufleet.components.observability.exporters import MetricsExporters, MetricsExportersArgs

        return {"metrics-exporters": MetricsExporters(f"{ctx.name}-metrics-exporters", MetricsExportersArgs(),
                                                      ctx.access, opts=ctx.opts)}


PLATFORM = EksPlatform()
