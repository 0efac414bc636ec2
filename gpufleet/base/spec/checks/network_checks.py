"""Address plans the clouds accept (called from `_cross_checks`).

EKS, new VPC: components/eks/network.py carves the VPC into eighths (one private subnet per zone, prefix + 3)
and cuts the last eighth into 64ths (one public subnet per zone, prefix + 6). "The allowed block size is between
a /16 netmask (65,536 IP addresses) and /28 netmask (16 IP addresses)" for a VPC and for each subnet (Amazon VPC
User Guide, "VPC CIDR blocks" and "Subnet CIDR blocks"), so the VPC must be /16 to /22, and the carving has room
for 7 zones.
GKE: the control plane's private endpoint range "must be a /28" from a private range (GKE "Create a private
cluster": --master-ipv4-cidr); the node subnet, pod and service ranges, the control-plane range and the GPUDirect
range must not overlap (a VPC refuses overlapping subnet ranges, "Subnets: IPv4 ranges ... must not overlap"; GKE
refuses a master range that overlaps a subnet of the network); at most 50 authorized networks (100 with a
private-only endpoint). (Ranges with host bits set are refused in gke.py already.) With a regional Gateway class
(serving.REGIONAL_PROXY_CLASSES) on a network gpufleet creates, the proxy-only subnet's range joins the ranges that
must not overlap and must hold at least 64 addresses, a /26 or shorter ("Proxy-only subnets for Envoy-based load
balancers", docs.cloud.google.com/load-balancing/docs/proxy-only-subnets); on an existing network it must already
exist, which the plan cannot see: a warning says so.
k3s: an RDMA pool's pod range must not overlap k3s's cluster and service CIDRs (defaults 10.42.0.0/16 and
10.43.0.0/16, docs.k3s.io/cli/server "--cluster-cidr", "--service-cidr"), or pods route RDMA traffic into the
cluster network; nor may a host's own address lie in those CIDRs or in an RDMA pool's range.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import needs_proxy_only_subnet

NS = "gpufleet"
AWS_SUBNET_PREFIXES = (16, 28)
EKS_PRIVATE_SPLIT = 3  # private subnets: eighths of the VPC
EKS_PUBLIC_SPLIT = 6  # public subnets: 64ths (eighths of the last eighth)
EKS_MAX_ZONES = 7
GKE_MASTER_PREFIX = 28
GKE_PROXY_ONLY_MAX_PREFIX = 26  # 64 addresses, the smallest proxy-only subnet (module docstring)
# "You can add up to 50 authorized networks (100 if the cluster has only a private endpoint)" (GKE "Authorized
# networks for control plane access": limits; secondary reading 2026-12-02, verify on a GKE upgrade).
GKE_AUTHORIZED_NETWORKS = 50
GKE_AUTHORIZED_NETWORKS_PRIVATE = 100
K3S_CLUSTER_CIDR = "10.42.0.0/16"
K3S_SERVICE_CIDR = "10.43.0.0/16"


def check(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    if platform == "eks":
        return _eks(stack, spec)
    if platform == "gke":
        return _gke(stack, spec)
    if platform == "aks":
        return _aks(stack, spec)
    if platform == "k3s":
        return _k3s(stack, spec)
    return []  # existing: the cluster's network is its provider's


def _aks(stack: str, spec: Any) -> list[Problem]:
    """AKS with Azure CNI Overlay: the node subnet lies in the virtual network, and node, pod and service ranges do not
    overlap (AKS refuses a service CIDR overlapping the cluster's subnets: articles/aks/azure-cni-overlay.md, IP
    address planning)."""
    aks = spec.cluster.aks
    if aks is None:
        return []
    net = aks.network
    ranges = [("cluster.aks.network.podCidr", net.pod_cidr), ("cluster.aks.network.serviceCidr", net.service_cidr)]
    problems = []
    if net.existing_subnet_id is None:
        vnet, subnet = ipaddress.ip_network(net.vnet_cidr, strict=False), ipaddress.ip_network(net.node_subnet_cidr, strict=False)
        if vnet.version != subnet.version or not subnet.subnet_of(vnet):
            problems.append(Problem(stack, f"{NS}:cluster.aks.network.nodeSubnetCidr", f"must lie inside vnetCidr {vnet}",
                                    net.node_subnet_cidr))
        ranges.insert(0, ("cluster.aks.network.vnetCidr", net.vnet_cidr))
    return problems + _overlaps(stack, ranges, "the virtual network, pod and service ranges must not overlap")


def _overlaps(stack: str, ranges: list[tuple[str, str]], rule: str) -> list[Problem]:
    """One problem per range that overlaps an earlier one of the same IP version, at the later range's key."""
    nets = [(path, ipaddress.ip_network(value, strict=False)) for path, value in ranges]
    problems = []
    for a in range(len(nets)):
        for b in range(a + 1, len(nets)):
            (pa, na), (pb, nb) = nets[a], nets[b]
            if na.version == nb.version and na.overlaps(nb):
                problems.append(Problem(stack, f"{NS}:{pb}", f"overlaps {pa} ({na}): {rule}", str(nb)))
    return problems


def _eks(stack: str, spec: Any) -> list[Problem]:
    net = spec.cluster.eks.network
    if net.existing:
        return []
    at = f"{NS}:cluster.eks.network.vpcCidr"
    cidr = ipaddress.ip_network(net.vpc_cidr)
    lo, hi = AWS_SUBNET_PREFIXES
    problems = []
    if cidr.version != 4:
        return [Problem(stack, at, "a VPC's primary CIDR block is IPv4, e.g. 10.0.0.0/16", net.vpc_cidr)]
    private, public = cidr.prefixlen + EKS_PRIVATE_SPLIT, cidr.prefixlen + EKS_PUBLIC_SPLIT
    if not (lo <= private and public <= hi) or not lo <= cidr.prefixlen <= hi:
        problems.append(Problem(stack, at, f"gpufleet cuts private /{private} and public /{public} subnets from it; AWS takes "
                                f"VPCs and subnets of /{lo} to /{hi} only, so use a /{lo} to /{hi - EKS_PUBLIC_SPLIT} VPC, "
                                "e.g. 10.0.0.0/16", net.vpc_cidr))
    if len(net.availability_zones) > EKS_MAX_ZONES:
        problems.append(Problem(stack, f"{NS}:cluster.eks.network.availabilityZones", f"a new VPC has room for "
                                f"{EKS_MAX_ZONES} zones (one eighth of vpcCidr per zone, the last eighth for public subnets)",
                                len(net.availability_zones)))
    return problems


def _gke(stack: str, spec: Any) -> list[Problem]:
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
    return problems + _overlaps(stack, ranges, "pod, service, node, control-plane and GPUDirect ranges must not overlap")


def warnings(stack: str, spec: Any) -> list[Problem]:
    """What the plan cannot check: an existing GKE network's proxy-only subnet for a regional Gateway class."""
    gke = spec.cluster.gke
    if spec.cluster.platform != "gke" or gke is None or gke.network.existing is None or not needs_proxy_only_subnet(spec):
        return []
    klass = spec.serving.gateway.resolved(spec.cluster.platform)
    return [Problem(stack, f"{NS}:cluster.gke.network.existing", f"the serving Gateway's class {klass} is a regional "
                    "Envoy-based load balancer: the network must have an active proxy-only subnet (purpose "
                    f"REGIONAL_MANAGED_PROXY, role ACTIVE) in {gke.region}, which gpufleet does not create in a network "
                    "it does not own (gcloud compute networks subnets create ... --purpose=REGIONAL_MANAGED_PROXY "
                    "--role=ACTIVE; docs.cloud.google.com/load-balancing/docs/proxy-only-subnets)",
                    gke.network.existing.network)]


def _k3s(stack: str, spec: Any) -> list[Problem]:
    problems = []
    cluster = [("k3s's cluster (pod) CIDR", ipaddress.ip_network(K3S_CLUSTER_CIDR)),
               ("k3s's service CIDR", ipaddress.ip_network(K3S_SERVICE_CIDR))]
    hosts = _k3s_host_addresses(spec)
    for path, address in hosts:
        for what, other in cluster:
            if address.version == other.version and address in other:
                # "Take care that your Pod network must not overlap with any of the host networks: you are likely to see
                # problems if there is any overlap" (Kubernetes docs, "Creating a cluster with kubeadm"): k3s's flannel
                # routes the whole pod CIDR into the overlay and kube-proxy captures the service CIDR, so pods never
                # reach a host addressed inside them.
                problems.append(Problem(stack, f"{path}.address", f"inside {what} ({other}): pods route that range into the "
                                        "cluster network and cannot reach this host; give the host an address outside "
                                        f"{K3S_CLUSTER_CIDR} and {K3S_SERVICE_CIDR}", str(address)))
    for i, pool in enumerate(spec.node_pools):
        if not pool.rdma:
            continue
        mine = ipaddress.ip_network(pool.rdma_network.ip_range)
        for what, other in cluster:
            if mine.version == other.version and mine.overlaps(other):
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].rdmaNetwork.ipRange", f"overlaps {what} ({other}); give "
                                        "the RDMA network a range of its own, e.g. 192.168.100.0/24", str(mine)))
        # NV-IPAM hands pods every address of the IPPool's subnet but the gateway and `exclusions` (Mellanox/nvidia-k8s-ipam
        # README, IPPool spec.exclusions: "reserved IP addresses that should not be allocated"); gpufleet sets no
        # exclusions (components/gpu_stack/network_operator.py ip_pool), so a host's own address in the range is handed
        # to a pod, and two machines answer for it.
        taken = [(path, a) for path, a in hosts if a.version == mine.version and a in mine]
        if taken:
            path, address = taken[0]
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].rdmaNetwork.ipRange", f"contains {path}.address ({address}): "
                                    "NV-IPAM would hand that address to a pod as well; give the RDMA network a range no host "
                                    "uses, e.g. 192.168.100.0/24", str(mine)))
    return problems


def _k3s_host_addresses(spec: Any) -> list[tuple[str, Any]]:
    """(key path of the host, its IP address) for every k3s host given by IP address (DNS names are not judged)."""
    k3s = spec.cluster.k3s
    hosts = [(f"{NS}:cluster.k3s.servers[{j}]", h) for j, h in enumerate(k3s.servers)]
    hosts += [(f"{NS}:cluster.k3s.agents[{j}]", h) for j, h in enumerate(k3s.agents)]
    hosts += [(f"{NS}:nodePools[{i}].hosts[{j}]", h) for i, p in enumerate(spec.node_pools) for j, h in enumerate(p.hosts)]
    out = []
    for path, host in hosts:
        try:
            out.append((path, ipaddress.ip_address(host.address)))
        except ValueError:
            continue
    return out
