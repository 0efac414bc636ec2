"""Cross checks of gpufleet:cluster.eks against the rest of the stack: pools against the EC2 instance catalog and
the EKS node group limits, EFA, reservations, Karpenter, the AMI's driver against the stack's CUDA versions. With
eks_limits.py, the checks of platform eks (EksKeys.checks), run once every block is valid on its own."""

from __future__ import annotations

import difflib
from typing import Optional

from gpufleet.base import catalog, versions
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.spec.platforms.eks import NAMESPACE, EksAutoscalerSpec, pool_instance_types
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.stack import StackSpec

# EKS API limits on a managed node group's labels, taints and tags (EKS API Reference: CreateNodegroup /
# UpdateLabelsPayload, Taint; tag restrictions). Kubernetes itself allows longer (prefixed) keys and empty
# label values, so these fail only at `pulumi up`, after the cluster is built.
EKS_LABEL_KEY_MAX = 63  # the whole key, prefix included
EKS_LABEL_VALUE_LENGTHS = (1, 63)
EKS_TAINT_KEY_MAX = 63
EKS_TAINT_VALUE_MAX = 63
EKS_TAG_VALUE_MAX = 256


def _known(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"(known: {', '.join(known)}{hint})"


def node_group_limit_checks(stack: str, i: int, pool) -> list[Problem]:
    """The pool's own labels, taints and exemption reasons against the EKS managed node group limits."""
    at = f"{NAMESPACE}:nodePools[{i}]"
    problems: list[Problem] = []
    lo, hi = EKS_LABEL_VALUE_LENGTHS
    for key, value in pool.labels.items():
        if len(key) > EKS_LABEL_KEY_MAX:
            problems.append(Problem(stack, f"{at}.labels.{key}", f"EKS node groups take label keys of at most {EKS_LABEL_KEY_MAX} characters, prefix included ({len(key)})"))
        if not lo <= len(value) <= hi:
            problems.append(Problem(stack, f"{at}.labels.{key}", f"EKS node groups take label values of {lo} to {hi} characters", value))
    for j, t in enumerate(pool.taints):
        if len(t.key) > EKS_TAINT_KEY_MAX:
            problems.append(Problem(stack, f"{at}.taints[{j}].key", f"EKS node groups take taint keys of at most {EKS_TAINT_KEY_MAX} characters, prefix included ({len(t.key)})", t.key))
        if len(t.value) > EKS_TAINT_VALUE_MAX:
            problems.append(Problem(stack, f"{at}.taints[{j}].value", f"EKS node groups take taint values of at most {EKS_TAINT_VALUE_MAX} characters ({len(t.value)})"))
    for policy, reason in pool.exemptions.items():
        if len(reason) > EKS_TAG_VALUE_MAX:
            problems.append(Problem(stack, f"{at}.exemptions.{policy}", f"the reason is tagged on the node group: AWS tag values hold at most {EKS_TAG_VALUE_MAX} characters ({len(reason)})"))
    return problems


def _reservation_checks(stack: str, at: str, pool, zones: list[str], subnet_zone: dict, types: list[str], known: list[str]) -> list[Problem]:
    """A reserved pool runs in its reservation's zone, with the instance type it holds, within its size.
    EC2: an instance cannot launch into a Capacity Block from another AZ's subnet and must target it by id
    (EC2 User Guide, capacity-blocks-launch.html); a targeted ODCR matches one instance type."""
    r = pool.reservation
    ref = r.id or r.resource_group_arn
    kind = "capacity block" if r.type == "capacity-block" else "capacity reservation"
    problems: list[Problem] = []
    if r.zone is not None:
        if r.zone not in zones:
            problems.append(Problem(stack, f"{at}.reservation.zone", f"{kind} {ref} is in {r.zone}, which is not one of the "
                                    f"network's zones (allowed: {', '.join(zones)})", r.zone))
        if pool.availability_zone and pool.availability_zone != r.zone:
            problems.append(Problem(stack, f"{at}.availabilityZone", f"{kind} {ref} is in {r.zone}: a reserved pool must run "
                                    f"in its reservation's zone (allowed: {r.zone})", pool.availability_zone))
        pool_zones = sorted({subnet_zone[s] for s in pool.subnet_ids if s in subnet_zone})
        if pool_zones and pool_zones != [r.zone]:
            problems.append(Problem(stack, f"{at}.subnetIds", f"subnets in {', '.join(pool_zones)}, but {kind} {ref} is in "
                                    f"{r.zone}: a reserved pool's subnets must all be in its reservation's zone"))
    if r.instance_type is not None and r.instance_type not in known:
        problems.append(Problem(stack, f"{at}.reservation.instanceType", f"unknown EC2 instance type {_known(r.instance_type, known)}", r.instance_type))
    elif r.id is not None:
        held = r.instance_type or (types[0] if len(types) == 1 else None)
        key = "instanceType" if pool.instance_type else "instanceTypes"
        if held is None:
            problems.append(Problem(stack, f"{at}.{key}", f"{kind} {ref} holds one instance type: give the pool exactly "
                                    f"that one (or state it as reservation.instanceType)", types))
        elif types != [held]:
            problems.append(Problem(stack, f"{at}.{key}", f"{kind} {ref} holds {held}: the pool's instance type must be "
                                    f"{held} alone (allowed: [{held}])", types if len(types) > 1 else types[0]))
    if r.type == "capacity-block" and r.instance_count is not None and pool.max_nodes > r.instance_count:
        problems.append(Problem(stack, f"{at}.maxNodes", f"capacity block {ref} holds {r.instance_count} instance(s): more "
                                f"nodes can never launch (allowed: at most {r.instance_count})", pool.max_nodes))
    return problems


def karpenter_checks(stack: str, spec: StackSpec) -> list[Problem]:
    """What Karpenter needs from the stack: its interruption queue where pools are spot or reserved (without it
    Karpenter never hears of an interruption: chart value settings.interruptionQueue, ../shared/reference/karpenter),
    and reservations it can select (EC2NodeClass capacityReservationSelectorTerms take an id or tags, not a
    resource group: the pinned chart's karpenter.k8s.aws_ec2nodeclasses.yaml)."""
    auto = spec.cluster.eks.autoscaler
    at = f"{NAMESPACE}:cluster.eks.autoscaler"
    problems: list[Problem] = []
    if auto.kind != "karpenter":
        for field in ("identity", "interruption_queue", "consolidate_after", "disruption_budget"):
            if field in auto.model_fields_set:
                problems.append(Problem(stack, f"{at}.{EksAutoscalerSpec.model_fields[field].alias}", "only used with kind: karpenter"))
        return problems
    for field in ("expander", "scale_down_unneeded_time", "scale_down_delay_after_add", "scale_down_utilization_threshold",
                  "gpu_scale_down"):
        if field in auto.model_fields_set:
            problems.append(Problem(stack, f"{at}.{EksAutoscalerSpec.model_fields[field].alias}", "only used with kind: "
                                    "cluster-autoscaler (Karpenter consolidates with consolidateAfter and disruptionBudget)"))
    if "enabled" in auto.model_fields_set and not auto.enabled:
        problems.append(Problem(stack, f"{at}.enabled", "Karpenter is what launches the GPU pools' nodes: it cannot be disabled "
                                "(use kind: cluster-autoscaler with enabled: false for fixed-size pools)", False))
    for i, pool in enumerate(spec.node_pools):
        p = f"{NAMESPACE}:nodePools[{i}]"
        if pool.capacity in ("spot", "reserved") and not auto.interruption_queue:
            problems.append(Problem(stack, f"{at}.interruptionQueue", f"pool '{pool.name}' is {pool.capacity}: Karpenter needs its "
                                    "interruption queue to drain nodes before EC2 reclaims them (spot interruption, capacity "
                                    "reservation end); set interruptionQueue: true", False))
        r = pool.reservation
        if pool.capacity == "reserved" and r is not None and r.resource_group_arn:
            problems.append(Problem(stack, f"{p}.reservation.resourceGroupArn", "Karpenter selects capacity reservations by id "
                                    "(EC2NodeClass capacityReservationSelectorTerms), not by resource group; give id", r.resource_group_arn))
        if pool.min_nodes > 0:
            problems.append(Problem(stack, f"{p}.minNodes", "a Karpenter NodePool has no minimum size: nodes exist only while "
                                    "pods need them (allowed with karpenter: 0)", pool.min_nodes))
    return problems


def ami_release_checks(stack: str, at: str, pool, kubernetes_version: str, cuda_versions: list = ()) -> list[Problem]:
    """A pool's amiRelease: a release gpufleet knows for the cluster's minor in its AMI family's table
    (versions.EKS_AL2023_RELEASES, versions.BOTTLEROCKET_RELEASES; each records the NVIDIA driver it ships, which the
    review and the CUDA checks need), whose driver runs every CUDA version the workloads need (an older release may
    ship an older branch: 570 cannot run CUDA 13)."""
    if pool.ami_release is None:
        return []
    bottlerocket = pool.ami.startswith("bottlerocket")
    known = versions.node_image_releases(pool.ami, kubernetes_version)
    if pool.ami_release in known:
        release = versions.node_image(pool.ami, kubernetes_version, pool.ami_release)
        out = []
        for cuda in cuda_versions:
            ok, why = catalog.driver_runs_cuda(release.driver, cuda)
            if not ok:
                out.append(Problem(stack, f"{at}.amiRelease", f"its NVIDIA driver {release.driver} (branch "
                                   f"{release.driver_branch}) cannot run CUDA {cuda} (workloads.cudaVersions): {why}",
                                   pool.ami_release))
        return out
    table = "BOTTLEROCKET_RELEASES" if bottlerocket else "EKS_AL2023_RELEASES"
    family = "a Bottlerocket release" if bottlerocket else "an EKS AL2023 AMI release"
    return [Problem(stack, f"{at}.amiRelease", f"not {family} gpufleet knows for Kubernetes "
                                               f"{kubernetes_version} (allowed: {', '.join(known) or 'none recorded'}; a newer "
                                               f"release is added to gpufleet/base/versions.py {table} with its "
                                               "driver and source)", pool.ami_release)]


def eks_checks(stack: str, spec: StackSpec, config: Optional[dict] = None) -> list[Problem]:
    problems: list[Problem] = []
    if config is not None and not config.get("aws:region"):
        problems.append(Problem(stack, "aws:region", "required for eks: the AWS region (`pulumi config set aws:region us-east-1`)"))
    eks = spec.cluster.eks
    zones = eks.network.zones()
    subnet_zone = {s.id: s.availability_zone for s in eks.network.subnets}
    known = sorted(aws_catalog.instance_types())
    gpu_types = aws_catalog.gpu_instance_types()
    for i, pool in enumerate(spec.node_pools):
        at = f"{NAMESPACE}:nodePools[{i}]"
        problems += node_group_limit_checks(stack, i, pool)
        uncatalogued = [t for t in pool_instance_types(pool) if t not in known]
        for field, alias in (("hosts", "hosts"), ("gpu", "gpu"), ("gpus_per_node", "gpusPerNode")):
            if field in pool.model_fields_set and (field == "hosts" or not uncatalogued):
                problems.append(Problem(stack, f"{at}.{alias}", "not used on eks: it follows from the instance type; remove it"))
        # A type the catalog lacks plans with the pool's own facts (issue 49): gpu and gpusPerNode both, or neither.
        stack_facts = bool(uncatalogued) and pool.gpu is not None and pool.gpus_per_node is not None
        # (One of the two alone: gpufleet/base/spec/checks/stack_shape_checks.py, for every platform.)
        if pool.instance_type and pool.instance_types:
            problems.append(Problem(stack, f"{at}.instanceTypes", "give instanceType or instanceTypes, not both"))
            continue
        types = pool_instance_types(pool)
        if not types:
            problems.append(Problem(stack, f"{at}.instanceType", "required on eks: the pool's EC2 GPU instance type, e.g. p5.48xlarge (or instanceTypes: several of one GPU shape)"))
            continue
        key = "instanceType" if pool.instance_type else "instanceTypes"
        facts = []
        for j, name in enumerate(types):
            path = f"{at}.{key}" if pool.instance_type else f"{at}.{key}[{j}]"
            family = name.split(".", 1)[0]
            if name not in known and stack_facts:
                if pool.rdma:
                    problems.append(Problem(stack, path, f"{name} is not in gpufleet's catalog, so its EFA interfaces are not "
                                            "known and EFA cannot be wired; use rdma: false or a catalogued EFA type", name))
                continue  # planned with the stack's gpu / gpusPerNode (a warning says so: EksScheduling.capacity_warnings)
            if name not in known and aws_catalog.is_gpu_type(name) and not any(k.split(".", 1)[0] == family for k in known):
                # A GPU family the catalog recognises (aws_instances.yaml gpu_families) but holds no size of: say so
                # rather than call an NVIDIA type unknown (issue 32: p6e-gb200 / p6e-gb300). An unknown size of a
                # catalogued family (a typo such as p5.48xlarg) keeps the did-you-mean message below.
                problems.append(Problem(stack, path, f"{name} is an NVIDIA GPU instance type (family {family}), "
                                        "but gpufleet's catalog has no facts for this size yet (GPU count, network cards, "
                                        "EFA interfaces, price): give the pool's own gpu and gpusPerNode (and pricePerNodeHour), "
                                        "add its row to gpufleet/base/catalog/aws_instances.yaml with its sources, or use a "
                                        f"catalogued type (GPU types: {', '.join(gpu_types)})", name))
                continue
            if name not in known:
                problems.append(Problem(stack, path, f"unknown EC2 instance type {_known(name, known)}; a real type the "
                                        "catalog lacks plans when the pool gives its own gpu and gpusPerNode (and "
                                        "pricePerNodeHour)", name))
                continue
            t = aws_catalog.instance_type(name)
            if not t.gpus:
                problems.append(Problem(stack, path, f"{name} has no GPU: a GPU pool needs a GPU instance type (GPU types: {', '.join(gpu_types)})", name))
                continue
            if pool.rdma and not t.efa_known:
                problems.append(Problem(stack, path, f"{name}: its network cards and EFA interfaces are not in gpufleet's catalog, "
                                        "so EFA cannot be wired; use rdma: false on it until they are recorded "
                                        "(gpufleet/base/catalog/aws_instances.yaml)", name))
                continue
            if pool.rdma and not t.has_efa:
                efa = [n for n in gpu_types if aws_catalog.instance_type(n).has_efa]
                problems.append(Problem(stack, path, f"{name} has no EFA: rdma needs an EFA instance type (EFA GPU types: {', '.join(efa)})", name))
                continue
            if pool.rdma and not t.efa_layout_known:
                problems.append(Problem(stack, path, f"{name} has {t.network_cards} network cards but {t.efa_interfaces} EFA interfaces, "
                                        "and which card takes none is not in gpufleet's catalog: gpufleet would put EFA on cards "
                                        f"0-{t.efa_interfaces - 1}, which EC2 may refuse; use rdma: false on it until the layout is "
                                        "recorded (gpufleet/base/catalog/aws_instances.yaml)", name))
                continue
            facts.append(t)
        if pool.local_storage == "raid0":
            bare = [t.name for t in facts if aws_catalog.instance_store(t.name) is None]
            if bare:
                problems.append(Problem(stack, f"{at}.localStorage", f"{', '.join(bare)} has no instance store to put in RAID0 "
                                        "(allowed: none)", "raid0"))
        problems += ami_release_checks(stack, at, pool, spec.cluster.kubernetes_version, spec.workloads.cuda_versions)
        if pool.efa_only is not None and not pool.rdma:
            problems.append(Problem(stack, f"{at}.efaOnly", "only used on EFA pools (rdma: true)", pool.efa_only))
        shapes = {(t.gpu, t.gpus, t.efa_interfaces if pool.rdma else 0) for t in facts}
        if len(shapes) > 1:
            desc = ", ".join(f"{t.name} = {t.gpus} x {t.gpu}" + (f" with {t.efa_interfaces} EFA" if pool.rdma else "") for t in facts)
            problems.append(Problem(stack, f"{at}.{key}", f"a pool's instance types must share one GPU shape ({desc})"))
        if pool.max_nodes < 1:
            problems.append(Problem(stack, f"{at}.maxNodes", "an EKS managed node group needs maxNodes >= 1", pool.max_nodes))
        if pool.availability_zone and pool.availability_zone not in zones:
            problems.append(Problem(stack, f"{at}.availabilityZone", f"not one of the network's zones (allowed: {', '.join(zones)})", pool.availability_zone))
        if pool.subnet_ids:
            if not eks.network.existing:
                problems.append(Problem(stack, f"{at}.subnetIds", "needs an existing network (cluster.eks.network.subnets); a new VPC places pools by availabilityZone"))
            else:
                for j, sid in enumerate(pool.subnet_ids):
                    if sid not in subnet_zone:
                        problems.append(Problem(stack, f"{at}.subnetIds[{j}]", f"not one of cluster.eks.network.subnets (allowed: {', '.join(subnet_zone)})", sid))
                pool_zones = sorted({subnet_zone[s] for s in pool.subnet_ids if s in subnet_zone})
                if pool.rdma and len(pool_zones) > 1:
                    problems.append(Problem(stack, f"{at}.subnetIds", f"an EFA pool (rdma: true) must run in one availability zone, but its subnets are in {', '.join(pool_zones)}"))
                if pool.availability_zone and pool_zones and pool_zones != [pool.availability_zone]:
                    problems.append(Problem(stack, f"{at}.subnetIds", f"subnets in {', '.join(pool_zones)} do not match availabilityZone {pool.availability_zone}"))
        if pool.capacity == "reserved" and pool.reservation is not None and pool.reservation.type in ("capacity-block", "odcr"):
            problems += _reservation_checks(stack, at, pool, zones, subnet_zone, types, known)
    problems += karpenter_checks(stack, spec)
    fsx = eks.storage.fsx_lustre
    if fsx and fsx.availability_zone and fsx.availability_zone not in zones:
        problems.append(Problem(stack, f"{NAMESPACE}:cluster.eks.storage.fsxLustre.availabilityZone", f"not one of the network's zones (allowed: {', '.join(zones)})", fsx.availability_zone))
    driver = spec.gpu_operator.driver
    if "source" in driver.model_fields_set and driver.source == "operator":
        problems.append(Problem(stack, f"{NAMESPACE}:gpuOperator.driver.source", "EKS GPU AMIs ship the NVIDIA driver and toolkit; the operator must not install them (allowed on eks: preinstalled)", driver.source))
    for ami in sorted({p.ami for p in spec.node_pools}):
        facts = aws_catalog.ami(ami)
        for j, cuda in enumerate(spec.workloads.cuda_versions):
            ok, why = catalog.driver_runs_cuda(facts.driver_floor, cuda)
            if not ok:
                problems.append(Problem(stack, f"{NAMESPACE}:workloads.cudaVersions[{j}]", f"the {ami} AMI's driver (branch {facts.driver_branch}) cannot run CUDA {cuda}: {why}", cuda))
    return problems
