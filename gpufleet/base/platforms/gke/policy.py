"""gke: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means).

A GKE GPU pool is a node pool (`gcp:container/nodePool:NodePool`) with accelerators or an accelerator-optimized machine.
A program may also declare its pools inline in the cluster (`gcp:container/cluster:Cluster`, issue 50): each map of its
`nodePools` (GkeClusterNodePool), and the default node pool its own `nodeConfig` and `initialNodeCount` make
(GkeDefaultNodePool); both have a NodePool's shape, so they read the same way.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base import labels
from gpufleet.base.catalog import gcp
from gpufleet.base.platforms.contract.policy import (
    GpuPoolType, GpuShape, Idle, Inline, Inputs, PolicyTraits, Taint, object_taints,
)

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"

# GKE installs the driver itself for these gpuDriverVersion values.
DRIVER_INSTALLED = ("DEFAULT", "LATEST")


def gke_shape(machine_type: str, accelerator: Optional[str] = None, count: int = 0) -> Optional[GpuShape]:
    """A GKE node's GPU shape from its machine type, or its attached accelerators (N1 + T4, ...). The price
    is the whole node's (VM and GPUs), known only for machine types in the catalog (gcp_machines.yaml)."""
    machine = gcp.machines().get(machine_type)
    if machine:
        accelerator = accelerator or machine.accelerator
        count = count or machine.fixed_count or 0
    gpu = gcp.accelerator_gpu(accelerator) if accelerator else None
    if gpu is None:
        return None
    return GpuShape(
        machine_type,
        gpu,
        count,
        machine.price("on_demand", count) if machine and count else None,
        gpudirect_networks=machine.gpudirect.additional_node_networks if machine and machine.gpudirect else 0,
        spot_price_hour=machine.price("spot", count) if machine and count else None,
    )


class GkeNodePool(GpuPoolType):
    """A GKE node pool. GKE taints GPU nodes `nvidia.com/gpu=present:NoSchedule` itself when the cluster also has
    non-GPU pools (GKE docs, "About GPUs: taints and tolerations"); its cluster autoscaler is GKE's own."""

    token = NODE_POOL
    kind_name = "node pool"
    taints_gpu_nodes_itself = True
    spot_label = "cloud.google.com/gke-spot"
    spot_taint_keys = ("cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible")

    def gpu_pool(self, inputs: Inputs) -> Optional[tuple[Optional[GpuShape], list[str]]]:
        """Accelerators with a count, or an accelerator-optimized machine type."""
        machine = inputs.text("nodeConfig", "machineType") or ""
        accs = [a for a in inputs.each("nodeConfig", "guestAccelerators") if (a.number("count") or 0) > 0]
        if not accs and not gcp.machine_has_gpus(machine):
            return None
        acc_type = accs[0].text("type") if accs else None
        count = int(accs[0].number("count") or 0) if accs else 0
        return gke_shape(machine, acc_type, count), [machine] if machine else []

    def labels(self, inputs: Inputs) -> dict:
        return inputs.mapping("nodeConfig", "labels")

    def taints(self, inputs: Inputs) -> list[Taint]:
        return object_taints(inputs, "nodeConfig", "taints")

    def spot(self, inputs: Inputs) -> bool:
        return inputs.truthy("nodeConfig", "spot") or inputs.truthy("nodeConfig", "preemptible")

    def reserved(self, inputs: Inputs) -> bool:
        """A pool consuming a specific reservation."""
        return inputs.get("nodeConfig", "reservationAffinity", "consumeReservationType") == "SPECIFIC_RESERVATION"

    def minimum(self, inputs: Inputs) -> Optional[float]:
        """The larger of the per-zone and total minimums; a pool without autoscaling keeps its node count."""
        if not inputs.mapping("autoscaling"):
            return inputs.number("nodeCount") or inputs.number("initialNodeCount")
        return max(inputs.number("autoscaling", "minNodeCount") or 0, inputs.number("autoscaling", "totalMinNodeCount") or 0)

    def scale_to_zero_problems(self, inputs: Inputs, idle: Idle) -> list[str]:
        """Autoscaling enabled with a minimum of 0 (per zone and total); a DWS pool (flex-start, queued provisioning)
        gets nodes only when work asks: no initial node count."""
        if not inputs.mapping("autoscaling"):
            fixed = inputs.number("nodeCount") or inputs.number("initialNodeCount") or 0
            extra = f": {idle(fixed, 1)}" if fixed > 0 else ""
            return [f"autoscaling is not enabled, so the pool never scales to or from 0{extra}"]
        zones = len(inputs.items("nodeLocations")) or 1
        problems: list[str] = []
        if self.reserved(inputs):
            return problems
        dws = inputs.truthy("nodeConfig", "flexStart") or inputs.truthy("queuedProvisioning", "enabled")
        initial = inputs.number("initialNodeCount")
        if dws and initial:
            problems.append(f"initialNodeCount is {initial:g} on a DWS (flex-start / queued) pool: its nodes should come only when "
                            f"work asks for them: {idle(initial, 1)}")
        per_zone = inputs.number("autoscaling", "minNodeCount")
        if per_zone is not None and per_zone > 0:
            problems.append(f"autoscaling.minNodeCount is {per_zone:g}, not 0: {idle(per_zone, zones)}")
        total = inputs.number("autoscaling", "totalMinNodeCount")
        if total is not None and total > 0:
            problems.append(f"autoscaling.totalMinNodeCount is {total:g}, not 0: {idle(total, 1)}")
        return problems

    def reservation_problems(self, inputs: Inputs) -> list[str]:
        """A specific reservation is consumed only in its zone (`nodeLocations` exactly that zone) with its machine type,
        never by spot VMs; flex-start and queued-provisioning pools consume no reservation (`NO_RESERVATION`: GKE DWS
        docs, ../shared/reference/gcp/dws.md). What the reservation holds: gpufleet's `gpufleet-reservation-*` resource
        labels."""
        out = []
        affinity = inputs.get("nodeConfig", "reservationAffinity", "consumeReservationType")
        dws = inputs.truthy("nodeConfig", "flexStart") or inputs.truthy("queuedProvisioning", "enabled")
        if dws and affinity not in (None, "NO_RESERVATION"):
            out.append(f"a flex-start / queued-provisioning pool consumes no reservation, but reservationAffinity is {affinity}: set NO_RESERVATION")
        if affinity not in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
            return out
        if inputs.truthy("nodeConfig", "spot") or inputs.truthy("nodeConfig", "preemptible"):
            out.append(f"spot VMs cannot consume reservations (reservationAffinity {affinity})")
        prefix = labels.GKE_RESERVATION_LABEL_PREFIX
        declared = {k[len(prefix):]: v for k, v in inputs.mapping("nodeConfig", "resourceLabels").items()
                    if isinstance(k, str) and k.startswith(prefix) and isinstance(v, str)}
        zone = declared.get("zone")
        locations = [z for z in inputs.items("nodeLocations") if isinstance(z, str)]
        if zone and affinity == "SPECIFIC_RESERVATION" and locations != [zone]:
            now = ", ".join(locations) if locations else "the cluster's zones"
            out.append(f"the reservation is in {zone}, but the pool's nodes run in {now}: set nodeLocations to [{zone}]")
        machine = inputs.text("nodeConfig", "machineType")
        held = declared.get("instance-type")
        if held and machine and machine != held:
            out.append(f"the reservation holds {held}, but the pool's machine type is {machine}")
        return out

    def rdma_problems(self, name: str, inputs: Inputs, shape: Optional[GpuShape], instance_types: list[str]) -> list[str]:
        """A node pool with any `networkConfig.additionalNodeNetworkConfigs` is a GPUDirect pool: as many additional
        networks as its machine type needs (a3-highgpu-8g: 4 for GPUDirect-TCPX, a3-megagpu-8g: 8; GKE "Maximize GPU
        network bandwidth")."""
        networks = inputs.items("networkConfig", "additionalNodeNetworkConfigs")
        needed = shape.gpudirect_networks if shape else 0
        if not networks or not needed or len(networks) >= needed:
            return []
        machine = instance_types[0] if instance_types else "?"
        return [f"GPUDirect pool '{name}' has {len(networks)} additional node network(s); {machine} needs {needed}"]

    def _driver_modes(self, inputs: Inputs) -> set:
        return {a.get("gpuDriverInstallationConfig", "gpuDriverVersion") for a in inputs.each("nodeConfig", "guestAccelerators")}

    def driver_preinstalled(self, inputs: Inputs) -> bool:
        """Accelerators that ask GKE to install the driver (gpuDriverVersion DEFAULT | LATEST)."""
        return bool(self._driver_modes(inputs) & set(DRIVER_INSTALLED))

    def driver_absent(self, inputs: Inputs) -> bool:
        """Accelerators with INSTALLATION_DISABLED."""
        return "INSTALLATION_DISABLED" in self._driver_modes(inputs)

    def driver_version_unknown(self, inputs: Inputs) -> bool:
        """A GKE-installed driver's version is not in the pool's inputs."""
        return any(a.get("gpuDriverInstallationConfig", "gpuDriverVersion") in DRIVER_INSTALLED
                   for a in inputs.each("nodeConfig", "guestAccelerators"))


class GkeClusterNodePool(GkeNodePool):
    """A node pool declared inline in a cluster: each map of its `nodePools`. pulumi-gcp 10.2.0 (the version in
    gpufleet's virtualenv) container/_inputs.py ClusterNodePoolArgs has the NodePool's fields under the same wire names
    (name, autoscaling.minNodeCount / totalMinNodeCount, initialNodeCount, nodeCount, nodeLocations, nodeConfig with
    machineType, guestAccelerators, labels, taints, spot, preemptible, reservationAffinity, flexStart, resourceLabels;
    networkConfig.additionalNodeNetworkConfigs, queuedProvisioning.enabled), so every reader is the node pool's."""

    token = CLUSTER
    kind_name = "inline node pool"
    inline = Inline(path=("nodePools",), listed=True, name_key="name")
    shaped_as = NODE_POOL


class GkeDefaultNodePool(GkeNodePool):
    """The default node pool a cluster makes from its own `nodeConfig` (ClusterNodeConfigArgs: the NodePool's nodeConfig
    fields) and `initialNodeCount`, read from the cluster's inputs with the node pool's readers. The cluster has no
    `autoscaling`, `nodeCount`, `networkConfig` or `queuedProvisioning` of its own (pulumi-gcp 10.2.0 ClusterArgs), so
    the default pool reads as a pool without autoscaling (fixed at initialNodeCount per zone, which is what it is: the
    cluster resource cannot turn the autoscaler on for it) and without GPUDirect networks. Messages name it
    `<cluster>/nodeConfig (default pool)`.

    The pool exists only when the cluster makes it (pulumi-gcp 10.2.0 container/cluster.py): `node_config` is
    "Parameters used in creating the default node pool" and "should not be used at the same time as ... a `node_pool`
    block", `initial_node_count` "Must be set if `node_pool` is not set"; `remove_default_node_pool` "deletes the default
    node pool upon cluster creation"; an Autopilot cluster (`enable_autopilot`) has no node pools of the program's: GKE
    manages its nodes (the comparison the SDK links, cloud.google.com/kubernetes-engine/docs/concepts/autopilot-overview).
    So it is judged only when the cluster lists no `nodePools`, does not remove it and is not Autopilot."""

    token = CLUSTER
    kind_name = "default node pool"
    inline = Inline(path=(), name_key="", unnamed="default pool", shown="nodeConfig")
    shaped_as = NODE_POOL  # its nodeConfig is a NodePool's (ClusterNodeConfigArgs: the same guestAccelerators fields)

    def declares_pool(self, resource: Inputs) -> bool:
        return not (resource.items("nodePools") or resource.truthy("removeDefaultNodePool")
                    or resource.truthy("enableAutopilot"))


class GkePolicy(PolicyTraits):
    pool_types = (GkeNodePool(), GkeClusterNodePool(), GkeDefaultNodePool())
