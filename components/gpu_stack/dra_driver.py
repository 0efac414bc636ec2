"""DraDriver: NVIDIA's DRA driver for GPUs (Helm, its own namespace) for the DRA pools, the ResourceClaimTemplates teams
claim GPUs with, and the ComputeDomains multi-node NVLink jobs run in (issue 34, docs/dra.md).

The chart creates the DeviceClasses workloads use (gpu.nvidia.com, mig.nvidia.com and the ComputeDomain channel and
daemon classes; ../shared/reference/dra-driver-nvidia-gpu/templates-deviceclass-*.yaml). Its GPU kubelet plugin runs
only on the DRA pools' nodes (gpufleet.io/gpu-allocation=dra), where gpufleet also turns the GPU Operator's device
plugin off (nvidia.com/gpu.deploy.device-plugin=false, gpufleet/base/node_labels.py): the chart refuses to render GPU
resources without `gpuResourcesEnabledOverride`, because both must never advertise the same GPUs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels, versions
from gpufleet.base.spec.features.dra import ComputeDomainSpec, channel_pools
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import pinned_release

NAMESPACE = "dra-driver-nvidia-gpu"  # the chart refuses `default` (templates/validation.yaml)
GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"  # a ComputeDomain's channel claims (templates-deviceclass-*)
COMPUTE_DOMAIN_API = "resource.nvidia.com/v1beta1"
RESOURCE_API = "resource.k8s.io/v1"


@dataclass(frozen=True)
class DraClaimPool:
    """What a DRA pool offers claims: its name and, on MIG pools, the MIG profiles its GPUs are cut into."""

    name: str
    mig_profiles: tuple[str, ...] = ()
    gpus_per_node: int = 1
    """GPUs on each of the pool's nodes: above 1 (and without MIG) the pool also gets `<pool>-node`, all of a node's GPUs."""


@dataclass(frozen=True)
class DraDriverArgs:
    pools: list[DraClaimPool]
    """The DRA pools; each gets ResourceClaimTemplates in every namespace of `namespaces`."""
    node_taints: list[dict] = field(default_factory=list)
    """Taints of the DRA pools' nodes: the kubelet plugin tolerates each (the chart already tolerates nvidia.com/gpu)."""
    namespaces: list[str] = field(default_factory=lambda: ["default"])
    """Namespaces that get the ResourceClaimTemplates; default: `default`."""
    compute_domains: list[ComputeDomainSpec] = field(default_factory=list)
    """ComputeDomains to create; default: none (the chart's ComputeDomain controller then stays off)."""
    driver_root: str = "/"
    """nvidiaDriverRoot: where the host's NVIDIA driver lives; default `/` (a preinstalled driver)."""
    channel_pools: list[str] = field(default_factory=list)
    """Device-plugin pools whose ComputeDomains the driver serves with its GPU allocation off (Google's A4X design:
    gpufleet/base/spec/features/dra.py channel_pools). Used only without DRA pools (the spec refuses both kinds in
    one stack: the chart's one kubelet plugin would publish the device-plugin pools' GPUs too). Default: none."""
    crd_owner: Optional[pulumi.Resource] = None
    """The release of the stack that installs the ComputeDomain CRDs instead of this chart (the GPU Operator's: its
    crds/ ships `computedomains` and `computedomaincliques` too, at the release versions.GPU_OPERATOR pins); this release then skips its crds/ and the
    ComputeDomains wait for that release. Default: None, this chart's crds/ install them."""
    namespace: str = NAMESPACE
    """Namespace of the driver's release; default `dra-driver-nvidia-gpu`."""
    namespace_creators: dict = field(default_factory=dict)
    """Namespace -> the resource that creates it (a Kueue team's Namespace): claim templates and ComputeDomains there wait
    for it. Default: none (the namespaces exist, such as `default`)."""


def _tolerations(taints: list[dict]) -> list[dict]:
    seen = sorted({(t["key"], t["effect"]) for t in taints} | {(labels.GPU_TAINT_KEY, "NoSchedule")})
    return [{"key": k, "operator": "Exists", "effect": e} for k, e in seen]


def driver_values(args: DraDriverArgs) -> dict:
    """Helm values for the dra-driver-nvidia-gpu chart; every key path exists in its values.yaml (the pinned release).
    With DRA pools: GPUs and ComputeDomains, the kubelet plugin on nodes labelled gpufleet.io/gpu-allocation=dra. With
    only device-plugin pools running ComputeDomains: GPU allocation off (no override needed: the chart refuses GPU
    resources beside a device plugin, templates/validation.yaml) and the kubelet plugin on those pools by their pool
    label, in place of the chart's default nodeAffinity (NFD or GPU Operator labels GKE's own GPU stack does not set),
    as cluster-toolkit's A4X blueprint does (v1.95.0 modules/management/kubectl-apply/main.tf lines 333-356)."""
    if not args.pools and args.channel_pools:
        return {
            "nvidiaDriverRoot": args.driver_root,
            "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": bool(args.compute_domains)}},
            "kubeletPlugin": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": labels.POOL_LABEL, "operator": "In", "values": sorted(args.channel_pools)}]},
                ]}}},
                "tolerations": _tolerations(args.node_taints),
            },
        }
    return {
        "nvidiaDriverRoot": args.driver_root,
        "gpuResourcesEnabledOverride": True,
        "resources": {"gpus": {"enabled": True}, "computeDomains": {"enabled": bool(args.compute_domains)}},
        "kubeletPlugin": {
            "nodeSelector": {labels.GPU_ALLOCATION_LABEL: "dra"},
            "tolerations": _tolerations(args.node_taints),
        },
    }


def _dns(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")


def mig_class(profile: str) -> str:
    """gpufleet's DeviceClass for the MIG devices of one profile (Kueue counts claims per DeviceClass, so one class per
    profile lets a queue's quota count each profile: components/workloads/kueue.py)."""
    return labels.dra_mig_class(profile)


def mig_device_class(profile: str) -> dict:
    """The DeviceClass spec: the chart's mig.nvidia.com selector (templates/deviceclass-mig.yaml at the pinned release)
    narrowed to one profile by the driver's `gpu.nvidia.com/profile` attribute (demo gpu-test4.yaml)."""
    return {"selectors": [{"cel": {"expression": (
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && "
        f"device.attributes['gpu.nvidia.com'].profile == '{profile}'")}}]}


def claim_templates(pool: DraClaimPool) -> dict[str, dict]:
    """ResourceClaimTemplate name -> spec for one pool: `<pool>-gpu` (one whole GPU), `<pool>-node` (every GPU of one
    node, for one pod per node such as a multi-node NVLink job; ExactCount, since Kueue does not count allocationMode All:
    Kueue (versions.KUEUE) docs/concepts/dynamic_resource_allocation.md), `<pool>-mig-<profile>` per MIG profile (one MIG device
    of it, from gpufleet's DeviceClass for that profile, mig_class)."""
    out = {f"{pool.name}-gpu": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": GPU_CLASS, "allocationMode": "ExactCount", "count": 1}},
    ]}}}}
    if pool.gpus_per_node > 1 and not pool.mig_profiles:
        out[f"{pool.name}-node"] = {"spec": {"devices": {"requests": [
            {"name": "gpus", "exactly": {"deviceClassName": GPU_CLASS, "allocationMode": "ExactCount",
                                         "count": pool.gpus_per_node}},
        ]}}}
    for profile in pool.mig_profiles:
        out[f"{pool.name}-mig-{labels.dra_mig_suffix(profile)}"] = {"spec": {"devices": {"requests": [
            {"name": "mig", "exactly": {"deviceClassName": mig_class(profile), "allocationMode": "ExactCount", "count": 1}},
        ]}}}
    return out


def compute_domain_manifest(cd: ComputeDomainSpec) -> dict:
    """The ComputeDomain; pods claim its IMEX channel through the ResourceClaimTemplate `<name>-channel` it creates."""
    return {
        "apiVersion": COMPUTE_DOMAIN_API,
        "kind": "ComputeDomain",
        "metadata": {"name": cd.name, "namespace": cd.namespace},
        "spec": {"numNodes": cd.num_nodes, "channel": {"resourceClaimTemplate": {"name": f"{cd.name}-channel"}}},
    }


def mig_profiles(pool) -> tuple[str, ...]:
    """The MIG profiles a DRA pool's GPUs are cut into (one profile, an explicit layout, or a named layout)."""
    from gpufleet.base import catalog

    sharing = pool.sharing
    if sharing.mode != "mig":
        return ()
    if sharing.profile:
        return (sharing.profile,)
    if sharing.profiles:
        return tuple(sharing.profiles)
    if sharing.layout == "all-balanced" and pool.gpu and catalog.gpu(pool.gpu).mig:
        return tuple(catalog.gpu(pool.gpu).mig.all_balanced)
    if sharing.layout and sharing.layout.startswith("all-"):
        return (sharing.layout.removeprefix("all-"),)
    return ()


def driver_pools(spec, pools: list) -> list:
    """The pools the DRA driver's kubelet plugin runs on: the DRA pools, and the device-plugin pools ComputeDomains run
    on (channel_pools). Empty: the stack needs no DRA driver."""
    channels = set(channel_pools(spec))
    return [p for p in pools if p.allocation == "dra" or p.name in channels]


def dra_args(spec, pools: list, facts: dict, crd_owner: Optional[pulumi.Resource] = None) -> DraDriverArgs:
    """Args from the stack spec: the shaped DRA pools (and device-plugin pools running ComputeDomains), their taints,
    gpufleet:dra, and where the driver lives (stated; else the platform's fact; else the GPU Operator's driver root
    when it installs the driver; else /)."""
    from gpufleet.base.capacity import pool_capacity
    from gpufleet.base.node_labels import node_taints

    root = spec.dra.driver_root or facts.get("nvidia_driver_root") or (
        "/run/nvidia/driver" if spec.gpu_operator.driver.source == "operator" else "/")
    dra = [p for p in pools if p.allocation == "dra"]
    return DraDriverArgs(
        pools=[DraClaimPool(p.name, mig_profiles(p), pool_capacity(p, spec.cluster.platform).gpus_per_node) for p in dra],
        node_taints=[t for p in pools for t in node_taints(p, spec.cluster.platform)],
        namespaces=list(spec.dra.namespaces),
        compute_domains=list(spec.dra.compute_domains),
        driver_root=root,
        channel_pools=[p.name for p in pools if p.allocation != "dra"],
        crd_owner=crd_owner,
    )


class DraDriver(pulumi.ComponentResource):
    """`<name>-ns` and `<name>-release` (the chart), `<name>-claim-<namespace>-<template>` ResourceClaimTemplates and
    `<name>-cd-<namespace>-<domain>` ComputeDomains, on the cluster's provider."""

    def __init__(self, name: str, args: DraDriverArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:DraDriver", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        self.values = driver_values(args)
        # The kubelet plugin runs privileged (it prepares devices on the host).
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={"name": args.namespace, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}},
            opts=child,
        )
        extra: list[pulumi.Resource] = []
        if access.facts.get("critical_pods_need_quota"):
            # The chart's pods are system-node-critical (kubelet plugin, controller) and system-cluster-critical (webhook)
            # (values.yaml): GKE admits those outside kube-system only up to a ResourceQuota for those classes (NVIDIA
            # GPU Operator docs, google-gke.rst; the same quota the GPU Operator gets, components/gpu_stack/operator.py).
            # Google's DRA tutorial instead empties kubeletPlugin.priorityClassName, which lets the plugin be evicted.
            extra.append(k8s.core.v1.ResourceQuota(
                f"{name}-quota",
                metadata={"name": "dra-driver-critical-pods", "namespace": self.namespace.metadata["name"]},
                spec={"hard": {"pods": "100"}, "scopeSelector": {"matchExpressions": [{
                    "operator": "In", "scopeName": "PriorityClass", "values": ["system-node-critical", "system-cluster-critical"],
                }]}},
                opts=child,
            ))
        # One owner per CRD: where the GPU Operator's release ships the ComputeDomain CRDs too, this release skips its
        # crds/ (docs/dra.md "Who owns the ComputeDomain CRDs"; tests/upstream/test_one_owner.py).
        self.release = pinned_release(name, versions.DRA_DRIVER_NVIDIA_GPU, self.namespace.metadata["name"], self.values,
                                      access, parent=self, depends_on=extra or None, timeout=600,
                                      skip_crds=args.crd_owner is not None)
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
            depends_on=[self.release, *([args.crd_owner] if args.crd_owner is not None else [])]))

        def in_ns(ns: str) -> pulumi.ResourceOptions:
            creator = args.namespace_creators.get(ns)
            return pulumi.ResourceOptions.merge(after, pulumi.ResourceOptions(depends_on=[creator])) if creator else after

        # One DeviceClass per MIG profile of the DRA pools (cluster-scoped; the chart's mig.nvidia.com matches any profile).
        profiles = sorted({p for pool in args.pools for p in pool.mig_profiles})
        self.device_classes = [
            k8s.resource.v1.DeviceClass(f"{name}-class-{mig_class(p)}", metadata={"name": mig_class(p)},
                                        spec=mig_device_class(p), opts=after)
            for p in profiles
        ]
        self.claim_templates = []
        for ns in args.namespaces:
            for pool in args.pools:
                for template, spec in claim_templates(pool).items():
                    opts = in_ns(ns)
                    if self.device_classes:
                        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=self.device_classes))
                    self.claim_templates.append(k8s.resource.v1.ResourceClaimTemplate(
                        f"{name}-claim-{ns}-{template}",
                        metadata={"name": template, "namespace": ns},
                        spec=spec,
                        opts=opts,
                    ))
        # ComputeDomain's CRD ships in the chart (crds/), so the domains wait for the release.
        self.compute_domains = [
            k8s.apiextensions.CustomResource(
                f"{name}-cd-{cd.namespace}-{cd.name}",
                api_version=COMPUTE_DOMAIN_API, kind="ComputeDomain",
                metadata={"name": cd.name, "namespace": cd.namespace},
                spec=compute_domain_manifest(cd)["spec"],
                opts=in_ns(cd.namespace),
            )
            for cd in args.compute_domains
        ]
        self.register_outputs({"namespace": args.namespace, "chartVersion": versions.DRA_DRIVER_NVIDIA_GPU.version})
