"""rdma-placement: RDMA pools are wired the way the hardware needs, or NCCL falls back to TCP (or hangs).

EKS (a launch template with any `interfaceType: efa` / `efa-only` interface is an EFA pool):
- every EFA interface the instance type supports (p5.48xlarge: 32), from the catalog;
- a placement group (`placement.groupName`), and when the stack defines it, strategy `cluster`;
- the node groups using the template sit in one subnet (one AZ): EFA traffic does not cross AZs.
Other pool types say what they need (their platform's `rdma_problems`, gpufleet/base/platforms/<name>/policy.py):
GKE (a node pool with any `networkConfig.additionalNodeNetworkConfigs` is a GPUDirect pool): as many
additional networks as its machine type needs (a3-highgpu-8g: 4 for GPUDirect-TCPX, a3-megagpu-8g: 8).
AKS (a node pool labelled `gpufleet.io/rdma: "true"`): a VM size with InfiniBand (the catalog's ND sizes) in one
availability zone, since an InfiniBand fabric does not span zones.
AWS EFA user guide; GKE "Maximize GPU network bandwidth"; terraform-aws-eks derives EFA interfaces from
the instance type for the same reason.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.base.catalog import aws
from gpufleet.policies import inputs as I

NAME = "rdma-placement"
EFA_TYPES = ("efa", "efa-only")


def _efa_count(lt) -> int:
    return I.memo(lt.props, "efa-interfaces", _count_efa)


def _count_efa(props) -> int:
    return sum(1 for kind in I.column(I.get(props, "networkInterfaces"), "interfaceType") if kind in EFA_TYPES)


def _index(resources: list) -> tuple[dict[str, list], dict[str, list]]:
    """Node groups by the launch template name they use, placement groups by name (and resource name).

    Templates are matched by their `name` input: an id is not known before the template exists, and a
    reference still unknown during preview matches nothing rather than stopping the whole policy."""
    users: dict[str, list] = {}
    groups: dict[str, list] = {}
    for r in I.of_type(resources, I.EKS_NODE_GROUP, I.EC2_PLACEMENT_GROUP):
        if r.resource_type == I.EKS_NODE_GROUP:
            name = I.known(lambda r=r: I.text(I.get(r.props, "launchTemplate", "name")))
            if name:
                users.setdefault(name, []).append(r)
        elif r.resource_type == I.EC2_PLACEMENT_GROUP:
            for key in {I.known(lambda r=r: I.text(I.get(r.props, "name"))), r.name} - {None}:
                groups.setdefault(key, []).append(r)
    return users, groups


def _eks(lt, users_by_name: dict[str, list], groups: dict[str, list]) -> list[tuple[str, str]]:
    efa = _efa_count(lt)
    out = []
    group = I.text(I.get(lt.props, "placement", "groupName"))
    if not group:
        out.append((lt.urn, f"launch template '{lt.name}' has {efa} EFA interface(s) but no placement.groupName: EFA needs a cluster placement group"))
    else:
        for pg in groups.get(group, []):
            strategy = I.get(pg.props, "strategy")
            if strategy != "cluster":
                out.append((pg.urn, f"placement group '{group}' used by EFA launch template '{lt.name}' has strategy {strategy!r}, not 'cluster'"))
    users = users_by_name.get(I.known(lambda: I.text(I.get(lt.props, "name"))) or "", [])
    types = [t for t in [I.text(I.get(lt.props, "instanceType"))] if t]
    for ng in users:
        types += I.eks_instance_types(ng.props)
        subnets = I.items(I.get(ng.props, "subnetIds"))
        if len(subnets) > 1:
            out.append((ng.urn, f"EFA node group '{ng.name}' spans {len(subnets)} subnets: put it in one subnet (one AZ)"))
    for t in sorted(set(types)):
        shape = aws.instance_types().get(t)
        if shape is None or not shape.gpus:
            continue
        if shape.efa_interfaces == 0:
            out.append((lt.urn, f"launch template '{lt.name}' asks for EFA on {t}, which does not support EFA"))
        elif efa != shape.efa_interfaces:
            out.append((lt.urn, f"launch template '{lt.name}' has {efa} EFA interface(s); {t} supports {shape.efa_interfaces}: use all of them"))
    return out


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    out = []
    users, groups = _index(resources)
    for r in I.of_type(resources, I.EC2_LAUNCH_TEMPLATE):
        if _efa_count(r) and not I.exemption(NAME, r.name, r.urn, r.props, config):
            out += _eks(r, users, groups)
    for pool in I.gpu_pools(resources):
        if not I.pool_exemption(NAME, pool, config):
            out += [(pool.urn, m) for m in pool.kind.rdma_problems(pool.name, pool.inputs, pool.shape, pool.instance_types)]
    return out


POLICY = StackValidationPolicy(
    name=NAME,
    description="EFA pools use every EFA interface, one AZ and a cluster placement group; GPUDirect pools have all their networks.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema(),
)
