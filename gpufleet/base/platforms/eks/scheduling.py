"""eks: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means).

EKS names a pool's machines by EC2 instance type, labels nodes of the types EC2 gives a network topology for with
`topology.k8s.aws/network-node-layer-N`, serves through agentgateway (or Envoy Gateway), and runs the driver its GPU AMI ships
(gpufleet/base/catalog/aws_amis.yaml) unless the GPU Operator installs one.
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog, versions
from gpufleet.base import labels as L
from gpufleet.base.catalog import aws, offerings
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.catalog import topology as topology_facts
from gpufleet.base.platforms.contract.scheduling import SchedulingTraits
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import (AGENTGATEWAY_CLASS, AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES,
                                                  ENVOY_CLASS)
from gpufleet.base.spec.platforms.eks import pool_instance_types

NS = "gpufleet"

# Karpenter's NodePool: `spec.template.metadata.labels` keys the API server refuses (x-kubernetes-validations of
# karpenter.sh_nodepools.yaml in the pinned chart, versions.KARPENTER; ../shared/reference/crds/karpenter/), the same
# rules the controller applies (kubernetes-sigs/karpenter pkg/apis/v1/labels.go IsRestrictedLabel and
# nodepool_validation.go validateLabels, at the commit aws/karpenter-provider-aws's go.mod pins at the same tag).
# gpufleet copies a pool's `labels` into its NodePool's template, so each of these fails `pulumi up`.
KARPENTER_RESTRICTED_LABELS = ("kubernetes.io/hostname", "karpenter.sh/nodepool")
# Domain -> the keys of that domain the CEL rules still allow (labels Karpenter itself understands).
KARPENTER_RESTRICTED_DOMAINS = {
    "karpenter.sh": ("karpenter.sh/capacity-type",),
    "karpenter.k8s.aws": tuple(f"karpenter.k8s.aws/{name}" for name in (
        "instance-tenancy", "capacity-reservation-type", "capacity-reservation-id",
        "capacity-reservation-interruptible", "ec2nodeclass", "instance-encryption-in-transit-supported",
        "instance-category", "instance-hypervisor", "instance-family", "instance-generation", "instance-local-nvme",
        "instance-size", "instance-cpu", "instance-cpu-manufacturer", "instance-cpu-sustained-clock-speed-mhz",
        "instance-memory", "instance-ebs-bandwidth", "instance-network-bandwidth", "instance-gpu-name",
        "instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-memory", "instance-accelerator-name",
        "instance-accelerator-manufacturer", "instance-accelerator-count", "instance-capability-flex",
        "placement-group-id", "placement-group-partition",
    )),
}


class EksScheduling(SchedulingTraits):
    machine_key = "instanceType"
    # agentgateway first (auto: InferencePool routing, scale to zero behind the picker); Envoy Gateway on request.
    gateway_classes = (AGENTGATEWAY_CLASS, ENVOY_CLASS)
    serving_rdma_fabric = "efa"  # every EFA device of the node (components/serving/layer.py)
    inference_extension_releases = AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES

    def gateway_service(self, external: bool) -> dict:
        """Envoy's Service is a LoadBalancer with the scheme said both ways: `aws-load-balancer-internal` for the
        cloud-provider-aws controller that serves LoadBalancer Services on a plain EKS cluster (it makes an internal
        load balancer for any value but "false"), `aws-load-balancer-scheme` for the AWS Load Balancer Controller where
        one runs (internal | internet-facing; kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/
        service/annotations: the scheme annotation replaces the deprecated internal one). Internal: reachable from
        the VPC and networks routed to it."""
        if external:
            return {"type": "LoadBalancer", "annotations": {L.AWS_LB_SCHEME_ANNOTATION: "internet-facing"}}
        return {"type": "LoadBalancer", "annotations": {L.AWS_LB_INTERNAL_ANNOTATION: "true",
                                                        L.AWS_LB_SCHEME_ANNOTATION: "internal"}}

    def nvlink_machine(self, pool: Any) -> Optional[str]:
        """The pool's (first) EC2 instance type."""
        types = list(pool.instance_types) or ([pool.instance_type] if pool.instance_type else [])
        return types[0] if types else None

    def preinstalled_driver(self, spec: Any, pool: Any) -> Optional[str]:
        """The driver the pool's GPU AMI ships."""
        ami = aws.amis().get(pool.ami)
        return ami.driver_version if ami else None

    def dra_problems(self, stack: str, spec: Any) -> list:
        """Arm instance types (GB200's p6e-gb200) need an AMI gpufleet knows the arm64 variant of. DRA pools under an
        autoscaler that launches no node for a ResourceClaim (catalog dra.yaml `autoscalers.eks`: Karpenter at the
        pinned release, per the EKS user guide's UltraServer page and aws/karpenter-provider-aws#9519) never get one."""
        problems = []
        autoscaler = spec.cluster.eks.autoscaler
        facts = dra_facts.autoscalers("eks").get(autoscaler.kind)
        if facts is not None and not facts.provisions_claims:
            for i, pool in enumerate(spec.node_pools):
                if pool.allocation == "dra":
                    problems.append(Problem(stack, f"{NS}:nodePools[{i}].allocation", f"{autoscaler.kind} "
                                            f"{versions.KARPENTER.version} launches no node for a pod whose GPUs come from "
                                            "a ResourceClaim (the EKS user guide: Karpenter does not support DRA; "
                                            "sources in gpufleet/base/catalog/dra.yaml), so this pool would never get a "
                                            "node: use cluster.eks.autoscaler.kind: cluster-autoscaler (managed node "
                                            "groups) for DRA pools, or allocation: device-plugin", pool.allocation))
        for i, pool in enumerate(spec.node_pools):
            types = [t for t in (list(pool.instance_types) or [pool.instance_type]) if t in aws.instance_types()]
            if any(aws.instance_type(t).arch == "arm64" for t in types) and pool.ami not in versions.EKS_ARM_AMIS:
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].ami", f"{', '.join(types)} run on Arm: gpufleet knows "
                                        f"the arm64 variant of {', '.join(versions.EKS_ARM_AMIS)} only", pool.ami))
        return problems

    # Topology

    def topology_levels(self, pool: Any) -> list[str]:
        """`topology.k8s.aws/network-node-layer-1..3` (-4 on four-layer types), when every type of the pool has them."""
        layers = [topology_facts.eks_layers(t) for t in pool_instance_types(pool)]
        if not layers or None in layers:
            return []
        return topology_facts.eks_levels(min(layers))

    def nvlink_topology_levels(self, levels: list[str], clique: str) -> list[str]:
        """The clique alone: no AWS document says an UltraServer sits under one network node."""
        return [clique]

    def topology_problems(self, stack: str, at: str, pool: Any) -> list:
        if self.topology_levels(pool):
            return []
        bare = [t for t in pool_instance_types(pool) if topology_facts.eks_layers(t) is None]
        return [Problem(stack, f"{at}.name", f"EC2 gives no network topology for {', '.join(bare)}, so its nodes carry no "
                        "topology.k8s.aws/network-node-layer-* labels: use a supported instance type "
                        f"({', '.join(topology_facts.eks_supported())}) or leave the pool out of kueue.topology.pools",
                        pool.name)]

    # Admission

    def admission_problems(self, stack: str, spec: Any) -> list:
        """With Karpenter (cluster.eks.autoscaler.kind: karpenter) a pool's labels go into its NodePool's template,
        whose CEL rules refuse Karpenter's own label domains."""
        if spec.cluster.eks.autoscaler.kind != "karpenter":
            return []
        problems = []
        for i, pool in enumerate(spec.node_pools):
            for key in sorted(pool.labels):
                why = karpenter_refuses(key)
                if why:
                    problems.append(Problem(stack, f"{NS}:nodePools[{i}].labels", f"{why}: Karpenter's NodePool refuses it "
                                            "in its template labels, where gpufleet puts the pool's labels "
                                            "(cluster.eks.autoscaler is karpenter); use your own prefix, e.g. "
                                            "example.com/role", key))
        return problems

    # Catalog and compatibility

    def catalog_problems(self, stack: str, spec: Any, config: dict) -> list:
        """A pool's instance types against the offerings recorded for the stack's region (`aws:region`). Judged per
        region, since AZ names differ per AWS account (aws_offerings.yaml explains)."""
        region = config.get("aws:region")
        if not region:
            return []
        out: list[Problem] = []
        for i, pool in enumerate(spec.node_pools):
            types = [pool.instance_type] if pool.instance_type else list(pool.instance_types or [])
            for j, name in enumerate(types):
                if offerings.aws_offered_in_region(name, region) is False:
                    key = "instanceType" if pool.instance_type else f"instanceTypes[{j}]"
                    where = offerings.aws_regions_offering(name)
                    out.append(Problem(
                        stack, f"{NS}:nodePools[{i}].{key}",
                        f"{name} is not offered in {region} ({offerings.provenance('aws', region)}; regions that offer "
                        f"it: {', '.join(where) or 'none recorded'})",
                        name,
                    ))
        return out

    def catalog_drivers(self, spec: Any) -> Optional[list[tuple[str, str]]]:
        """The driver each of the stack's AMIs ships."""
        return [(f"the {ami} AMI's driver {aws.ami(ami).driver_floor}", aws.ami(ami).driver_floor)
                for ami in sorted({p.ami for p in spec.node_pools if getattr(p, "ami", None)})]

    def driver_floor_problems(self, stack: str, spec: Any, i: int, pool: Any, floor: int) -> Optional[list]:
        """The EKS AMI's driver branch."""
        ami = aws.ami(pool.ami)
        if ami.driver_branch >= floor:
            return []
        allowed = [a for a in aws.amis() if aws.ami(a).driver_branch >= floor]
        if not allowed:
            # No EKS GPU AMI runs the GPU (EC2 g7: RTX PRO 4500 needs R595, every EKS accelerated AMI ships R580), so
            # the pool would join with no GPU: refused on its instance type, with the catalog's source.
            at = f"{NS}:nodePools[{i}].instanceType" if pool.instance_type else f"{NS}:nodePools[{i}].instanceTypes"
            source = "; ".join(catalog.gpu_source(k) for k in catalog.gpu(pool.gpu).sources if k.startswith("eks_"))
            return [Problem(stack, at, f"{pool.gpu} needs NVIDIA driver branch {floor} or newer, but every EKS GPU AMI "
                            f"ships an older branch ({', '.join(f'{a}: {aws.ami(a).driver_branch}' for a in aws.amis())}): "
                            f"its nodes would join with no usable GPU; use another instance type"
                            + (f" (source: {source})" if source else ""),
                            pool.instance_type or list(pool.instance_types))]
        return [Problem(stack, f"{NS}:nodePools[{i}].ami", f"the {pool.ami} AMI ships driver branch {ami.driver_branch}, "
                        f"but {pool.gpu} needs branch {floor} or newer (allowed for this pool: {', '.join(allowed)})", pool.ami)]


def karpenter_refuses(key: str) -> Optional[str]:
    """Why Karpenter's NodePool refuses a template label key (None: it takes it)."""
    if key in KARPENTER_RESTRICTED_LABELS:
        return f"label \"{key}\" is restricted"
    # As the CEL rule reads it: the text before the first '/' (the whole key without one) ending with the domain.
    head = key.split("/", 1)[0]
    for restricted, allowed in KARPENTER_RESTRICTED_DOMAINS.items():
        if head.endswith(restricted) and key not in allowed:
            return f"label domain \"{restricted}\" is restricted (Karpenter sets its own labels there)"
    return None
