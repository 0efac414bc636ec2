"""Checks for platform aks that need the whole stack: pool names and VM sizes against AKS and the catalog, who
installs the GPU driver (exactly one side), InfiniBand, the support plan against the tier and the calendar, and the
storage gpufleet cannot deploy, the address plan: the checks of platform aks (AksKeys.checks); and its Kubernetes
support calendar (AksVersions.kubernetes_warnings)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
from typing import Any

from gpufleet.base import catalog
from gpufleet.base.catalog import azure
from gpufleet.base.spec.checks.catalog_checks import plan_day
from gpufleet.base.spec.checks.network_checks import overlaps
from gpufleet.base.spec.checks.lifecycle_checks import SUPPORT_WARNING_DAYS, ending
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
# AKS node pool names: "only lowercase alphanumeric characters and must begin with a lowercase letter. For Linux node
# pools, the length must be between 1-12 characters" (MicrosoftDocs/azure-aks-docs @fb060abe
# articles/aks/create-node-pools.md, read 2026-12-04). A pool's name is its AKS node pool's name, so it must be one.
AKS_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
# AKS quotas (MicrosoftDocs/azure-docs includes/container-service-limits.md, the table of "Quotas, virtual machine size
# restrictions, and region availability in AKS"): "Maximum nodes per node pool (Virtual Machine Scale Sets node pools)
# | 1000" and "Maximum nodes per cluster with Virtual Machine Scale Sets and Standard Load Balancer SKU | 5000 across all
# node pools".
AKS_MAX_NODES_PER_POOL = 1000
AKS_MAX_NODES_PER_CLUSTER = 5000
# Regions without availability zones: the rows with an empty "Availability zone support" cell of the Azure regions list
# (MicrosoftDocs/reliability-docs @01021ab8 articles/reliability/regions-list.md, ms.date 2025-09-23, read 2026-12-05).
# AKS places zonal node pools with the VM scale set's `zones`, which such a region refuses. A region in neither this
# list nor the document (a new one) is not judged.
AZURE_REGIONS_WITHOUT_ZONES = frozenset({
    "australiacentral", "australiacentral2", "australiasoutheast", "brazilsoutheast", "canadaeast", "francesouth",
    "germanynorth", "koreasouth", "northcentralus", "norwaywest", "southafricawest", "southindia", "switzerlandwest",
    "uaecentral", "ukwest", "westcentralus", "westindia", "westus"})
# Ranges AKS refuses for the service, pod and virtual network ranges: "AKS clusters can't use 169.254.0.0/16,
# 172.30.0.0/16, 172.31.0.0/16, or 192.0.2.0/24 for the Kubernetes service address range, pod address range, or
# cluster virtual network address range" (learn.microsoft.com/azure/aks/configure-kubenet and
# concepts-network-legacy-cni, Prerequisites; read 2026-12-05 through the pages corpus).
AKS_RESERVED_RANGES = tuple(ipaddress.ip_network(r) for r in ("169.254.0.0/16", "172.30.0.0/16", "172.31.0.0/16",
                                                                "192.0.2.0/24"))
# System node pools: "System pools must ... use a VM SKU of at least 2 vCPUs and 4 GB memory" (AKS "Manage system node
# pools", articles/aks/use-system-pools.md, Limitations). The vCPU count is read from the size's name (Azure "Virtual
# machine size naming conventions": Standard_<family><sub-family><# of vCPUs><features>...); memory is not in the name
# and is not checked.
AKS_SYSTEM_MIN_VCPUS = 2
_VCPUS = re.compile(r"^Standard_[A-Z]+(\d+)")


def check(stack: str, spec: Any, today: dt.date | None = None) -> list[Problem]:
    aks = spec.cluster.aks
    if aks is None:
        return []  # the cluster block's own validator reported it
    problems: list[Problem] = []
    problems += _driver_checks(stack, spec)
    problems += _support_checks(stack, spec, plan_day(today))
    if aks.private_cluster and aks.authorized_ip_ranges:
        problems.append(Problem(stack, f"{NS}:cluster.aks.authorizedIpRanges", "a private cluster's API server has no public "
                                "endpoint to restrict: remove authorizedIpRanges, or set privateCluster: false"))
    if not aks.private_cluster and not aks.authorized_ip_ranges:
        problems.append(Problem(stack, f"{NS}:cluster.aks.privateCluster", "a public API server open to the internet: list "
                                "cluster.aks.authorizedIpRanges (the CIDRs that may reach it), or keep privateCluster: true", False))
    if aks.storage.managed_lustre:
        problems.append(Problem(stack, f"{NS}:cluster.aks.storage.managedLustre", "gpufleet does not deploy Azure Managed "
                                "Lustre yet: its CSI driver is not one of AKS's built-in drivers (it is installed from "
                                "kubernetes-sigs/azurelustre-csi-driver) and the file system (Microsoft.StorageCache "
                                "amlFilesystems) needs its own subnet and sizing; use storage.files (Azure Files NFS) or "
                                "storage.blob, or create the file system outside gpufleet (docs/aks.md)", True))
    for i, pool in enumerate(spec.node_pools):
        problems += _pool_checks(stack, f"{NS}:nodePools[{i}]", pool, spec)
    problems += _limit_checks(stack, spec)
    problems += _model_cache_checks(stack, spec)
    return problems


def _limit_checks(stack: str, spec: Any) -> list[Problem]:
    """Limits Azure enforces when the cluster or a pool is created (sources beside the constants above)."""
    aks = spec.cluster.aks
    out = []
    for i, pool in enumerate(spec.node_pools):
        if pool.max_nodes > AKS_MAX_NODES_PER_POOL:
            out.append(Problem(stack, f"{NS}:nodePools[{i}].maxNodes", f"an AKS node pool holds at most "
                               f"{AKS_MAX_NODES_PER_POOL} nodes; split the pool", pool.max_nodes))
    total = aks.system_pool.max_nodes + sum(p.max_nodes for p in spec.node_pools)
    if total > AKS_MAX_NODES_PER_CLUSTER:
        out.append(Problem(stack, f"{NS}:nodePools", f"the pools' maxNodes (system pool included) add up to {total}; an "
                           f"AKS cluster holds at most {AKS_MAX_NODES_PER_CLUSTER} nodes across all node pools", total))
    zoned = [("cluster.aks.zones", list(aks.zones))] + [
        (f"nodePools[{i}].aks.zones", list(p.aks.zones)) for i, p in enumerate(spec.node_pools) if p.aks and p.aks.zones]
    if aks.location in AZURE_REGIONS_WITHOUT_ZONES:
        for key, zones in zoned:
            if zones:
                out.append(Problem(stack, f"{NS}:{key}", f"Azure region {aks.location} has no availability zones (Azure "
                                   "regions list): leave zones empty, or choose a region with zones", zones))
    size = aks.system_pool.vm_size
    vcpus = _VCPUS.match(size)
    if vcpus and int(vcpus.group(1)) < AKS_SYSTEM_MIN_VCPUS:
        out.append(Problem(stack, f"{NS}:cluster.aks.systemPool.vmSize", f"AKS system node pools need a VM size with at "
                           f"least {AKS_SYSTEM_MIN_VCPUS} vCPUs and 4 GB of memory; this one has {vcpus.group(1)} vCPU "
                           "(e.g. Standard_D4ds_v5)", size))
    return out


def _model_cache_checks(stack: str, spec: Any) -> list[Problem]:
    """A model cache naming one of gpufleet's AKS classes that the stack does not create (components/aks/storage.py:
    gpufleet-rwx with storage.files, gpufleet-blob with storage.blob; gpufleet-rwo is ReadWriteOnce, which a cache shared
    by many pods cannot use): the claim would stay Pending."""
    storage = spec.cluster.aks.storage
    made = {"gpufleet-rwx": ("files", storage.files), "gpufleet-blob": ("blob", storage.blob)}
    out = []
    for i, cache in enumerate(spec.model_caches):
        at = f"{NS}:modelCaches[{i}].storageClass"
        if cache.storage_class == "gpufleet-rwo":
            out.append(Problem(stack, at, "gpufleet-rwo is Azure Disk, ReadWriteOnce: a model cache is mounted by many "
                               "pods; use gpufleet-rwx (cluster.aks.storage.files: true)", cache.storage_class))
        elif cache.storage_class in made and not made[cache.storage_class][1]:
            key = made[cache.storage_class][0]
            out.append(Problem(stack, at, f"gpufleet creates {cache.storage_class} only with cluster.aks.storage.{key}: "
                               f"true, so the claim would never bind; set it, or name another StorageClass",
                               cache.storage_class))
    return out


def _driver_checks(stack: str, spec: Any) -> list[Problem]:
    """AKS installs the driver (gpu_driver Install) or the GPU Operator does (gpu_driver None): never both, never
    neither, InfiniBand pools included. Microsoft: 'AKS-managed GPU drivers and the NVIDIA GPU Operator managed GPU drivers are mutually exclusive
    and cannot coexist' (azure.github.io/aks-rdma-infiniband, configurations/gpu-operator, read 2026-12-04)."""
    aks, op = spec.cluster.aks, spec.gpu_operator
    if not spec.node_pools:
        return []
    at = f"{NS}:gpuOperator.driver.source"
    if aks.managed_driver:
        out = []
        if "source" in op.driver.model_fields_set and op.driver.source == "operator":
            out.append(Problem(stack, at, "cluster.aks.gpuDriver is aks: AKS installs the NVIDIA driver on every GPU node, so "
                               "the GPU Operator installing it too would install it twice; set gpuOperator.driver.source: "
                               "preinstalled, or cluster.aks.gpuDriver: operator (the default)", op.driver.source))
        # InfiniBand pools plan with AKS's driver too (issue 53): the AKS InfiniBand guide's "AKS-managed GPU Driver"
        # option, its nvidia-peermem reloader loading GPUDirect RDMA (components/aks/peermem_reloader.py) beside the
        # Network Operator's DOCA driver. What still cannot work is refused elsewhere: the operator's driver as well
        # (above), no GPU Operator to advertise the GPUs (upkeep_checks), InfiniBand on an uncatalogued size (_pool_checks).
        return out
    out = []
    if not op.enabled:
        out.append(Problem(stack, f"{NS}:gpuOperator.enabled", "cluster.aks.gpuDriver is operator: AKS skips the driver "
                           "install on GPU pools, so without the GPU Operator no node has a driver; enable it, or set "
                           "cluster.aks.gpuDriver: aks", False))
    elif op.driver.source != "operator":
        out.append(Problem(stack, at, "cluster.aks.gpuDriver is operator: AKS skips its driver install (gpu_driver None), so "
                           "nothing would install the driver; set gpuOperator.driver.source: operator, or "
                           "cluster.aks.gpuDriver: aks", op.driver.source))
    return out


def _support_checks(stack: str, spec: Any, day: dt.date) -> list[Problem]:
    aks = spec.cluster.aks
    version = spec.cluster.kubernetes_version
    lts = aks.support_plan == "AKSLongTermSupport"
    out = []
    if lts and aks.tier != "Premium":
        out.append(Problem(stack, f"{NS}:cluster.aks.supportPlan", "long-term support needs the Premium tier "
                           "(articles/aks/long-term-support.md); set cluster.aks.tier: Premium, or supportPlan: "
                           "KubernetesOfficial", aks.support_plan))
    try:
        facts = catalog.aks_kubernetes_version(version, day, lts=lts)
    except KeyError:
        return out
    if facts.status == "unsupported":
        if lts:
            why = f"past its long-term support too (LTS end of life {facts.end_of_extended_support})"
            fix = "upgrade to a newer minor"
        else:
            why = f"past community support (end of life {facts.end_of_standard_support}): AKS gives it platform support only, which creates no clusters"
            fix = "upgrade, or keep it with cluster.aks.tier: Premium and supportPlan: AKSLongTermSupport"
        out.append(Problem(stack, f"{NS}:cluster.kubernetesVersion", f"AKS {version} is {why} "
                           f"({', '.join(facts.sources)}); {fix}", version))
    return out


def _pool_checks(stack: str, at: str, pool: Any, spec: Any) -> list[Problem]:
    aks = spec.cluster.aks
    out: list[Problem] = []
    uncatalogued = bool(pool.vm_size) and pool.vm_size not in azure.vms()
    for field, alias in (("hosts", "hosts"), ("gpu", "gpu"), ("gpus_per_node", "gpusPerNode")):
        if field in pool.model_fields_set and (field == "hosts" or not uncatalogued):
            out.append(Problem(stack, f"{at}.{alias}", "not used on aks: it follows from vmSize; remove it"))
    if not AKS_POOL_NAME.match(pool.name):
        out.append(Problem(stack, f"{at}.name", "not an AKS node pool name: lowercase letters and digits, starting with a "
                           "letter, at most 12 characters (the pool's name is its AKS node pool's name)", pool.name))
    if pool.name in ("system",):
        out.append(Problem(stack, f"{at}.name", "'system' is the name of gpufleet's CPU system pool on AKS; choose another",
                           pool.name))
    if pool.vm_size is None:
        out.append(Problem(stack, f"{at}.vmSize", "required on aks: the GPU VM size, e.g. Standard_ND96isr_H100_v5 "
                           f"(known: {', '.join(azure.vms())})"))
        return out
    vm = azure.vms().get(pool.vm_size)
    if vm is None and (pool.gpu is not None or pool.gpus_per_node is not None):
        # A VM size the catalog lacks plans with the pool's own gpu and gpusPerNode (issue 49; stack_shape_checks.py
        # wants both, the plan warns that no source confirms them). InfiniBand is not wired: its ports are unknown.
        if pool.rdma:
            out.append(Problem(stack, f"{at}.rdma", f"{pool.vm_size} is not in gpufleet's catalog, so its InfiniBand ports "
                               "are not known and cannot be wired; use rdma: false or a catalogued ND size", True))
        return out
    if vm is None:
        out.append(Problem(stack, f"{at}.vmSize", f"not a GPU VM size in the catalog (gpufleet/base/catalog/azure_vms.yaml; "
                           f"known: {', '.join(azure.vms())}); a real size the catalog lacks plans when the pool gives "
                           "its own gpu and gpusPerNode (and pricePerNodeHour)", pool.vm_size))
        return out
    if pool.allocation == "dra":
        # dra.yaml records which autoscalers scale DRA pools from zero and which machines form NVLink domains for EKS,
        # GKE and k3s only; on AKS neither is read, so a DRA pool would be wired blind.
        out.append(Problem(stack, f"{at}.allocation", "DRA pools are not supported on aks yet: whether AKS's cluster "
                           "autoscaler scales a DRA pool up from zero, and the NVLink domains of ND GB200 v6 racks, are not "
                           "recorded (gpufleet/base/catalog/dra.yaml); use allocation: device-plugin", pool.allocation))
    opts = pool.aks
    if opts is not None and opts.os_sku == "Ubuntu2204" and aks.support_plan == "AKSLongTermSupport":
        # "If you want to enable long-term support (LTS) with Kubernetes version 1.33 or later, first update your node
        # pools to Ubuntu 24.04" (includes/ubuntu-22-04-retirement.md @fb060abe).
        out.append(Problem(stack, f"{at}.aks.osSku", "long-term support on AKS needs Ubuntu 24.04 node pools (Ubuntu "
                           "22.04 leaves AKS support on 2027-06-30); set osSku: Ubuntu2404", opts.os_sku))
    if opts is not None and "spot_max_price" in opts.model_fields_set and pool.capacity != "spot":
        out.append(Problem(stack, f"{at}.aks.spotMaxPrice", "only Spot pools have a maximum price (set capacity: spot, or "
                           "remove it)", opts.spot_max_price))
    if pool.rdma:
        if vm.infiniband is None:
            ib = [name for name, v in azure.vms().items() if v.infiniband]
            out.append(Problem(stack, f"{at}.rdma", f"{vm.name} has no InfiniBand (sizes with it: {', '.join(ib)}); set "
                               "rdma: false or choose an ND size", True))
            return out
        zones = (opts.zones if opts and opts.zones else aks.zones)
        if len(zones) > 1:
            out.append(Problem(stack, f"{at}.aks.zones", "an InfiniBand pool runs in one zone: its nodes must share an "
                               "InfiniBand fabric, which does not span zones; list one zone", list(zones)))
    return out


def kubernetes_warnings(stack: str, spec: Any, day: dt.date) -> list[Problem]:
    """AKS: community support ends at the minor's end of life; with long-term support (Premium tier, AKSLongTermSupport)
    the LTS end of life follows. A version past both is refused by `check` above; here, a warning within
    SUPPORT_WARNING_DAYS of the end that applies, and one while the cluster runs on LTS (AksVersions)."""
    aks, version = spec.cluster.aks, spec.cluster.kubernetes_version
    at = f"{NS}:cluster.kubernetesVersion"
    lts = aks.support_plan == "AKSLongTermSupport"
    try:
        facts = catalog.aks_kubernetes_version(version, day, lts=lts)
    except KeyError:
        return [Problem(stack, at, f"AKS {version} is not in the catalog's support calendar "
                                   "(gpufleet/base/catalog/kubernetes.yaml): its end of support is not checked", version)]
    if facts.status == "unsupported":
        return []
    if facts.status == "extended":
        end = facts.end_of_extended_support
        days = (dt.date.fromisoformat(end) - day).days
        return [Problem(stack, at, f"AKS {version} is past community support since {facts.end_of_standard_support} and runs "
                                   f"on long-term support until {end} ({ending(days)}; {', '.join(facts.sources)}): the "
                                   "Premium tier's fee applies; upgrade before then", version)]
    end = facts.end_of_standard_support
    days = (dt.date.fromisoformat(end) - day).days
    if days > SUPPORT_WARNING_DAYS:
        return []
    after = ("long-term support follows (Premium tier)" if lts else "without long-term support (Premium tier, supportPlan "
             "AKSLongTermSupport) AKS then gives it platform support only")
    return [Problem(stack, at, f"AKS {version} leaves community support {ending(days)} ({end}; {', '.join(facts.sources)}); "
                               f"{after}: upgrade before then", version)]


def network_checks(stack: str, spec: Any) -> list[Problem]:
    """AKS with Azure CNI Overlay: the node subnet lies in the virtual network, and node, pod and service ranges do not
    overlap (AKS refuses a service CIDR overlapping the cluster's subnets: articles/aks/azure-cni-overlay.md, IP
    address planning)."""
    aks = spec.cluster.aks
    if aks is None:
        return []
    net = net_spec = aks.network
    ranges = [("cluster.aks.network.podCidr", net.pod_cidr), ("cluster.aks.network.serviceCidr", net.service_cidr)]
    problems = []
    if net.existing_subnet_id is None:
        vnet, subnet = ipaddress.ip_network(net.vnet_cidr, strict=False), ipaddress.ip_network(net.node_subnet_cidr, strict=False)
        if vnet.version != subnet.version or not subnet.subnet_of(vnet):
            problems.append(Problem(stack, f"{NS}:cluster.aks.network.nodeSubnetCidr", f"must lie inside vnetCidr {vnet}",
                                    net.node_subnet_cidr))
        ranges.insert(0, ("cluster.aks.network.vnetCidr", net.vnet_cidr))
    for key, value in ranges:
        net = ipaddress.ip_network(value, strict=False)
        for reserved in AKS_RESERVED_RANGES:
            if net.version == reserved.version and net.overlaps(reserved):
                problems.append(Problem(stack, f"{NS}:{key}", f"overlaps {reserved}, which AKS reserves (it refuses "
                                        f"{', '.join(map(str, AKS_RESERVED_RANGES))} for service, pod and virtual "
                                        "network ranges); choose another range", value))
    services = ipaddress.ip_network(net_spec.service_cidr, strict=False)
    dns = ipaddress.ip_address(net_spec.dns_service_ip)
    if dns in services and dns in (services.network_address, services.network_address + 1):
        # "Don't use the first IP address in your address range ... used for the kubernetes.default.svc.cluster.local
        # address" (AKS, configure-azure-cni / azure-cni-overlay, DNS service IP); the range's own network address is
        # no host address at all.
        problems.append(Problem(stack, f"{NS}:cluster.aks.network.dnsServiceIp", f"the {'network' if dns == services.network_address else 'first'} "
                                f"address of serviceCidr {services} is not free for the cluster DNS (the first goes to the "
                                f"kubernetes Service); use another, e.g. {services.network_address + 10}",
                                net_spec.dns_service_ip))
    return problems + overlaps(stack, ranges, "the virtual network, pod and service ranges must not overlap")
