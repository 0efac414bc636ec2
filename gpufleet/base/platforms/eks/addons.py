"""eks: addons traits (gpufleet/base/platforms/contract/addons.py says what each one means)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.cidrs import RFC1918
from gpufleet.base.platforms.contract.addons import AddonTraits, ChartImages, HostDriver
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.cold_start import listed_images
from gpufleet.base.spec.features.registry import ECR_HOST
from gpufleet.base.spec.platforms.eks import pool_local_storage

NS = "gpufleet"
MIRROR = "gpufleet:registry.mirror"
EGRESS = "gpufleet:cluster.eks.network.egress"
# EC2 Capacity Blocks for ML are sold for accelerated P instances and Trainium (EC2 User Guide, capacity-blocks.html,
# "Supported instance types": p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300, p6e-gb200, trn1, trn2, read 2026-12-04; the
# SageMaker ReservedCapacityInstanceType enum lists the same families). The rule is by family prefix, so a new size of
# those families is not refused before the catalog knows it.
CAPACITY_BLOCK_FAMILIES = ("p", "trn")
# Amazon VPC User Guide, vpc-cidr-blocks.html, "IPv4 CIDR block association restrictions" (read 2026-12-04): with a
# primary block in one RFC 1918 range, blocks from the other RFC 1918 ranges and 198.19.0.0/16 cannot be associated;
# with a publicly routable or 100.64.0.0/10 primary, no RFC 1918 block nor 198.19.0.0/16; and no block may overlap one
# the VPC already has.
AWS_RESERVED_BENCHMARK = ipaddress.ip_network("198.19.0.0/16")


class EksAddons(AddonTraits):
    # --- cold start ---
    cold_start_settings = frozenset({"dataVolumeSnapshot"})
    cold_start_instead = "EKS: dataVolumeSnapshot on Bottlerocket pools"

    def node_egress(self, spec: Any) -> Optional[tuple[str, frozenset[str]]]:
        # egress: endpoints is a VPC without NAT: nodes reach the AWS services it has endpoints for in its region, S3
        # among them as a gateway endpoint (gpufleet/base/spec/platforms/eks_endpoints.py GATEWAY), and no internet.
        if spec.cluster.eks.network.egress != "endpoints":
            return None
        return ("nodes without a NAT (cluster.eks.network.egress: endpoints) reach only their VPC's endpoints "
                "(S3 in the stack's region, no internet)", frozenset({"s3"}))

    def cold_start_problems(self, stack: str, at: str, spec: Any, pool: Any) -> list[Problem]:
        cs = pool.cold_start
        problems = []
        karpenter = spec.cluster.eks.autoscaler.kind == "karpenter"
        if karpenter and cs.parallel_image_pulls is not None and pool.ami.startswith("bottlerocket"):
            # Karpenter rebuilds a Bottlerocket node's settings.kubernetes from its own typed subset, which has no
            # max-parallel-image-pulls: the setting would be dropped (karpenter-provider-aws at the pinned release,
            # versions.KARPENTER: pkg/providers/amifamily/bootstrap/bottlerocketsettings.go, MarshalTOML). AL2023 nodes
            # take it (nodeadm).
            problems.append(Problem(stack, f"{at}.parallelImagePulls", "not available on Karpenter Bottlerocket pools: "
                                    "Karpenter rewrites settings.kubernetes from the fields it knows and drops "
                                    "max-parallel-image-pulls; use ami: al2023-nvidia or remove it", cs.parallel_image_pulls))
        if cs.data_volume_snapshot is not None:
            if not pool.ami.startswith("bottlerocket"):
                # AL2023 keeps images on the root volume, which comes from the AMI; only Bottlerocket has a separate data
                # volume that a snapshot can carry (AWS Containers blog, "Reduce container startup time on Amazon EKS with
                # Bottlerocket data volume").
                problems.append(Problem(stack, f"{at}.dataVolumeSnapshot", f"needs a Bottlerocket pool (ami: "
                                        f"bottlerocket-nvidia): {pool.ami} keeps images on its root volume, which comes from the "
                                        "AMI", cs.data_volume_snapshot))
            elif pool_local_storage(pool) == "raid0" and not karpenter:
                # (Karpenter node classes set no instanceStorePolicy: containerd stays on the data volume there.)
                problems.append(Problem(stack, f"{at}.dataVolumeSnapshot", "with localStorage: raid0 containerd runs on the "
                                        "instance-store RAID, so the snapshot's images on the data volume are never used; set "
                                        "localStorage: none on this pool", cs.data_volume_snapshot))
        return problems

    def cold_start_paths(self, spec: Any, pool: Any) -> list[str]:
        cs = pool.cold_start
        out = []
        if cs.data_volume_snapshot:
            out.append(f"data volume from snapshot {cs.data_volume_snapshot} (pre-pulled, built outside gpufleet: "
                       f"{listed_images(cs)})")
        elif pool.ami.startswith("bottlerocket"):
            out.append("no data-volume snapshot: images are pulled at boot")
        else:
            out.append(f"no image cache on {pool.ami} (a data-volume snapshot needs Bottlerocket)")
        out.append(f"parallel image pulls: at most {cs.parallel_image_pulls}" if cs.parallel_image_pulls
                   else "parallel image pulls: on, unbounded (the AMI's default)")
        return out

    def platform_driver(self, spec: Any) -> Optional[str]:
        return "preinstalled in the AMI (the GPU Operator does not install it)"

    def precompiled_driver_refusal(self, spec: Any) -> Optional[str]:
        return "the EKS GPU AMIs carry the driver already; the GPU Operator does not install one there"

    # --- storage ---
    def rwx_storage_class(self, spec: Any) -> Optional[str]:
        fsx = spec.cluster.eks.storage.fsx_lustre
        return fsx.storage_class_name if fsx is not None else None

    rwx_storage_hint = "set cluster.eks.storage.fsxLustre (FSx for Lustre)"

    # --- registry ---
    own_charts = frozenset({versions.CLUSTER_AUTOSCALER.name, versions.KARPENTER.name, versions.EFA_DEVICE_PLUGIN.name})

    def registry_problems(self, stack: str, spec: Any, config: dict) -> list[Problem]:
        mirror = spec.registry.mirror
        problems = []
        if mirror and not re.fullmatch(ECR_HOST, mirror.split("/", 1)[0]):
            problems.append(Problem(stack, MIRROR, "EKS nodes pull with their node role, which only an ECR registry "
                                                   "(<account>.dkr.ecr.<region>.amazonaws.com) accepts, and private "
                                                   "subnets reach only ECR through the VPC endpoints: use an ECR "
                                                   "mirror (pull-through cache or replicated repositories)", mirror))
        return problems + _private_network_problems(stack, spec, config)

    # --- images ---
    def own_charts_with_images(self, spec: Any) -> list[ChartImages]:
        scaler = spec.cluster.eks.autoscaler
        if scaler.kind == "karpenter":
            return [(versions.KARPENTER.name, versions.KARPENTER.version, set(), {})]
        if scaler.enabled:
            tag = versions.CLUSTER_AUTOSCALER_IMAGES.get(spec.cluster.kubernetes_version, "")
            return [(versions.CLUSTER_AUTOSCALER.name, versions.CLUSTER_AUTOSCALER.version, set(), {"tag": tag})]
        return []

    rdma_fabric = "efa"

    # --- observability ---
    # amp: the AWS managed collector scrapes EKS clusters only (Amazon Managed Service for Prometheus User Guide,
    # "Using an AWS managed collector": "Amazon EKS is the only supported service").
    metrics_backends = ("kube-prometheus-stack", "amp", "none")

    # --- upkeep ---
    def upkeep_problems(self, stack: str, spec: Any) -> list[Problem]:
        return _capacity_blocks(stack, spec) + _secondary_cidrs(stack, spec)

    def missing_device_plugin(self, pool: Any) -> Optional[str]:
        # "When using the EKS-optimized AL2023 AMIs with NVIDIA GPUs, you must install the NVIDIA Kubernetes device
        # plugin ... When using the EKS-optimized Bottlerocket AMIs with NVIDIA GPUs, you do not need to install [it],
        # as it is already included" (docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html,
        # Considerations, read 2026-12-04).
        if pool.ami == "bottlerocket-nvidia":
            return None
        return "EKS AL2023 NVIDIA AMIs ship no device plugin (Bottlerocket NVIDIA AMIs do: ami bottlerocket-nvidia)"

    def host_drivers(self, spec: Any) -> list[HostDriver]:
        out = []
        for i, pool in enumerate(spec.node_pools):
            ami = aws_catalog.ami(pool.ami)
            out.append((f"{NS}:nodePools[{i}].ami", ami.driver_version or f"{ami.driver_branch}.x",
                        f"the {pool.ami} AMI's driver"))
        return out


def _private_network_problems(stack: str, spec: Any, config: dict) -> list[Problem]:
    """A private-only network with no path to its images or its APIs: an EKS VPC without NAT (`egress: endpoints`)
    reaches only the AWS services it has endpoints for, in its own region (the endpoint service names are
    com.amazonaws.<region>.*; gpufleet/base/spec/platforms/eks_endpoints.py)."""
    eks = spec.cluster.eks
    if eks.network.egress != "endpoints":
        return []
    problems: list[Problem] = []
    mirror = spec.registry.mirror
    if not mirror:
        problems.append(Problem(stack, EGRESS, "nodes without a NAT reach no public registry (nvcr.io, registry.k8s.io, "
                                               "...): set gpufleet:registry.mirror to an ECR registry in the stack's "
                                               "region and copy the images there (`gpufleet images <stack>`), or use "
                                               "egress: nat", "endpoints"))
    else:
        host = mirror.split("/", 1)[0]
        region = (config or {}).get("aws:region")
        match = re.fullmatch(ECR_HOST, host)
        mirror_region = host.split(".")[3] if match else None
        if mirror_region and region and mirror_region != region:
            problems.append(Problem(stack, MIRROR, f"an ECR registry in {mirror_region}, but the VPC's ECR and S3 "
                                                   f"endpoints are those of {region} (aws:region): nodes without a "
                                                   "NAT have no path to another region's registry; use a mirror in "
                                                   f"{region} (ECR replication or a pull-through cache there)", mirror))
    if eks.autoscaler.kind == "karpenter":
        problems.append(Problem(stack, "gpufleet:cluster.eks.autoscaler.kind", "Karpenter without a NAT also needs "
                                "SSM, SQS and EKS Auth endpoints and settings.isolatedVPC, which gpufleet does not "
                                "create yet: use the cluster autoscaler with egress: endpoints, or egress: nat",
                                "karpenter"))
    return problems


def _capacity_blocks(stack: str, spec: Any) -> list[Problem]:
    problems = []
    for i, pool in enumerate(spec.node_pools):
        r = pool.reservation
        if pool.capacity != "reserved" or r is None or r.type != "capacity-block":
            continue
        types = [r.instance_type] if r.instance_type else (
            [pool.instance_type] if pool.instance_type else list(pool.instance_types))
        for t in types:
            family = t.split(".", 1)[0]
            if not any(family.startswith(prefix) and family[len(prefix):][:1].isdigit()
                       for prefix in CAPACITY_BLOCK_FAMILIES):
                key = "reservation.instanceType" if r.instance_type else (
                    "instanceType" if pool.instance_type else "instanceTypes")
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].{key}", "EC2 sells Capacity Blocks for ML only for "
                                        "P instances and Trainium (p4d, p4de, p5, p5e, p5en, p6, p6e, trn1, trn2): use "
                                        "type odcr for an On-Demand Capacity Reservation of this type", t))
    return problems


def _range_of(net: Any) -> Any:
    return next((r for r in RFC1918 if net.subnet_of(r)), None)


def _secondary_cidrs(stack: str, spec: Any) -> list[Problem]:
    eks = spec.cluster.eks
    if eks is None or not eks.network.secondary_cidrs:
        return []
    problems = []
    primary = ipaddress.ip_network(eks.network.vpc_cidr)
    primary_range = _range_of(primary)
    seen = [("vpcCidr", primary)]
    for i, text in enumerate(eks.network.secondary_cidrs):
        at = f"{NS}:cluster.eks.network.secondaryCidrs[{i}]"
        net = ipaddress.ip_network(text)
        clash = next((key for key, other in seen if other.overlaps(net)), None)
        own = _range_of(net)
        if clash:
            why = f"overlaps {clash} ({dict(seen)[clash]}): a VPC's CIDR blocks must not overlap"
        elif net.overlaps(AWS_RESERVED_BENCHMARK):
            why = "AWS does not associate 198.19.0.0/16 with a VPC as a secondary block"
        elif own is not None and own != primary_range:
            where = f"the RFC 1918 range {primary_range}" if primary_range else "a publicly routable or 100.64.0.0/10 range"
            why = (f"the VPC's primary block {primary} is in {where}, so AWS refuses a secondary block from {own}; use "
                   "100.64.0.0/10 (RFC 6598) or a block of the primary's own range")
        else:
            seen.append((f"secondaryCidrs[{i}]", net))
            continue
        problems.append(Problem(stack, at, why, text))
        seen.append((f"secondaryCidrs[{i}]", net))
    return problems
