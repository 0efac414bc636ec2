"""gke: nodes traits (gpufleet/base/platforms/contract/nodes.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog
from gpufleet.base import labels as L
from gpufleet.base.catalog import gcp
from gpufleet.base.platforms.contract.nodes import GpuShape, NodeTraits


# Machine families whose hosts are Arm: A4X (a4x-highgpu-4g, GB200 on Grace) and A4X Max (a4x-maxgpu-4g-metal, GB300
# on Grace): gcp_machines.yaml sources xpk_gb200 ("GB200: Grace CPU, Arm") and gce_gpus_a4x_max ("Arm (Grace) host").
ARM_FAMILIES = ("a4x",)


def arm_host(pool: Any) -> bool:
    """Whether the pool's machine type runs on an Arm host (its family is in ARM_FAMILIES)."""
    return bool(pool.machine_type) and pool.machine_type.split("-")[0] in ARM_FAMILIES


def machine_of(pool: Any) -> Optional[gcp.GcpMachine]:
    """The pool's machine type as the node pool is built from it: the catalog's row, or for a machine type the catalog
    lacks, one made of the facts the stack gives (issue 49: `gpu`, `gpusPerNode`; the accelerator type is the GPU's only
    Compute Engine accelerator, gcp_machines.yaml `accelerators`; no GPUDirect, no catalog price). None: neither."""
    if not pool.machine_type:
        return None
    if pool.machine_type in gcp.machines():
        return gcp.machine(pool.machine_type)
    accelerators = gcp.gpu_accelerators(pool.gpu or "")
    if pool.gpus_per_node is None or len(accelerators) != 1:
        return None
    return gcp.GcpMachine(name=pool.machine_type, accelerator=accelerators[0], gpu=pool.gpu, counts=(pool.gpus_per_node,),
                          gpudirect=None, on_demand=None, spot=None, gpu_on_demand=0.0, gpu_spot=0.0, sources=("stack",))


def applied_by_gke(taint: dict[str, str]) -> bool:
    """A taint GKE puts on the nodes by itself and a node pool need not declare: the Arm architecture taint (GKE applies
    it to every Arm node pool unless the pool's taintConfig says NONE, which gpufleet never sets). Declaring it would
    only change the pool's inputs; the GPU taint stays declared (GKE's own value, so the pool's taints are explicit)."""
    return taint == L.ARM_ARCH_TAINT


class GkeNodes(NodeTraits):
    stack_shape_unknowns = "its GPUDirect networks, local SSDs and sale options are unknown (RDMA is not offered)"

    def uncatalogued(self, pool: Any) -> list[str]:
        return [pool.machine_type] if pool.machine_type and pool.machine_type not in gcp.machines() else []

    def taints(self, pool: Any, declared: list[dict[str, str]]) -> list[dict[str, str]]:
        """The GPU taint has GKE's own value ("present"; GKE taints GPU node pools `nvidia.com/gpu=present:NoSchedule`
        itself), the others are gpufleet's; on Arm machines (A4X, A4X Max) GKE's default Arm taint
        `kubernetes.io/arch=arm64:NoSchedule` comes last (labels.ARM_ARCH_TAINT: the node pool API's
        architectureTaintBehavior defaults to ARM). Every DaemonSet and Kueue flavor that must run on the pool reads
        these (node_labels.node_taints), so the DRA kubelet plugin, the GPU Operator and the pool's ResourceFlavor
        tolerate it, as cluster-toolkit v1.95.0 (079cf834) tolerates it for the DRA driver's kubelet plugin
        (modules/management/kubectl-apply/main.tf lines 353-357) and the A4X ResourceFlavor
        (examples/gke-a4x/kueue-configuration.yaml.tftpl)."""
        out = [{**t, "value": L.GKE_GPU_TAINT_VALUE} if t["key"] == L.GPU_TAINT_KEY else t for t in declared]
        if arm_host(pool) and L.ARM_ARCH_TAINT not in out:
            out.append(dict(L.ARM_ARCH_TAINT))
        return out

    def gpu_shape(self, pool: Any) -> Optional[GpuShape]:
        """A machine-type pool: the machine's GPU model (gpufleet/base/catalog/gcp_machines.yaml) and its
        acceleratorCount, else the machine's fixed GPU count."""
        if not pool.machine_type or pool.machine_type not in gcp.machines():
            return None
        m = gcp.machine(pool.machine_type)
        return GpuShape(m.gpu, pool.accelerator_count or m.fixed_count)

    def advertised(self, pool: Any) -> Optional[dict[str, int]]:
        """A machine-type pool: GKE's device plugin advertises one nvidia.com/gpu per MIG partition, times the clients
        per GPU when shared (gke.gpuPartitionSize, gke.gpuSharing). A machine type the catalog lacks advertises the GPUs
        the stack gives it (`machine_of`: gpu, gpusPerNode), as GKE's device plugin would; without them nothing (the
        GKE checks report it)."""
        if not pool.machine_type:
            return None
        machine = machine_of(pool)
        if machine is None:
            return {}
        per_node = pool.accelerator_count or machine.fixed_count or 0
        opts = pool.gke
        mig = catalog.gpu(machine.gpu).mig
        if opts is not None and opts.gpu_partition_size:
            per_node *= mig.profiles.get(opts.gpu_partition_size, 0) if mig is not None else 0
        if opts is not None and opts.gpu_sharing is not None:
            per_node *= opts.gpu_sharing.max_shared_clients_per_gpu
        return {L.GPU_RESOURCE: per_node}
