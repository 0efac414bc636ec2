"""Cost items from what a plan registers: read resource inputs by type token, so the figure matches what
`pulumi up` creates (EKS: cluster, node groups with their launch templates, NAT gateways, Elastic IPs, KMS keys,
FSx file systems; GKE: cluster, node pools, Cloud NAT, Filestore, Cloud Monitoring alert conditions; AKS: cluster,
node pools; any platform: PersistentVolumeClaims, load balancers, capacity reservations). GPU pools are priced from
gpufleet.base.capacity; what the stack itself prices (k3s hosts, a declared overhead) and every platform difference
come from the platform's PricingTraits (gpufleet/base/platforms/contract/pricing.py).
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from typing import Any, Optional

from gpufleet.base import labels, platforms
from gpufleet.base.capacity import PoolCapacity
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import charges
from gpufleet.base.catalog import gcp as gcp_catalog
from gpufleet.base.catalog import prices
from gpufleet.base.catalog.charges import Charge, Missing, Price, Rate
from gpufleet.app.plan.cost import Cost, CostItem, stale_prices
from gpufleet.app.plan.mocks import Registration, mock_id
from gpufleet.app.plan.team_cost import team_costs
from gpufleet.base.spec import StackSpec
from gpufleet.base.spec.platforms.gke import MANAGED_LUSTRE_TIERS
from gpufleet.base.versions import chart_name_of

SELF_HOSTED = charges.source_text(["self_hosted"])


def _get(d: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _item(name: str, kind: str, lo: float, hi: float, price: Price, per_unit: float = 1.0, committed: bool = False,
          key: str = "") -> CostItem:
    """An item of `lo`..`hi` units at `price` x `per_unit` each (per_unit: GiB per volume, say)."""
    key = f"{kind}:{key}" if key else ""
    if isinstance(price, Rate):
        return CostItem(name, kind, lo, hi, price.value * per_unit, price.source, committed=committed, key=key,
                        as_of=price.as_of, origin=price.origin)
    return CostItem(name, kind, lo, hi, None, price.reason, committed=committed, key=key)


def _pools_by_name(spec: StackSpec) -> dict[str, Any]:
    """The spec's pools by name, built once per spec (a scan per pool made cost quadratic in the pools, issue 48).
    Kept for the newest spec only, by identity of the spec and of its pool list (a spec compares by value and holds
    lists, so it cannot be a dict key; a plan prices one spec at a time)."""
    pools = spec.node_pools
    if _POOLS_BY_NAME[0] is not spec or _POOLS_BY_NAME[1] is not pools or len(_POOLS_BY_NAME[2]) != len(pools):
        _POOLS_BY_NAME[:] = [spec, pools, {p.name: p for p in pools}]
    return _POOLS_BY_NAME[2]


_POOLS_BY_NAME: list[Any] = [None, None, {}]


def _pool_price(cap: PoolCapacity, spec: StackSpec, region: Optional[str]) -> Price:
    """One node of a GPU pool, as the platform's pricing traits say: unpriced with why, the price the stack declares,
    or the catalog's (for the plan's region where the platform's prices are regional)."""
    pricing = platforms.of(spec).pricing
    pool = _pools_by_name(spec).get(cap.pool)
    if cap.price_per_node_hour is None:
        return Missing(pricing.unpriced_reason(cap))
    declared = pricing.declared_price(pool, cap) if pool is not None else None
    if declared is not None:
        return declared
    if cap.price_fact is None:
        return Missing(f"pool {cap.pool} has no catalog price for its instance/machine type")
    return pricing.catalog_rate(cap, region)


def _pool_items(name: str, cap: PoolCapacity, lo: float, hi: float, price: Price, reservations_created: bool) -> list[CostItem]:
    """A GPU pool's nodes, and the reservation it draws on: a reservation the stack refers to (EC2 Capacity Block or
    ODCR, Compute Engine reservation) is billed for all its instances whether nodes use them or not (EC2 User Guide,
    "Capacity Reservation pricing and billing"; Compute Engine "Reservations of Compute Engine zonal resources"), so
    it is a committed item of that many nodes, and the pool's own item counts only the nodes beyond it."""
    n = cap.reserved_nodes
    if not n or reservations_created:
        return [_item(name, "gpu-nodes", lo, hi, price, key=cap.pool)]
    r = cap.reservation or {}
    what = f"{r.get('type')} {r.get('id') or r.get('name') or ''}".strip()
    return [
        _item(f"reservation {what} of pool {cap.pool} ({n} x {r.get('instanceType') or 'nodes'})", "reservation", n, n, price,
              committed=True, key=cap.pool),
        _item(f"{name}, nodes beyond its reservation's {n}", "gpu-nodes", max(0.0, lo - n), max(0.0, hi - n), price, key=cap.pool),
    ]


def _capacity(capacity: list[PoolCapacity]) -> dict[str, PoolCapacity]:
    return {c.pool: c for c in capacity}


# --- EKS --------------------------------------------------------------------------------------------------------

class _LaunchTemplates:
    """The plan's launch templates, indexed once by the id the plan's mocks gave each and by parent: a node group
    finds its own in constant time (a scan per node group made a plan quadratic in its pools, issue 48)."""

    def __init__(self, resources: list[Registration]):
        self.by_id: dict[str, Registration] = {}
        self.by_parent: dict[Optional[str], Registration] = {}
        for t in resources:
            if t.type == "aws:ec2/launchTemplate:LaunchTemplate":
                self.by_id.setdefault(mock_id(t.type, t.name), t)
                self.by_parent.setdefault(t.parent, t)

    def of(self, ng: Registration) -> Optional[Registration]:
        """The template the node group names by id, else the first one beside it (same parent), else None."""
        return self.by_id.get(_get(ng.inputs, "launchTemplate.id")) or self.by_parent.get(ng.parent)


def _ebs_volumes(ng_name: str, lo: float, hi: float, lt: Optional[Registration], region: Optional[str]) -> list[CostItem]:
    if lt is None:
        return [CostItem(f"{ng_name} root volumes", "storage", lo, hi, None,
                         "no launch template: EKS's default root volume size is not in the plan")]
    out = []
    for m in _get(lt.inputs, "blockDeviceMappings") or []:
        ebs = m.get("ebs") or {}
        size = float(ebs.get("volumeSize") or 0)
        vtype = ebs.get("volumeType") or "gp2"
        price = charges.ebs_gb_hourly(region, vtype)
        if isinstance(price, Rate) and vtype == "gp3":
            extra = charges.ebs_gp3_extra_hourly(region, float(ebs.get("iops") or 0), float(ebs.get("throughput") or 0))
            if isinstance(extra, Rate) and extra.value:
                price = dataclasses.replace(price, value=price.value + extra.value / size)
        out.append(_item(f"{ng_name} {m.get('deviceName', 'volume')} ({vtype}, {size:g} GiB each)", "storage", lo, hi,
                         price, per_unit=size, key=f"{ng_name}:{m.get('deviceName')}"))
    devices = {m.get("deviceName") for m in _get(lt.inputs, "blockDeviceMappings") or []}
    if "/dev/xvdb" in devices and "/dev/xvda" not in devices:
        # Bottlerocket boots from its own OS volume (/dev/xvda) and keeps images on the data volume the launch
        # template maps (/dev/xvdb); the OS volume's size comes from the AMI's snapshot, which the plan cannot see.
        out.append(CostItem(f"{ng_name} /dev/xvda (Bottlerocket OS volume)", "storage", lo, hi, None,
                            "the Bottlerocket AMI's OS volume: billed per node, its size set by the AMI's snapshot, not in the plan",
                            key=f"storage:{ng_name}:/dev/xvda"))
    return out


def eks_items(spec: StackSpec, resources: list[Registration], capacity: list[PoolCapacity], region: Optional[str],
              notes: Optional[list[str]] = None) -> list[CostItem]:
    """EKS's resources; `notes` gets what the control plane's Kubernetes version means for its fee."""
    caps = _capacity(capacity)
    notes = [] if notes is None else notes
    out: list[CostItem] = []
    created = any(r.type == "aws:ec2/capacityReservation:CapacityReservation" for r in resources)
    classes = {_get(r.inputs, "metadata.name"): r for r in resources if r.type == "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"}
    templates = _LaunchTemplates(resources)
    for r in resources:
        if r.type == "kubernetes:karpenter.sh/v1:NodePool":
            out += _karpenter_items(spec, r, classes, caps, region, created)
        if r.type == "aws:eks/cluster:Cluster":
            out.append(_item(f"EKS control plane {r.inputs.get('name', r.name)} (Kubernetes {r.inputs.get('version')})",
                             "control-plane", 1, 1, charges.eks_control_plane(str(r.inputs.get("version"))), key=r.name))
            notes += _eks_support_notes(str(r.inputs.get("version")))
        elif r.type == "aws:eks/nodeGroup:NodeGroup":
            lo = float(_get(r.inputs, "scalingConfig.minSize") or 0)
            hi = float(_get(r.inputs, "scalingConfig.maxSize") or 0)
            pool = (r.inputs.get("labels") or {}).get(labels.POOL_LABEL)
            types = r.inputs.get("instanceTypes") or []
            if pool in caps:
                out += _pool_items(f"GPU pool {pool} ({', '.join(types)})", caps[pool], lo, hi,
                                   _pool_price(caps[pool], spec, region), created)
            else:
                out.append(_item(f"node group {pool or r.name} ({', '.join(types)})", "nodes", lo, hi,
                                 _ec2_price(types, r.inputs.get("capacityType"), region), key=pool or r.name))
            out += _ebs_volumes(f"{pool or r.name}", lo, hi, templates.of(r), region)
        elif r.type == "aws:ec2/natGateway:NatGateway":
            out.append(_item(f"NAT gateway {r.name}", "network", 1, 1, charges.nat_gateway_hourly(region), key=r.name))
        elif r.type == "aws:ec2/vpcEndpoint:VpcEndpoint" and r.inputs.get("vpcEndpointType") == "Interface":
            # Billed per endpoint per Availability Zone (one network interface per subnet, one subnet per zone);
            # gateway endpoints (S3) have no hourly charge (charges.yaml privatelink_pricing).
            zones = float(len(r.inputs.get("subnetIds") or []))
            out.append(_item(f"VPC endpoint {r.name} ({zones:g} AZ)", "network", zones, zones,
                             charges.interface_endpoint_az_hourly(region), key=r.name))
        elif r.type == "aws:ec2/eip:Eip":
            out.append(_item(f"public IPv4 address {r.name}", "network", 1, 1, charges.public_ipv4_hourly(region), key=f"ip:{r.name}"))
        elif r.type == "aws:kms/key:Key":
            out.append(_item(f"KMS key {r.name}", "key", 1, 1, charges.kms_key_hourly(), key=r.name))
        elif r.type == "aws:fsx/lustreFileSystem:LustreFileSystem":
            size = float(r.inputs.get("storageCapacity") or 0)
            price = charges.fsx_lustre_gb_hourly(region, str(r.inputs.get("deploymentType")),
                                                 _int(r.inputs.get("perUnitStorageThroughput")))
            out.append(_item(f"FSx for Lustre {r.name} ({r.inputs.get('deploymentType')}, {size:g} GiB)", "storage",
                             1, 1, price, per_unit=size, key=r.name))
        elif r.type == "aws:ec2/capacityReservation:CapacityReservation":
            n = float(r.inputs.get("instanceCount") or 0)
            out.append(_item(f"capacity reservation {r.name} ({r.inputs.get('instanceType')})", "reservation", n, n,
                             _ec2_price([r.inputs.get("instanceType")], "ON_DEMAND", region), committed=True, key=r.name))
        elif r.type == "aws:amp/scraper:Scraper":
            # The collector bills per hour it runs (and per sample: usage); the workspace only by usage (ingested,
            # stored and queried samples), so it is no hourly item (catalog charges.yaml, amp_pricing).
            out.append(_item(f"AWS managed collector (Amazon Managed Service for Prometheus) {r.inputs.get('alias') or r.name}",
                             "monitoring", 1, 1, charges.amp_collector_hourly(region), key=r.name))
        elif r.type in ("aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer",
                        "aws:elb/loadBalancer:LoadBalancer"):
            out.append(_item(f"load balancer {r.name}", "load-balancer", 1, 1,
                             Missing("Elastic Load Balancing prices are not in the catalog"), key=r.name))
    return out


def _eks_support_notes(version: str) -> list[str]:
    """What the EKS version's support calendar means for the control plane's fee."""
    status, end = charges.eks_support(version)
    if status == "standard" and end:
        return [f"EKS {version} leaves standard support on {end}: from then the control plane costs the extended-support "
                "rate unless the cluster is upgraded"]
    if status == "extended":
        return [f"EKS {version} is in extended support since {end}: the control plane costs the extended-support rate "
                "until the cluster is upgraded"]
    return []


def _karpenter_items(spec: StackSpec, r: Registration, classes: dict, caps: dict[str, PoolCapacity], region: Optional[str],
                     created: bool) -> list[CostItem]:
    """A Karpenter GPU pool (NodePool + EC2NodeClass): from none to the pool's maxNodes (its NodePool's GPU limit),
    priced by the first instance type it allows, as a managed node group is; the EC2NodeClass's volumes per node."""
    pool = _get(r.inputs, "spec.template.metadata.labels") or {}
    pool = pool.get(labels.POOL_LABEL)
    cap = caps.get(pool)
    if cap is None:
        return []
    types = next((q.get("values") or [] for q in _get(r.inputs, "spec.template.spec.requirements") or []
                  if q.get("key") == "node.kubernetes.io/instance-type"), [])
    lo, hi = float(cap.min_nodes), float(cap.max_nodes)
    out = _pool_items(f"GPU pool {pool} (Karpenter: {', '.join(types)})", cap, lo, hi, _pool_price(cap, spec, region), created)
    node_class = classes.get(_get(r.inputs, "spec.template.spec.nodeClassRef.name"))
    for m in (_get(node_class.inputs, "spec.blockDeviceMappings") if node_class else None) or []:
        ebs = m.get("ebs") or {}
        size = gib(ebs.get("volumeSize")) or 0.0
        vtype = ebs.get("volumeType") or "gp3"
        out.append(_item(f"{pool} {m.get('deviceName', 'volume')} ({vtype}, {size:g} GiB each)", "storage", lo, hi,
                         charges.ebs_gb_hourly(region, vtype), per_unit=size, key=f"{pool}:{m.get('deviceName')}"))
    return out


def _int(x: Any) -> Optional[int]:
    try:
        return int(float(x))
    except (TypeError, ValueError):
        return None


def _ec2_price(types: list, capacity_type: Optional[str], region: Optional[str]) -> Price:
    """First instance type's price (managed node groups launch on-demand nodes in the listed order)."""
    if not types or not types[0]:
        return Missing("no instance type")
    spot = capacity_type == "SPOT"
    fact = prices.aws_instance_price(str(types[0]), "spot" if spot else "on-demand", region)
    if fact is None:
        if region != prices.HAND_REGION["aws"]:
            return Missing(f"the catalog's EC2 prices are us-east-1 figures; none for {region}")
        if str(types[0]) not in aws_catalog.instance_types():
            return Missing(f"{types[0]} is not in gpufleet/catalog/aws_instances.yaml")
        return Missing(f"no price for {types[0]} in gpufleet/catalog/aws_instances.yaml")
    return Rate(fact.value, f"{types[0]} {'spot estimate' if spot else 'on-demand'}: {fact.source}", fact.as_of, fact.origin)


# --- GKE --------------------------------------------------------------------------------------------------------

def _gke_counts(r: Registration) -> tuple[float, float]:
    auto = r.inputs.get("autoscaling") or {}
    if "totalMinNodeCount" in auto or "totalMaxNodeCount" in auto:
        return float(auto.get("totalMinNodeCount") or 0), float(auto.get("totalMaxNodeCount") or 0)
    zones = len(r.inputs.get("nodeLocations") or []) or 1
    if auto:
        return float(auto.get("minNodeCount") or 0) * zones, float(auto.get("maxNodeCount") or 0) * zones
    n = float(r.inputs.get("nodeCount") or r.inputs.get("initialNodeCount") or 0) * zones
    return n, n


def gke_items(spec: StackSpec, resources: list[Registration], capacity: list[PoolCapacity], region: Optional[str],
              notes: list[str]) -> list[CostItem]:
    caps = _capacity(capacity)
    out: list[CostItem] = []
    nodes_lo = nodes_hi = 0.0
    nats: list[Registration] = []
    created = any(r.type == "gcp:compute/reservation:Reservation" for r in resources)
    for r in resources:
        if r.type == "gcp:container/cluster:Cluster":
            location = str(r.inputs.get("location") or "")
            zonal = location.count("-") >= 2
            version = r.inputs.get("minMasterVersion")
            channel = (r.inputs.get("releaseChannel") or {}).get("channel")
            fee = charges.gke_cluster_fee(str(version), channel) if version else charges.gke_cluster_fee()
            out.append(_item(f"GKE cluster management fee {r.inputs.get('name', r.name)} "
                             f"({'zonal' if zonal else 'regional'}, {location})", "control-plane", 1, 1, fee, key=r.name))
            if version:
                notes += _gke_support_notes(str(version), channel)
            credit = charges.gke_free_tier_credit()
            notes.append(
                f"GKE free tier: {credit:.2f} USD of monthly credit per billing account, for zonal and Autopilot clusters only "
                + ("(this zonal cluster may be covered if it is the account's only one: not subtracted here)" if zonal
                   else "(not for this regional cluster)"))
        elif r.type == "gcp:container/nodePool:NodePool":
            lo, hi = _gke_counts(r)
            nodes_lo, nodes_hi = nodes_lo + lo, nodes_hi + hi
            config = r.inputs.get("nodeConfig") or {}
            pool = (config.get("labels") or {}).get(labels.POOL_LABEL) or r.inputs.get("name") or r.name
            machine = config.get("machineType")
            if pool in caps:
                out += _pool_items(f"GPU pool {pool} ({machine})", caps[pool], lo, hi, _pool_price(caps[pool], spec, region), created)
            else:
                out.append(_item(f"node pool {pool} ({machine})", "nodes", lo, hi, charges.gce_machine_hourly(region, str(machine)),
                                 key=pool))
            size = float(config.get("diskSizeGb") or 100)  # GKE's default boot disk: 100 GB
            dtype = config.get("diskType") or "pd-balanced"
            out.append(_item(f"{pool} boot disks ({dtype}, {size:g} GiB each)", "storage", lo, hi,
                             charges.pd_gib_hourly(region, dtype), per_unit=size, key=f"{pool}:boot"))
        elif r.type == "gcp:compute/routerNat:RouterNat":
            nats.append(r)
        elif r.type == "gcp:filestore/instance:Instance":
            tier = str(r.inputs.get("tier") or "BASIC_HDD")
            size = float(_get(r.inputs, "fileShares.capacityGb") or 0)
            out.append(_item(f"Filestore {r.name} ({tier}, {size:g} GiB)", "storage", 1, 1,
                             charges.filestore_gib_hourly(region, tier), per_unit=size, key=r.name))
        elif r.type == "gcp:compute/reservation:Reservation":
            n = float(_get(r.inputs, "specificReservation.count") or 0)
            machine = _get(r.inputs, "specificReservation.instanceProperties.machineType")
            out.append(_item(f"reservation {r.name} ({machine})", "reservation", n, n, _gce_gpu_price(machine, region),
                             committed=True, key=r.name))
        elif r.type == "gcp:monitoring/alertPolicy:AlertPolicy":
            n = float(len(r.inputs.get("conditions") or []))
            out.append(_item(f"Cloud Monitoring alert policy {r.inputs.get('displayName') or r.name} ({n:g} condition"
                             f"{'' if n == 1 else 's'})", "monitoring", n, n, charges.monitoring_alert_condition_hourly(), key=r.name))
        elif r.type in ("gcp:compute/forwardingRule:ForwardingRule", "gcp:compute/globalForwardingRule:GlobalForwardingRule"):
            out.append(_item(f"load balancer {r.name}", "load-balancer", 1, 1,
                             Missing("Cloud Load Balancing prices are not in the catalog"), key=r.name))
    for r in nats:
        out.append(_cloud_nat(r, region, nodes_lo, nodes_hi))
    return out


def _gke_support_notes(version: str, channel: Optional[str]) -> list[str]:
    """What the GKE minor's support calendar means for the fee, as EKS's notes say it (items_for)."""
    status, end = charges.gke_support(version)
    extra = f"{charges.gke_extended_hourly():.2f}"
    if status == "standard" and end:
        if channel == "EXTENDED":
            return [f"GKE {version} leaves standard support on {end}: from then the cluster management fee is {extra} USD per "
                    "cluster-hour (Extended channel) unless the cluster is upgraded"]
        return [f"GKE {version} leaves standard support on {end}: GKE then upgrades clusters on the {channel or 'default'} "
                f"channel (on the Extended channel it would bill {extra} USD per cluster-hour instead)"]
    if status == "extended":
        if channel == "EXTENDED":
            return [f"GKE {version} is in extended support since {end}: the cluster management fee is {extra} USD per "
                    "cluster-hour until the cluster is upgraded"]
        return [f"GKE {version} is past standard support since {end}: on the {channel or 'default'} channel GKE upgrades "
                "the cluster to a supported minor (only the Extended channel keeps it, at "
                f"{extra} USD per cluster-hour)"]
    return []


def _gce_gpu_price(machine: Any, region: Optional[str]) -> Price:
    if region != "us-central1":
        return Missing(f"the catalog's Compute Engine GPU prices are us-central1 figures; none for {region}")
    try:
        m = gcp_catalog.machine(str(machine))
    except KeyError:
        return Missing(f"{machine} is not in gpufleet/catalog/gcp_machines.yaml")
    fact = prices.gcp_machine_price(m.name, "on-demand", m.fixed_count or 0, region)
    if fact is None:
        return Missing(f"{machine} has no on-demand price in gpufleet/catalog/gcp_machines.yaml")
    return Rate(fact.value, f"{machine} on-demand: {fact.source}", fact.as_of, fact.origin)


def _cloud_nat(r: Registration, region: Optional[str], lo: float, hi: float) -> CostItem:
    """Cloud NAT: per VM using it (every node of the cluster: nodes are private), capped at 32 VMs, plus its
    external addresses (AUTO_ONLY: as many as the VMs' ports need; MANUAL_ONLY: the listed ones)."""
    row = charges.cloud_nat(region)
    name = f"Cloud NAT {r.name}"
    if row is None:
        return _item(name, "network", 1, 1, charges.cloud_nat_hourly(region, 0, 0))
    manual = r.inputs.get("natIps") or []

    def ips(vms: float) -> int:
        return len(manual) if r.inputs.get("natIpAllocateOption") == "MANUAL_ONLY" else max(1, math.ceil(vms / row["vms_per_ip"]))

    h_lo = charges.cloud_nat_hourly(region, int(lo), ips(lo))
    h_hi = charges.cloud_nat_hourly(region, int(hi), ips(hi))
    return CostItem(f"{name} ({_num(lo)}-{_num(hi)} VMs, {_span(ips(lo), ips(hi))} NAT IP(s))", "network", 1, 1, None,
                    row["source"], hourly_min_override=round(h_lo.value, 6), hourly_max_override=round(h_hi.value, 6),
                    key=f"network:{r.name}", as_of=h_hi.as_of, origin=h_hi.origin)


def _span(a: int, b: int) -> str:
    return str(a) if a == b else f"{a}-{b}"


def _num(x: float):
    return int(x) if float(x).is_integer() else x


# --- what the stack states: hosts, pools no registered resource prices, overhead --------------------------------

def _charge(c: Charge) -> CostItem:
    return _item(c.name, c.kind, 1, 1, c.price, key=c.key)


def capacity_pool_items(spec: StackSpec, capacity: list[PoolCapacity], priced: set[str]) -> list[CostItem]:
    """GPU pools no registered resource priced (`priced`: the keys of the items so far), from their capacity: k3s
    hosts, an existing cluster's pools, a platform whose resources this module does not read. Each counts its
    minimum..maximum nodes at its price (PricingTraits: unpriced with why when it has none)."""
    return [_item(f"GPU pool {c.pool} ({c.gpu})", "gpu-nodes", c.min_nodes, c.max_nodes, _pool_price(c, spec, None), key=c.pool)
            for c in capacity if f"gpu-nodes:{c.pool}" not in priced]


# --- any platform: claims ---------------------------------------------------------------------------------------

_QUANTITY = {"Ki": 2**-20, "Mi": 2**-10, "Gi": 1, "Ti": 2**10, "Pi": 2**20, "K": 1e3 / 2**30, "M": 1e6 / 2**30,
             "G": 1e9 / 2**30, "T": 1e12 / 2**30}


def gib(quantity: Any) -> Optional[float]:
    """A Kubernetes storage quantity in GiB ('2Ti' -> 2048)."""
    text = str(quantity or "")
    for suffix in sorted(_QUANTITY, key=len, reverse=True):
        if text.endswith(suffix):
            try:
                return float(text[: -len(suffix)]) * _QUANTITY[suffix]
            except ValueError:
                return None
    try:
        return float(text) / 2**30
    except ValueError:
        return None


def _class_price(sc: Registration, region: Optional[str], size: Optional[float]) -> tuple[Price, Optional[float], str]:
    """(price per GiB-hour, the size actually billed, what is billed) of a claim of `size` GiB on a StorageClass."""
    provisioner = sc.inputs.get("provisioner")
    params = sc.inputs.get("parameters") or {}
    if provisioner == "ebs.csi.aws.com":
        return charges.ebs_gb_hourly(region, str(params.get("type", "gp3"))), size, f"EBS {params.get('type', 'gp3')}"
    if provisioner == "pd.csi.storage.gke.io":
        return charges.pd_gib_hourly(region, str(params.get("type", "pd-balanced"))), size, str(params.get("type"))
    if provisioner == "filestore.csi.storage.gke.io":
        tier = charges.filestore_tier(str(params.get("tier", "standard")))
        least = charges.filestore_min_gib(tier, gke_csi=True) or 0
        return charges.filestore_gib_hourly(region, tier), max(size or 0, least), f"Filestore {tier} (at least {least} GiB)"
    if provisioner == "fsx.csi.aws.com":
        least = charges.fsx_lustre_min_gib()
        price = charges.fsx_lustre_gb_hourly(region, str(params.get("deploymentType")), _int(params.get("perUnitStorageThroughput")))
        return price, max(size or 0, least), (f"FSx for Lustre {params.get('deploymentType')} "
                                             f"{params.get('perUnitStorageThroughput')} MB/s/TiB (at least {least} GiB)")
    if provisioner == "lustre.csi.storage.gke.io":
        tier = _int(params.get("perUnitStorageThroughput")) or 1000
        least = MANAGED_LUSTRE_TIERS.get(tier, 0)
        # No Managed Lustre price was read (cloud.google.com/products/managed-lustre/pricing was not readable through
        # the search tool, 2026-12-04): listed unpriced at the size billed, never a silent zero.
        return (Missing(f"Managed Lustre {tier} MB/s/TiB is not in the catalog (cloud.google.com/managed-lustre/pricing)"),
                max(size or 0, least), f"Managed Lustre {tier} MB/s/TiB (at least {least} GiB)")
    if provisioner in ("rancher.io/local-path", "nfs.csi.k8s.io"):
        return Rate(0.0, SELF_HOSTED), size, "storage on your own hosts"
    return Missing(f"no price for StorageClass provisioner {provisioner}"), size, str(provisioner)


def claim_items(resources: list[Registration], region: Optional[str], default_on_hosts: Optional[str] = None) -> list[CostItem]:
    """Storage claims at their StorageClass's price. `default_on_hosts`: what a claim on the cluster's default class
    (which the stack does not create) is when it lands on the hosts' own disks (PricingTraits.default_storage_on_hosts);
    None: such a claim is unpriced."""
    classes = {_get(r.inputs, "metadata.name"): r for r in resources if r.type == "kubernetes:storage.k8s.io/v1:StorageClass"}
    default = next((r for r in classes.values()
                    if _get(r.inputs, "metadata.annotations") and
                    _get(r.inputs, "metadata.annotations").get(labels.DEFAULT_STORAGE_CLASS_ANNOTATION) == "true"), None)
    out, claimed = [], set()
    for r in resources:
        if r.type != "kubernetes:core/v1:PersistentVolumeClaim":
            continue
        name = _get(r.inputs, "spec.storageClassName")
        sc = classes.get(name) or (default if name is None else None)
        size = gib(_get(r.inputs, "spec.resources.requests.storage"))
        claim = f"claim {_get(r.inputs, 'metadata.name') or r.name}"
        if sc is None:
            out.append(_item(claim, "storage", 1, 1, Missing(f"StorageClass {name} is not created by this stack"),
                             key=f"claim:{r.name}"))
            continue
        claimed.add(_get(sc.inputs, "metadata.name"))
        price, billed, what = _class_price(sc, region, size)
        out.append(_item(f"{claim} ({what}, {billed or 0:g} GiB)", "storage", 1, 1, price, per_unit=billed or 0,
                         key=f"claim:{r.name}"))
    out += _chart_claim_items(resources, classes, default, region, default_on_hosts)
    for name, sc in classes.items():  # file-system classes provision a whole file system per claim
        if name in claimed or sc.inputs.get("provisioner") not in (
                "fsx.csi.aws.com", "filestore.csi.storage.gke.io", "lustre.csi.storage.gke.io"):
            continue
        price, billed, what = _class_price(sc, region, 0)
        out.append(_item(f"StorageClass {name}: each claim creates a {what}", "per-claim", 0, 0, price, per_unit=billed or 0,
                         key=str(name)))
    return out


# Charts whose values make their operator create PersistentVolumeClaims (no PVC is registered by the program, so the
# claim is read from the values): chart name -> key path of a PVC spec.
CHART_CLAIMS = {"kube-prometheus-stack": "values.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate.spec"}


def _chart_claim_items(resources: list[Registration], classes: dict, default: Optional[Registration],
                       region: Optional[str], default_on_hosts: Optional[str]) -> list[CostItem]:
    """The volume Prometheus claims (gpufleet:observability with kube-prometheus-stack), priced like any claim on
    its StorageClass (gp3 on EKS), or on the hosts' own disks where the platform's default class puts it (k3s local-path)."""
    out = []
    for r in resources:
        chart = chart_name_of(str(r.inputs.get("chart", "")), str(r.inputs.get("version", "")))
        path = CHART_CLAIMS.get(chart) if r.type == "kubernetes:helm.sh/v3:Release" else None
        spec = _get(r.inputs, path) if path else None
        if not isinstance(spec, dict):
            continue
        name = spec.get("storageClassName")
        sc = classes.get(name) or (default if name is None else None)
        size = gib(_get(spec, "resources.requests.storage"))
        # Named by the chart and its release, never by the chart's source (a URL, an OCI reference or a path as long as
        # the table is wide); the source is in the plan's resources.
        release = r.inputs.get("name") or r.name
        claim = f"Prometheus volume of {chart}" + (f" release {release}" if release != chart else "")
        if sc is None and name is None and default_on_hosts:
            price, billed, what = Rate(0.0, SELF_HOSTED), size, default_on_hosts
        elif sc is None:
            out.append(_item(claim, "storage", 1, 1, Missing(f"StorageClass {name or '(cluster default)'} is not created by this stack"),
                             key=f"claim:{r.name}"))
            continue
        else:
            price, billed, what = _class_price(sc, region, size)
        out.append(_item(f"{claim} ({what}, {billed or 0:g} GiB)", "storage", 1, 1, price, per_unit=billed or 0, key=f"claim:{r.name}"))
    return out


def aks_items(spec: StackSpec, resources: list[Registration], capacity: list[PoolCapacity], region: Optional[str],
              notes: list[str]) -> list[CostItem]:
    """AKS: the cluster's management fee by pricing tier (sku_tier), its system pool and OS disks, and each GPU node
    pool, priced in the cluster's location (`region`) from the catalog's undated snapshot of GPU VM prices
    (gpufleet/base/catalog/azure_vms.yaml says from where). CPU VM, managed disk and load balancer prices are not in the
    catalog: those items are listed unpriced, so totals read "at least"."""
    caps = _capacity(capacity)
    out: list[CostItem] = []
    unread = "Azure CPU VM prices are not in the catalog (azure_vms.yaml holds GPU sizes only)"
    for r in resources:
        if r.type == "azure-native:containerservice:ManagedCluster":
            cluster = r.inputs.get("resourceName") or r.name
            tier = str((r.inputs.get("sku") or {}).get("tier") or "Free")
            plan = r.inputs.get("supportPlan") or "KubernetesOfficial"
            out.append(_item(f"AKS cluster management {cluster} ({tier} tier, {plan})", "control-plane",
                             1, 1, charges.aks_tier_fee(tier), key=r.name))
            pool = next(iter(r.inputs.get("agentPoolProfiles") or []), None) or {}
            lo, hi = float(pool.get("minCount") or 0), float(pool.get("maxCount") or 0)
            out.append(_item(f"system pool {pool.get('name')} ({pool.get('vmSize')})", "nodes", lo, hi,
                             Missing(unread), key="system"))
            out.append(_item(f"system pool OS disks ({pool.get('osDiskSizeGB') or 128:g} GiB each)", "storage", lo, hi,
                             Missing("Azure managed disk prices are not in the catalog"), key="system:boot"))
            out.append(_item(f"AKS outbound load balancer of {cluster} (Standard SKU)", "load-balancer",
                             1, 1, Missing("Azure Load Balancer prices are not in the catalog"), key=f"{r.name}:lb"))
            if tier == "Premium":
                notes.append("AKS Premium tier: 0.60 USD per cluster-hour is the Retail Prices API's 'Standard Long Term "
                             "Support' meter; whether it is billed besides the 0.10 Uptime SLA meter was not read, so the "
                             "fee may be 0.70 (charges.yaml aks)")
        elif r.type == "azure-native:containerservice:AgentPool":
            lo, hi = float(r.inputs.get("minCount") or 0), float(r.inputs.get("maxCount") or 0)
            pool = (r.inputs.get("nodeLabels") or {}).get(labels.POOL_LABEL) or r.inputs.get("agentPoolName") or r.name
            vm = r.inputs.get("vmSize")
            if pool in caps:
                out += _pool_items(f"GPU pool {pool} ({vm}, {r.inputs.get('scaleSetPriority') or 'Regular'})", caps[pool],
                                   lo, hi, _pool_price(caps[pool], spec, region), False)
            else:
                out.append(_item(f"node pool {pool} ({vm})", "nodes", lo, hi, Missing(unread), key=pool))
            out.append(_item(f"{pool} OS disks ({r.inputs.get('osDiskSizeGB') or 128:g} GiB each)", "storage", lo, hi,
                             Missing("Azure managed disk prices are not in the catalog"), key=f"{pool}:boot"))
    return out


def items_for(spec: StackSpec, resources: list[Registration], capacity: list[PoolCapacity], region: Optional[str],
              today: Optional[datetime.date] = None) -> Cost:
    """`today`: the day prices' ages are judged on (default: today, UTC).

    The items: each cloud's resources the plan registers (read by type token: a stack registers only its platform's),
    the hosts the stack prices itself, the GPU pools no registered resource priced, the overhead the stack declares
    (the platform's PricingTraits), then storage claims and load balancers on any platform."""
    notes: list[str] = []
    pricing = platforms.of(spec).pricing
    items = (eks_items(spec, resources, capacity, region, notes) + gke_items(spec, resources, capacity, region, notes)
             + aks_items(spec, resources, capacity, region, notes))
    items += [_charge(c) for c in pricing.hosts(spec)]
    items += capacity_pool_items(spec, capacity, {i.key for i in items})
    items += [_charge(c) for c in pricing.overhead(spec)]
    items += claim_items(resources, region, pricing.default_storage_on_hosts)
    for r in resources:
        if r.type == "kubernetes:core/v1:Service" and _get(r.inputs, "spec.type") == "LoadBalancer":
            items.append(_item(f"load balancer of Service {_get(r.inputs, 'metadata.name') or r.name}", "load-balancer",
                               1, 1, Missing("the cloud's load balancer for a Service is not priced in the catalog"),
                               key=f"service:{r.name}"))
    for r in resources:
        # gpufleet:serving's Gateway: its controller makes a load balancer at run time (GKE's managed classes a
        # regional Application Load Balancer; Envoy Gateway a LoadBalancer Service for its proxy, which EKS backs with
        # an ELB; a platform that serves it on its own nodes says so: PricingTraits.gateway_load_balancer_billed).
        if r.type == "kubernetes:gateway.networking.k8s.io/v1:Gateway" and pricing.gateway_load_balancer_billed:
            items.append(_item(f"load balancer of Gateway {_get(r.inputs, 'metadata.name') or r.name}", "load-balancer",
                               1, 1, Missing("the cloud's load balancer for a Gateway is not priced in the catalog"),
                               key=f"gateway:{r.name}"))
    if any(r.type in ("aws:amp/scraper:Scraper", "aws:amp/workspace:Workspace") for r in resources):
        notes.append("Amazon Managed Service for Prometheus bills metric samples collected, ingested, stored and queried "
                     "by usage: not in these figures (aws.amazon.com/prometheus/pricing)")
    if any(r.type == "aws:amp/alertManagerDefinition:AlertManagerDefinition" for r in resources):
        notes.append("alert notifications to the SNS topic are billed by Amazon SNS per message published and delivered "
                     "(usage): not in these figures (aws.amazon.com/sns/pricing)")
    if any(r.type == "aws:ec2/vpcEndpoint:VpcEndpoint" for r in resources):
        notes.append("VPC endpoints bill data processed per GB (usage): not in these figures; gateway endpoints (S3) "
                     "have no hourly charge (aws.amazon.com/privatelink/pricing)")
    notes.append("usage-billed charges are not in these figures: data processed by NAT, data transfer, requests, logs")
    unpriced_pools = [c.pool for c in capacity if c.price_per_node_hour is None]
    pool_prices = {c.pool: _pool_price(c, spec, region) for c in capacity}
    day = today or datetime.datetime.now(datetime.timezone.utc).date()
    return Cost(items=items, teams=team_costs(spec, capacity, pool_prices), notes=notes, unpriced_pools=unpriced_pools,
                price_warnings=stale_prices(items, day), gpus_per_node={c.pool: c.gpus_per_node for c in capacity})
