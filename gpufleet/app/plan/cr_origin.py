"""Which stack key produced a field of a custom resource gpufleet creates, so a CRD finding names what to change.

`spec_key(spec, obj, field)` answers the most precise key gpufleet knows (`gpufleet:addons.kueue.teams[1].queues[0]
.borrowingLimit`), else the object's pool (`gpufleet:nodePools[2]`), else the block of the stack its kind comes from
(`block_key`: `gpufleet:addons.kueue`), else None. It mirrors how the components name and fill these objects
(components/workloads/kueue.py, components/eks/karpenter_pool.py, ...): the tests of each realistic mistake
(tests/unit/test_crd_plan_checks.py) keep it honest.
"""

from __future__ import annotations

from typing import Callable, Optional

from gpufleet.base.spec import StackSpec

_POOL_FIELDS = {
    # NodePool (components/eks/karpenter_pool.py node_pool_spec)
    "spec.template.metadata.labels": ".labels",
    "spec.template.spec.taints": ".taints",
    "spec.limits": ".maxNodes",
    # EC2NodeClass (node_class_spec)
    "spec.blockDeviceMappings": ".rootVolumeGib",
    "spec.subnetSelectorTerms": ".subnetIds",
    "spec.capacityReservationSelectorTerms": ".reservation",
    # ResourceFlavor (components/workloads/kueue.py resource_flavor)
    "spec.nodeLabels": ".labels",
    "spec.tolerations": ".taints",
}
_AUTOSCALER_FIELDS = {
    "spec.disruption.consolidateAfter": "gpufleet:cluster.eks.autoscaler.consolidateAfter",
    "spec.disruption.budgets": "gpufleet:cluster.eks.autoscaler.disruptionBudget",
}
_QUEUE_FIELDS = {"nominalQuota": ".nominalQuota", "borrowingLimit": ".borrowingLimit", "lendingLimit": ".lendingLimit"}
_KUEUE = "gpufleet:addons.kueue"


def _match(fields: dict[str, str], field: str) -> Optional[str]:
    for prefix, key in fields.items():
        if field == prefix or field.startswith(prefix + ".") or field.startswith(prefix + "["):
            return key
    return None


def _pool_index(spec: StackSpec, name: str) -> Optional[int]:
    return next((i for i, p in enumerate(spec.node_pools) if p.name == name), None)


def _pool_object(spec: StackSpec, obj: dict, field: str) -> Optional[str]:
    name = obj["metadata"].get("name", "")
    i = _pool_index(spec, name.removesuffix("-dws"))
    auto = _match(_AUTOSCALER_FIELDS, field) if obj["kind"] == "NodePool" else None
    if auto:
        return auto
    if i is None:
        return None
    return f"gpufleet:nodePools[{i}]{_match(_POOL_FIELDS, field) or ''}"


def _queue(spec: StackSpec, obj: dict, field: str) -> Optional[str]:
    kueue = spec.addons.kueue
    if obj["kind"] == "ClusterQueue":
        if field.startswith("spec.cohortName"):
            return f"{_KUEUE}.cohort"
        if field.startswith("spec.preemption"):
            return f"{_KUEUE}.preemption" + (f".{field.split('.')[2]}" if field.count(".") >= 2 else "")
    for i, team in enumerate(kueue.teams):
        for j, queue in enumerate(team.queues):
            cq = f"{team.name}-{queue.pool}"
            if (obj["kind"] == "ClusterQueue" and obj["metadata"].get("name") == cq) or (
                    obj["kind"] == "LocalQueue" and obj["spec"].get("clusterQueue") == cq):
                last = field.rsplit(".", 1)[-1]
                return f"{_KUEUE}.teams[{i}].queues[{j}]{_QUEUE_FIELDS.get(last, '')}"
    return None


def _volcano(spec: StackSpec, obj: dict, field: str) -> Optional[str]:
    pools = spec.addons.volcano.pools
    name = obj["metadata"].get("name")
    return f"gpufleet:addons.volcano.pools[{pools.index(name)}]" if name in pools else None


def _rdma(spec: StackSpec, obj: dict, field: str) -> Optional[str]:
    """A pool's RDMA network objects are named `rdma-<pool>` (components/gpu_stack/network_operator.py network_name,
    sriov_network.py node_policy)."""
    i = _pool_index(spec, obj["metadata"].get("name", "").removeprefix("rdma-"))
    return None if i is None else f"gpufleet:nodePools[{i}].rdmaNetwork"


_BY_KIND: dict[str, Callable[[StackSpec, dict, str], Optional[str]]] = {
    "NodePool": _pool_object,
    "EC2NodeClass": _pool_object,
    "ResourceFlavor": _pool_object,
    "AdmissionCheck": _pool_object,
    "ProvisioningRequestConfig": _pool_object,
    "ClusterQueue": _queue,
    "LocalQueue": _queue,
    "Queue": _volcano,
    "MacvlanNetwork": _rdma,
    "HostDeviceNetwork": _rdma,
    "IPPool": _rdma,
    "SriovNetwork": _rdma,
    "SriovNetworkNodePolicy": _rdma,
}
# The block of the stack each kind comes from: what a message names when no finer key is known.
_BLOCKS = {
    "NodePool": "gpufleet:nodePools",
    "EC2NodeClass": "gpufleet:nodePools",
    "ResourceFlavor": _KUEUE,
    "AdmissionCheck": _KUEUE,
    "ProvisioningRequestConfig": _KUEUE,
    "ClusterQueue": _KUEUE,
    "LocalQueue": _KUEUE,
    "Queue": "gpufleet:addons.volcano",
    "NicClusterPolicy": "gpufleet:nodePools (rdma, rdmaNetwork)",
    "MacvlanNetwork": "gpufleet:nodePools (rdmaNetwork)",
    "HostDeviceNetwork": "gpufleet:nodePools (rdmaNetwork)",
    "IPPool": "gpufleet:nodePools (rdmaNetwork)",
    "SriovNetwork": "gpufleet:nodePools (rdmaNetwork)",
    "SriovNetworkNodePolicy": "gpufleet:nodePools (rdmaNetwork)",
    "Network": "gpufleet:nodePools (GPUDirect machine types)",
    "GKENetworkParamSet": "gpufleet:nodePools (GPUDirect machine types)",
    "PrometheusRule": "gpufleet:observability",
    "PodMonitor": "gpufleet:observability",
    "PodMonitoring": "gpufleet:observability",
    "ClusterTrainingRuntime": "gpufleet:addons.trainer",
    "ClusterTriggerAuthentication": "gpufleet:addons.keda",
    "DeviceConfig": "gpufleet:amdGpuOperator",
}


def block_key(kind: str) -> Optional[str]:
    """The block of the stack objects of this kind come from (`gpufleet:addons.kueue`), or None."""
    return _BLOCKS.get(kind)


def spec_key(spec: Optional[StackSpec], obj: dict, field: str) -> Optional[str]:
    """spec None: a program without a GpuCluster (gpufleet.testing), whose objects no stack key made."""
    trace = _BY_KIND.get(obj.get("kind", ""))
    key = trace(spec, obj, field) if trace and spec is not None else None
    return key or block_key(obj.get("kind", ""))
