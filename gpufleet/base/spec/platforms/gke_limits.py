"""What GCP and GKE accept of a GKE stack (part of GkeKeys.checks): the address plan, zones and subnetwork in the
cluster's region, node pool names.

Address plan: the control plane's private endpoint range "must be a /28" from a private range (GKE "Create a private
cluster": --master-ipv4-cidr); the node subnet, pod and service ranges, the control-plane range and the GPUDirect
range must not overlap (a VPC refuses overlapping subnet ranges, "Subnets: IPv4 ranges ... must not overlap"; GKE
refuses a master range that overlaps a subnet of the network); at most 50 authorized networks (100 with a
private-only endpoint). (Ranges with host bits set are refused in gke.py already.) With a regional Gateway class
(serving.REGIONAL_PROXY_CLASSES) on a network gpufleet creates, the proxy-only subnet's range joins the ranges that
must not overlap and must hold at least 64 addresses, a /26 or shorter ("Proxy-only subnets for Envoy-based load
balancers", docs.cloud.google.com/load-balancing/docs/proxy-only-subnets); on an existing network it must already
exist, which the plan cannot see: a warning says so (network_checks.warnings).
Region: the region is cluster.gke.region. A zone name is its region plus '-<letter>' (us-central1-a); a cluster's
node locations and a node pool's locations must be zones of the cluster's region (GKE API NodePool.locations), and an
existing subnetwork given as a self link names its region (.../regions/<region>/subnetworks/<name>).
Names: GKE node pools are named after the pool: "The name must start with a lowercase letter followed by up to 39
lowercase letters, numbers, or hyphens, and cannot end with a hyphen" (GKE API projects.locations.clusters.
nodePools create, NodePool.name; gcloud container node-pools create NAME). A pool name may start with a digit as a
Kubernetes label value, not as a GKE node pool.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Optional

from gpufleet.base.spec.checks.network_checks import overlaps
from gpufleet.base.spec.checks.region_checks import gcp_zone_region
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import needs_proxy_only_subnet

NS = "gpufleet"
_SUBNET_REGION = re.compile(r"/regions/([a-z0-9-]+)/subnetworks/")
GKE_POOL_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
GKE_MASTER_PREFIX = 28
GKE_PROXY_ONLY_MAX_PREFIX = 26  # 64 addresses, the smallest proxy-only subnet (module docstring)
# "You can add up to 50 authorized networks (100 if the cluster has only a private endpoint)" (GKE "Authorized
# networks for control plane access": limits; secondary reading 2026-12-02, verify on a GKE upgrade).
GKE_AUTHORIZED_NETWORKS = 50
GKE_AUTHORIZED_NETWORKS_PRIVATE = 100


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    """The address plan, the region, node pool names."""
    return _network(stack, spec) + _region(stack, spec) + _names(stack, spec)


def _network(stack: str, spec: Any) -> list[Problem]:
    gke = spec.cluster.gke
    if gke is None:
        return []
    net = gke.network
    problems = []
    # The control-plane range is used with private nodes only (components/gke/cluster.py).
    ranges = [("cluster.gke.masterIpv4Cidr", gke.master_ipv4_cidr)] if gke.private_nodes else []
    if net.existing is None:
        ranges += [("cluster.gke.network.subnetCidr", net.subnet_cidr), ("cluster.gke.network.podsCidr", net.pods_cidr),
                   ("cluster.gke.network.servicesCidr", net.services_cidr)]
    if net.existing is None and needs_proxy_only_subnet(spec):
        ranges.append(("cluster.gke.network.proxyOnlyCidr", net.proxy_only_cidr))
        proxy = ipaddress.ip_network(net.proxy_only_cidr, strict=False)
        if proxy.version != 4 or proxy.prefixlen > GKE_PROXY_ONLY_MAX_PREFIX:
            problems.append(Problem(stack, f"{NS}:cluster.gke.network.proxyOnlyCidr", "the regional load balancer's "
                                    f"proxy-only subnet needs at least 64 IPv4 addresses: a /{GKE_PROXY_ONLY_MAX_PREFIX} or "
                                    "shorter prefix (default 10.129.0.0/23)", net.proxy_only_cidr))
    if any(p.rdma for p in spec.node_pools) or "gpu_direct_cidr" in net.model_fields_set:
        ranges.append(("cluster.gke.network.gpuDirectCidr", net.gpu_direct_cidr))
    limit = GKE_AUTHORIZED_NETWORKS_PRIVATE if gke.private_endpoint else GKE_AUTHORIZED_NETWORKS
    if len(gke.authorized_networks) > limit:
        endpoint = "a private-only endpoint" if gke.private_endpoint else "a public endpoint"
        problems.append(Problem(stack, f"{NS}:cluster.gke.authorizedNetworks", f"GKE takes at most {limit} authorized networks "
                                f"for a control plane with {endpoint}; merge CIDRs", len(gke.authorized_networks)))
    master = ipaddress.ip_network(gke.master_ipv4_cidr, strict=False)
    if gke.private_nodes and (master.version != 4 or master.prefixlen != GKE_MASTER_PREFIX or not master.is_private):
        problems.append(Problem(stack, f"{NS}:cluster.gke.masterIpv4Cidr", f"the control plane's range must be a private IPv4 "
                                f"/{GKE_MASTER_PREFIX}, e.g. 172.16.0.0/28", gke.master_ipv4_cidr))
    return problems + overlaps(stack, ranges, "pod, service, node, control-plane and GPUDirect ranges must not overlap")


def _region(stack: str, spec: Any) -> list[Problem]:
    gke = spec.cluster.gke
    if gke is None:
        return []
    region = gke.region
    problems = []

    def zone(path: str, value: Optional[str]) -> None:
        if value and gcp_zone_region(value) != region:
            problems.append(Problem(stack, path, f"not a zone of the cluster's region {region} (cluster.gke.region; zones "
                                    f"there are {region}-a, {region}-b, ...)", value))

    zone(f"{NS}:cluster.gke.zone", gke.zone)
    for i, z in enumerate(gke.node_zones):
        zone(f"{NS}:cluster.gke.nodeZones[{i}]", z)
    for i, pool in enumerate(spec.node_pools):
        for j, z in enumerate((pool.gke.zones if pool.gke else [])):
            zone(f"{NS}:nodePools[{i}].gke.zones[{j}]", z)
    existing = gke.network.existing
    if existing is not None:
        found = _SUBNET_REGION.search(existing.subnetwork)
        if found and found.group(1) != region:
            problems.append(Problem(stack, f"{NS}:cluster.gke.network.existing.subnetwork", f"the subnetwork is in "
                                    f"{found.group(1)}, but a GKE cluster's subnetwork must be in its region {region}",
                                    existing.subnetwork))
    return problems


def _names(stack: str, spec: Any) -> list[Problem]:
    problems = []
    for i, pool in enumerate(spec.node_pools):
        if not GKE_POOL_NAME.match(pool.name):
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].name", "not a GKE node pool name: it must start with a "
                                    "lowercase letter (then lowercase letters, digits, '-'), at most 40 characters, e.g. "
                                    "l4-infer", pool.name))
    return problems
