"""Checks for platform k3s that need the whole stack (K3sKeys.checks): hosts listed once, pools sized by their hosts,
servers that are also GPU hosts, node labels the kubelet refuses (k3s_label_checks.py), and addresses against k3s's
own pod and service ranges. Run once every block is valid on its own."""

from __future__ import annotations

import ipaddress
from typing import Any

from gpufleet.base import catalog
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.platforms import k3s_label_checks
from gpufleet.base.spec.platforms.k3s import Host
from gpufleet.base.spec.pools import NodePoolSpec

NS = "gpufleet"
K3S_CLUSTER_CIDR = "10.42.0.0/16"
K3S_SERVICE_CIDR = "10.43.0.0/16"


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    return (_hosts_and_pools(stack, spec) + k3s_label_checks.check(stack, spec) + _network(stack, spec)
            + _airgap_arch(stack, spec))


def _airgap_arch(stack: str, spec: Any) -> list[Problem]:
    """The air-gap files are one architecture's (`k3s` or `k3s-arm64`, `k3s-airgap-images-<arch>.tar.zst`: the k3s
    release assets, ../shared/reference/k3s/checksums.yaml), and a Grace pool's hosts are arm64 (gpufleet/base/catalog/
    gpus.yaml `host.arch`): with amd64 files the installer runs an x86_64 binary there, which does not execute. Other
    GPUs say nothing of their host's CPU, so only superchip pools are judged."""
    airgap = spec.cluster.k3s.airgap
    if airgap is None:
        return []
    models = catalog.gpu_models()
    out = []
    for i, pool in enumerate(spec.node_pools):
        model = models.get(pool.gpu or "")
        if model is not None and model.host_arch and model.host_arch != airgap.arch:
            out.append(Problem(stack, f"{NS}:cluster.k3s.airgap.arch", f"pool '{pool.name}' ({model.name}) runs on "
                               f"{model.host_arch} hosts (Grace), and cluster.k3s.airgap gives {airgap.arch} files: its "
                               f"hosts cannot run that k3s binary; set arch: {model.host_arch} (one architecture per "
                               "cluster: its servers and agents too)", airgap.arch))
            break
    return out


def _hosts_and_pools(stack: str, spec: Any) -> list[Problem]:
    """Every host listed once (a server may also be a GPU host of one pool), pools sized by their hosts."""
    problems: list[Problem] = []

    hosts: list[tuple[str, Host]] = []
    k3s = spec.cluster.k3s
    if "etcd_snapshots" in k3s.model_fields_set and not k3s.embedded_etcd:
        problems.append(Problem(
            stack, f"{NS}:cluster.k3s.etcdSnapshots",
            "etcd snapshots need embedded etcd (an odd number >= 3 of servers); a single server keeps SQLite: remove the block",
        ))
    hosts += [(f"{NS}:cluster.k3s.servers[{i}]", h) for i, h in enumerate(k3s.servers)]
    hosts += [(f"{NS}:cluster.k3s.agents[{i}]", h) for i, h in enumerate(k3s.agents)]
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        hosts += [(f"{at}.hosts[{j}]", h) for j, h in enumerate(pool.hosts)]
        if not pool.hosts:
            problems.append(Problem(stack, f"{at}.hosts", "a k3s pool needs at least one host"))
        if pool.gpu is None:
            problems.append(Problem(stack, f"{at}.gpu", "required on k3s: the GPU model of the pool's hosts"))
        if pool.gpus_per_node is None:
            problems.append(Problem(stack, f"{at}.gpusPerNode", "required on k3s: GPUs in each host"))
        for field in ("min_nodes", "max_nodes"):
            if field in pool.model_fields_set:
                alias = NodePoolSpec.model_fields[field].alias
                problems.append(Problem(stack, f"{at}.{alias}", "not used on k3s: a pool's size is its number of hosts; remove it"))
        if pool.capacity == "spot":
            problems.append(Problem(stack, f"{at}.capacity", "spot capacity needs a cloud platform (allowed on k3s: on-demand)", pool.capacity))
        for field in ("max_unavailable", "local_storage", "efa_only"):
            if field in pool.model_fields_set:
                alias = NodePoolSpec.model_fields[field].alias
                problems.append(Problem(stack, f"{at}.{alias}", "an EKS setting, not used on k3s; remove it"))
    # One machine may be both a server and a GPU host of one pool (a single GPU box, a workstation): the same
    # entry, listed under servers and under the pool's hosts. Anything else listed twice is a mistake.
    servers = {h.name: h for h in k3s.servers}
    shared = {id(h) for path, h in hosts if ".hosts[" in path and servers.get(h.name) == h}
    gpu_servers: dict[str, str] = {}
    for path, host in hosts:
        if id(host) in shared:
            if host.name in gpu_servers:
                problems.append(Problem(stack, f"{path}.name", f"this server is already a GPU host of {gpu_servers[host.name]}; "
                                        "a node belongs to one pool", host.name))
            gpu_servers.setdefault(host.name, path.rsplit(".hosts", 1)[0])
    for attr in ("name", "address"):
        seen: dict[str, str] = {}
        for path, host in hosts:
            if id(host) in shared:
                continue
            value = getattr(host, attr)
            if value in seen:
                also = seen[value]
                hint = ("; a server that is also a GPU host must be listed identically (name, address, user, port) in "
                        "both places" if ".servers[" in also and ".hosts[" in path else "")
                problems.append(Problem(stack, f"{path}.{attr}", f"duplicate host {attr} (also {also}){hint}", value))
            seen.setdefault(value, path)
    problems += _gpu_server_checks(stack, spec, {h for h in gpu_servers})
    return problems


def _gpu_server_checks(stack: str, spec: Any, gpu_servers: set[str]) -> list[Problem]:
    """A server that is also a GPU host must still run the cluster's system pods (CoreDNS, metrics-server,
    local-path provisioner tolerate only the control-plane taints): it gets the pool's labels but no taint that
    keeps them off (gpufleet then leaves the GPU taint off that node too)."""
    if not gpu_servers:
        return []
    problems = []
    if spec.cluster.k3s.taint_servers:
        problems.append(Problem(stack, f"{NS}:cluster.k3s.taintServers", "a server that is also a GPU host cannot be "
                                "tainted CriticalAddonsOnly (GPU pods could not run there); set taintServers: false", True))
    for i, pool in enumerate(spec.node_pools):
        if not any(h.name in gpu_servers for h in pool.hosts):
            continue
        if pool.capacity == "spot":
            continue  # refused above: k3s has no spot capacity
        for j, taint in enumerate(pool.taints):
            if taint.effect in ("NoSchedule", "NoExecute"):
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].taints[{j}].effect", "the pool's hosts include a "
                                        "server, which must keep running system pods: a NoSchedule/NoExecute taint keeps them off "
                                        "(allowed here: PreferNoSchedule)", taint.effect))
    return problems


def _network(stack: str, spec: Any) -> list[Problem]:
    """An RDMA pool's pod range must not overlap k3s's cluster and service CIDRs (defaults 10.42.0.0/16 and
    10.43.0.0/16, docs.k3s.io/cli/server "--cluster-cidr", "--service-cidr"), or pods route RDMA traffic into the
    cluster network; nor may a host's own address lie in those CIDRs or in an RDMA pool's range."""
    problems = []
    cluster = [("k3s's cluster (pod) CIDR", ipaddress.ip_network(K3S_CLUSTER_CIDR)),
               ("k3s's service CIDR", ipaddress.ip_network(K3S_SERVICE_CIDR))]
    hosts = _host_addresses(spec)
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


def _host_addresses(spec: Any) -> list[tuple[str, Any]]:
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
