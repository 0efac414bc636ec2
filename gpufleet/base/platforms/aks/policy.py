"""aks: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means).

An AKS GPU pool is a node pool of a GPU VM size, in either Pulumi provider a program may use:
- an agent pool (`azure-native:containerservice:AgentPool`, pulumi-azure-native, what gpufleet registers): the AKS
  REST API's AgentPool properties (ManagedClusterAgentPoolProfileProperties, API 2025-09-01);
- a node pool of the classic, Terraform-bridged pulumi-azure (`azure:containerservice/kubernetesClusterNodePool:
  KubernetesClusterNodePool`), which users' own programs still run: terraform-provider-azurerm's argument names.
Both read the same way; each type says where its inputs keep each fact (the `*_key` attributes of AksNodePool).

A program may also declare its pools inline in the cluster (issue 50: they must not escape the pool rules): every map of
an Azure Native ManagedCluster's `agentPoolProfiles` (AksInlineAgentPool), and a classic KubernetesCluster's one
`defaultNodePool` (AksClassicDefaultNodePool); each is judged as a pool of its own when its VM size is a GPU size.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base import labels
from gpufleet.base.catalog import azure
from gpufleet.base.platforms.contract.policy import GpuPoolType, GpuShape, Idle, Inline, Inputs, PolicyTraits, Taint

NODE_POOL = "azure-native:containerservice:AgentPool"
CLASSIC_NODE_POOL = "azure:containerservice/kubernetesClusterNodePool:KubernetesClusterNodePool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
CLASSIC_CLUSTER = "azure:containerservice/kubernetesCluster:KubernetesCluster"


# The region whose price the rules quote (a node pool's inputs do not name its cluster's location): eastus, the region
# most sizes are priced in (azure_vms.yaml `prices:`), as the EKS and GKE rules quote us-east-1 and us-central1.
POLICY_PRICE_REGION = "eastus"


def aks_shape(vm_size: str) -> Optional[GpuShape]:
    """An Azure GPU VM size's shape from the catalog (None when unknown); its pay-as-you-go and Spot prices in
    POLICY_PRICE_REGION where the catalog has them."""
    vm = azure.vms().get(vm_size)
    return None if vm is None else GpuShape(vm_size, vm.gpu, vm.gpus, vm.price("on-demand", POLICY_PRICE_REGION),
                                            spot_price_hour=vm.price("spot", POLICY_PRICE_REGION))


def aks_is_gpu(vm_size: str) -> bool:
    """An Azure VM size with GPUs: a known GPU size, or any N-series size (NC, ND, NG, NV: Azure's GPU families,
    learn.microsoft.com/azure/virtual-machines/sizes/overview 'GPU accelerated')."""
    return vm_size in azure.vms() or vm_size.startswith(("Standard_NC", "Standard_ND", "Standard_NG", "Standard_NV"))


def aks_taint(taint: str) -> Taint:
    """An AKS node taint string `key=value:Effect` (or `key:Effect`) as (key, value, effect)."""
    head, _, effect = taint.rpartition(":")
    if not head:
        return taint, "", ""
    key, _, value = head.partition("=")
    return key, value, effect


class AksNodePool(GpuPoolType):
    """An AKS user node pool on pulumi-azure-native. AKS taints Spot nodes `kubernetes.azure.com/scalesetpriority=spot:
    NoSchedule` itself; its cluster autoscaler is AKS's own, per node pool.

    The `*_key` attributes say where this resource type keeps each fact (AgentPool property names); the readers below
    are the same for every AKS pool type."""

    token = NODE_POOL
    kind_name = "agent pool"
    spot_label = labels.AKS_SPOT_KEY
    spot_taint_keys = (labels.AKS_SPOT_KEY,)
    toolkit_preinstalled = ("AKS GPU node image ships it with the driver (gpuProfile.driver Install): set "
                            "toolkit.enabled=false, or gpuProfile.driver None on the pool")
    priority_key = "scaleSetPriority"  # Regular | Spot
    eviction_key = "scaleSetEvictionPolicy"  # Delete | Deallocate
    reservation_key = "capacityReservationGroupID"
    autoscaling_keys: tuple[str, ...] = ("enableAutoScaling",)  # any one true turns the autoscaler on; the first is named
    count_key = "count"
    zones_key = "availabilityZones"
    driver_path: tuple[str, ...] = ("gpuProfile", "driver")  # Install | None

    def gpu_pool(self, inputs: Inputs) -> Optional[tuple[Optional[GpuShape], list[str]]]:
        size = inputs.text("vmSize") or ""
        if not aks_is_gpu(size):
            return None
        return aks_shape(size), [size]

    def labels(self, inputs: Inputs) -> dict:
        return inputs.mapping("nodeLabels")

    def taints(self, inputs: Inputs) -> list[Taint]:
        return [aks_taint(t) for t in inputs.items("nodeTaints") if isinstance(t, str)]

    def spot(self, inputs: Inputs) -> bool:
        return inputs.get(self.priority_key) == "Spot"

    def spot_problems(self, inputs: Inputs) -> list[str]:
        """Spot pools' eviction policy must be Delete (articles/aks/spot-node-pool.md); unset is Delete in both providers
        (AKS API scaleSetEvictionPolicy default; pulumi-azure eviction_policy "will default to Delete")."""
        eviction = inputs.get(self.eviction_key, default="Delete")
        if eviction != "Delete":
            # Deallocated Spot nodes keep counting against the VM quota and keep their disks, and "can cause issues with
            # cluster scaling or upgrading" (articles/aks/spot-node-pool.md): the autoscaler cannot bring the pool back cleanly.
            return [f"{self.eviction_key} is {eviction}: evicted nodes stay deallocated (counted against "
                    "the VM quota, disks billed) and block the autoscaler; use Delete"]
        return []

    def reserved(self, inputs: Inputs) -> bool:
        """A pool in a capacity reservation group."""
        return bool(inputs.text(self.reservation_key))

    def minimum(self, inputs: Inputs) -> Optional[float]:
        return inputs.number("minCount")

    def _autoscaling_key(self, inputs: Inputs) -> str:
        """The autoscaling switch as the resource spells it (the first of `autoscaling_keys` it sets), for messages."""
        return next((k for k in self.autoscaling_keys if inputs.get(k) is not None), self.autoscaling_keys[0])

    def scale_to_zero_problems(self, inputs: Inputs, idle: Idle) -> list[str]:
        """The cluster autoscaler is AKS's own, per node pool (enableAutoScaling with minCount and maxCount;
        articles/aks/cluster-autoscaler.md); it scales a user pool from 0 from the pool's VM size, labels and taints,
        which AKS knows, so no node-template hints are needed."""
        if not any(inputs.truthy(k) for k in self.autoscaling_keys):
            fixed = inputs.number(self.count_key) or 0
            extra = f": {idle(fixed, 1)}" if fixed > 0 else ""
            return [f"{self._autoscaling_key(inputs)} is not true, so the cluster autoscaler never scales the pool to or "
                    f"from 0{extra}"]
        if self.reserved(inputs):
            return []
        minimum = self.minimum(inputs)
        if minimum is not None and minimum > 0:
            return [f"minCount is {minimum:g}, not 0: {idle(minimum, 1)} while no GPU work runs"]
        return []

    def rdma_problems(self, name: str, inputs: Inputs, shape: Optional[GpuShape], instance_types: list[str]) -> list[str]:
        """A node pool labelled `gpufleet.io/rdma: "true"` needs a VM size with InfiniBand (the catalog's ND sizes) in
        one availability zone, since an InfiniBand fabric does not span zones."""
        if self.labels(inputs).get(labels.RDMA_NODE_LABEL) != "true":
            return []
        size = instance_types[0] if instance_types else "?"
        vm = azure.vms().get(size)
        if vm is None:
            return []  # an unknown size: not judged
        if vm.infiniband is None:
            return [f"RDMA pool '{name}' runs {size}, which has no InfiniBand: NCCL falls back to TCP"]
        zones = [z for z in inputs.items(self.zones_key) if isinstance(z, str)]
        if len(zones) > 1:
            return [f"InfiniBand pool '{name}' spans zones {', '.join(zones)}: its nodes would not share one "
                    "InfiniBand fabric; keep it in one zone"]
        return []

    def _driver(self, inputs: Inputs) -> str:
        """The pool's GPU driver choice: Install (AKS's driver, also its default when unset: GPUProfile.driver 'When it's
        not specified, default is Install', Microsoft.ContainerService API) or None."""
        return inputs.text(*self.driver_path) or "Install"

    def driver_preinstalled(self, inputs: Inputs) -> bool:
        return self._driver(inputs) == "Install"

    def driver_absent(self, inputs: Inputs) -> bool:
        return self._driver(inputs) == "None"


class AksClassicNodePool(AksNodePool):
    """An AKS node pool of the classic pulumi-azure provider (KubernetesClusterNodePool), read as an agent pool with
    terraform-provider-azurerm's names. Names from pulumi/pulumi-azure sdk/python/pulumi_azure/containerservice/
    kubernetes_cluster_node_pool.py: @v6.39.0 (and the 6.40.1 wheel gpufleet ran before issue 53) `priority`,
    `eviction_policy` ("will default to `Delete`"), `capacity_reservation_group_id`, `auto_scaling_enabled`,
    `node_count`, `min_count`, `zones`, `gpu_driver` (Install | None, since v6.27.0, terraform-provider-azurerm
    v4.46.0; earlier releases cannot set it, so AKS's default Install applies); @v5.89.3 the autoscaling switch was
    `enable_auto_scaling` (renamed in v6, azurerm 4.0), read too so pulumi-azure 5 programs are judged."""

    token = CLASSIC_NODE_POOL
    kind_name = "classic node pool"  # pulumi-azure's KubernetesClusterNodePool
    toolkit_preinstalled = ("AKS GPU node image ships it with the driver (gpuDriver Install): set toolkit.enabled=false, or "
                            "gpuDriver None on the pool")
    priority_key = "priority"
    eviction_key = "evictionPolicy"
    reservation_key = "capacityReservationGroupId"
    autoscaling_keys = ("autoScalingEnabled", "enableAutoScaling")
    count_key = "nodeCount"
    zones_key = "zones"
    driver_path = ("gpuDriver",)


class AksInlineAgentPool(AksNodePool):
    """An agent pool declared inline in an Azure Native ManagedCluster: each map of its `agentPoolProfiles`. The profile
    has the AgentPool's properties under the same names, plus its own `name` and `mode` (System | User | Gateway):
    pulumi-azure-native 3.29.0 (the version in gpufleet's virtualenv) containerservice/_inputs.py
    ManagedClusterAgentPoolProfileArgs, wire names vmSize, nodeLabels, nodeTaints, scaleSetPriority,
    scaleSetEvictionPolicy, capacityReservationGroupID, enableAutoScaling, count, minCount, availabilityZones,
    gpuProfile. A System pool of a GPU size is judged like any other: AKS keeps at least one node in a system pool (the
    SDK's `count`: "1 to 1000 (inclusive) for system pools"), so its GPUs idle, which gpu-pool-scale-to-zero reports."""

    token = CLUSTER
    kind_name = "inline agent pool"
    inline = Inline(path=("agentPoolProfiles",), listed=True, name_key="name")
    shaped_as = NODE_POOL


class AksClassicDefaultNodePool(AksClassicNodePool):
    """The default node pool declared inline in a classic pulumi-azure KubernetesCluster (`defaultNodePool`, one map).
    Its names are the KubernetesClusterNodePool's where it has the fact (pulumi/pulumi-azure sdk/python/pulumi_azure/
    containerservice/_inputs.py KubernetesClusterDefaultNodePoolArgs @v6.39.0: vm_size, node_labels, auto_scaling_enabled,
    min_count, node_count, zones, capacity_reservation_group_id, gpu_driver; @v5.89.3 enable_auto_scaling), but it has
    no `priority` or `eviction_policy` (the default pool cannot be Spot: never spot here) and, in v6, no `node_taints`:
    v5's was deprecated "since the AKS API doesn't allow arbitrary node taints on the default node pool" and removed, so
    its only taint is `only_critical_addons_enabled`'s CriticalAddonsOnly=true:NoSchedule. It is the cluster's system
    pool (it has no `mode`)."""

    token = CLASSIC_CLUSTER
    kind_name = "classic default node pool"
    inline = Inline(path=("defaultNodePool",), name_key="name")
    shaped_as = CLASSIC_NODE_POOL  # the node pool's fields it has, by the same names
    taints_fixed = ("the classic default node pool cannot declare it (pulumi-azure 6 has no defaultNodePool.nodeTaints: "
                    "the AKS API allows no arbitrary taints on the default node pool)")
    critical_addons_key = "onlyCriticalAddonsEnabled"

    def taints(self, inputs: Inputs) -> list[Taint]:
        """v5's deprecated `nodeTaints`, and CriticalAddonsOnly=true:NoSchedule when `onlyCriticalAddonsEnabled`
        ("Enabling this option will taint default node pool with `CriticalAddonsOnly=true:NoSchedule` taint")."""
        critical = [("CriticalAddonsOnly", "true", "NoSchedule")] if inputs.truthy(self.critical_addons_key) else []
        return super().taints(inputs) + critical

    def spot(self, inputs: Inputs) -> bool:
        return False


class AksPolicy(PolicyTraits):
    # gpufleet's own pools are Azure Native agent pools (issue 53); a user's program on the classic provider is judged too,
    # and pools declared inline in either provider's cluster (issue 50).
    pool_types = (AksNodePool(), AksClassicNodePool(), AksInlineAgentPool(), AksClassicDefaultNodePool())
