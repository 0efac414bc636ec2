"""GkeNodePool: one GPU node pool on GKE, shaped from the machine catalog.

The accelerator type and count come from gpufleet/base/catalog/gcp_machines.yaml; GKE installs the driver
(DEFAULT/LATEST) unless the GPU Operator runs the stack (then installation is disabled, nodes run Ubuntu
and GKE's device plugin is switched off by label) or the pool is a DRA pool (installation disabled, GKE's device
plugin off, GKE's DRA labels: docs/dra.md). Autoscaling goes down to zero; spot pools are `spot`;
GKE sharing (time-sharing, MPS) and MIG partitions are node-pool settings; GPUDirect pools attach the
extra VPCs of a GkeGpuDirectNetwork with gVNIC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_gcp as gcp

from gpufleet.components.gke.cluster import CLOUD_PLATFORM_SCOPE
from gpufleet.base.node_labels import node_taints, pool_labels
from gpufleet.base import labels as L
from gpufleet.base.catalog import dra as dra_facts
from gpufleet.base.catalog import gcp_families
from gpufleet.base.catalog.gcp import GcpMachine
from gpufleet.base.platforms.gke.nodes import applied_by_gke
from gpufleet.base.spec import GkePoolSpec, NodePoolSpec
from gpufleet.base.spec.features.reservation import DWS_MODES

# GKE's taint effects are enum names, not Kubernetes' spelling.
_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}
_SHARING = {"time-sharing": "TIME_SHARING", "mps": "MPS"}
_RESERVATION = {"any": "ANY_RESERVATION", "none": "NO_RESERVATION", "specific": "SPECIFIC_RESERVATION"}
RESERVATION_KEY = "compute.googleapis.com/reservation-name"


@dataclass(frozen=True)
class GkeNodePoolArgs:
    pool: NodePoolSpec
    """The pool's spec (machine type, sizes, capacity, labels, taints, gke block)."""
    machine: GcpMachine
    """The machine type's catalog facts (accelerator type, counts, GPUDirect)."""
    cluster_id: pulumi.Input[str]
    """The GKE cluster's id."""
    location: str
    """The cluster's location (region or zone)."""
    project: str
    """GCP project."""
    gpu_stack: str = "gke"
    """gke: GKE installs the driver. operator: the GPU Operator does (driver installation disabled)."""
    private_nodes: bool = True
    """Nodes without external IPs (as the cluster)."""
    workload_identity: bool = True
    """Nodes use the GKE metadata server (Workload Identity)."""
    service_account: Optional[str] = None
    """Node service account; default: the Compute Engine default."""
    node_networks: list = field(default_factory=list)
    """GPUDirect: (network, subnetwork) pairs for additional_node_network_configs, in NIC order."""
    initial_node_count: Optional[int] = None
    """Nodes per zone the pool starts with (gpufleet.base.spec.platforms.gke.initial_node_count: minNodes over the pool's zones);
    default: none, the pool starts empty."""
    local_ssd: tuple = ("none", 0)
    """(mode, count) of local NVMe SSDs: ephemeral-storage | raw-block | none (gpufleet.base.spec.platforms.gke.local_ssd)."""
    sysctls: dict = field(default_factory=dict)
    """Node sysctls (linux_node_config); default: none."""


def gke_taints(pool: NodePoolSpec) -> list[dict]:
    """The pool's taints in GKE's shape. The GPU taint carries GKE's own value ("present"): GKE puts that
    taint on GPU pools itself, so declaring it with another value would give two taints on one key. The Arm taint GKE
    applies itself (A4X) is left to GKE (gpufleet/base/platforms/gke/nodes.py applied_by_gke)."""
    return [{"key": t["key"], "value": t["value"], "effect": _EFFECTS[t["effect"]]} for t in node_taints(pool, "gke")
            if not applied_by_gke(t)]


def upgrade_settings(gke: GkePoolSpec) -> gcp.container.NodePoolUpgradeSettingsArgs:
    """surge (maxSurge/maxUnavailable, default 0/1 as cluster-toolkit's gke-node-pool) or blue-green."""
    up = gke.upgrade
    if up.strategy == "blue-green":
        return gcp.container.NodePoolUpgradeSettingsArgs(
            strategy="BLUE_GREEN",
            blue_green_settings=gcp.container.NodePoolUpgradeSettingsBlueGreenSettingsArgs(
                node_pool_soak_duration=up.soak_duration,
                standard_rollout_policy=gcp.container.NodePoolUpgradeSettingsBlueGreenSettingsStandardRolloutPolicyArgs(
                    batch_node_count=up.batch_node_count
                ),
            ),
        )
    return gcp.container.NodePoolUpgradeSettingsArgs(strategy="SURGE", max_surge=up.max_surge, max_unavailable=up.max_unavailable)


def accelerator(pool: NodePoolSpec, machine: GcpMachine, gpu_stack: str) -> dict:
    """The guest_accelerators entry: type and count from the catalog, driver, sharing and MIG."""
    opts = pool.gke or GkePoolSpec()
    # DRA pools: GKE's driver installation is disabled (GKE set-up-dra: "Automatic GPU driver installation isn't
    # supported with DRA"); COS's installer DaemonSet or the GPU Operator installs the driver instead.
    disabled = gpu_stack == "operator" or pool.allocation == "dra"
    driver = "INSTALLATION_DISABLED" if disabled else opts.gpu_driver_version
    out: dict = {
        "type": machine.accelerator,
        "count": pool.accelerator_count or machine.fixed_count,
        "gpu_driver_installation_config": {"gpu_driver_version": driver},
    }
    if opts.gpu_sharing is not None:
        out["gpu_sharing_config"] = {
            "gpu_sharing_strategy": _SHARING[opts.gpu_sharing.strategy],
            "max_shared_clients_per_gpu": opts.gpu_sharing.max_shared_clients_per_gpu,
        }
    if opts.gpu_partition_size is not None:
        out["gpu_partition_size"] = opts.gpu_partition_size
    return out


def cold_start_config(pool: NodePoolSpec) -> dict:
    """node_config inputs of the pool's cold-start path (gpufleet/base/spec/features/cold_start.py): image streaming
    (gcfs_config), a secondary boot disk holding a container image cache, a bound on parallel image pulls. None of
    them is set without a coldStart block, so existing pools keep their inputs.

    GKE "Use secondary boot disks to preload data or container images": `--secondary-boot-disk=disk-image=...,
    mode=CONTAINER_IMAGE_CACHE` with `--enable-image-streaming` (ai-on-gke's examples always pass both)."""
    cs = pool.cold_start
    if cs is None:
        return {}
    out: dict = {}
    if cs.streams() or "image_streaming" in cs.model_fields_set:
        out["gcfs_config"] = gcp.container.NodePoolNodeConfigGcfsConfigArgs(enabled=cs.streams())
    if cs.secondary_boot_disk:
        out["secondary_boot_disks"] = [gcp.container.NodePoolNodeConfigSecondaryBootDiskArgs(
            disk_image=cs.secondary_boot_disk, mode="CONTAINER_IMAGE_CACHE")]
    if cs.parallel_image_pulls is not None:
        out["kubelet_config"] = gcp.container.NodePoolNodeConfigKubeletConfigArgs(
            max_parallel_image_pulls=cs.parallel_image_pulls)
    return out


def capacity_reservation(pool: NodePoolSpec, project: str):
    """reservation_affinity of a pool's capacity kind: the reservation of a reserved pool (a shared one as
    projects/<owner>/reservations/<name>, GKE "Consuming reserved zonal resources"), NO_RESERVATION for DWS
    pools (flex-start and queued provisioning consume no reservation: GKE DWS docs `--reservation-affinity=none`)."""
    if pool.capacity in DWS_MODES:
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="NO_RESERVATION")
    r = pool.reservation
    if pool.capacity != "reserved" or r is None:
        return None
    if r.type == "any":
        return gcp.container.NodePoolNodeConfigReservationAffinityArgs(consume_reservation_type="ANY_RESERVATION")
    value = f"projects/{r.project}/reservations/{r.name}" if r.project and r.project != project else r.name
    return gcp.container.NodePoolNodeConfigReservationAffinityArgs(
        consume_reservation_type="SPECIFIC_RESERVATION", key=RESERVATION_KEY, values=[value]
    )


def region_of(location: str) -> str:
    """The region of a GKE location (a region, or a zone: us-central1-b -> us-central1)."""
    parts = location.split("-")
    return "-".join(parts[:2]) if len(parts) > 2 else location


def workload_policy(machine: str) -> Optional[dict]:
    """The Compute Engine workload policy a pool of these machines needs (A4X, A4X Max: HIGH_THROUGHPUT, accelerator
    topology 1x72; catalog dra.yaml `placement`), or None."""
    system = dra_facts.nvlink_system("gke", machine)
    return system.workload_policy if system else None


def reservation_labels(pool: NodePoolSpec) -> dict[str, str]:
    """GCE resource labels declaring what a reserved pool's reservation holds (for `reservation-placement`)."""
    r = pool.reservation
    if pool.capacity != "reserved" or r is None:
        return {}
    facts = {"type": r.type, "name": r.name, "zone": r.zone, "instance-type": r.instance_type or pool.machine_type,
             "instance-count": r.instance_count}
    return {L.GKE_RESERVATION_LABEL_PREFIX + k: str(v) for k, v in facts.items() if v is not None}


class GkeNodePool(pulumi.ComponentResource):
    """`gpufleet:gke:GkeNodePool`: one GPU node pool (`<name>-pool`) shaped from the machine catalog: accelerator type
    and count, GKE's driver installation (or none where the GPU Operator or DRA runs the stack), on-demand, Spot
    or a reservation, autoscaling from minNodes, gpufleet's labels and taints; a compact placement policy
    (`<name>-workload-policy`) where the pool asks for one."""

    def __init__(self, name: str, args: GkeNodePoolArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:GkeNodePool", name, None, opts)
        pool, machine = args.pool, args.machine
        gke = pool.gke or GkePoolSpec()
        labels = pool_labels(pool, machine.gpu)
        if args.gpu_stack == "operator" or pool.allocation == "dra":
            labels[L.GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL] = "true"
        if pool.allocation == "dra":
            # GKE set-up-dra and Google's DRA tutorial (ai-on-gke gpu-fungibility): GKE's device plugin off (above), the
            # label that tells GKE's cluster autoscaler the pool's GPUs come through the DRA driver, and the label the
            # DRA driver's kubelet plugin's nodeAffinity matches (gpufleet/base/labels.py).
            labels[L.GKE_DRA_DRIVER_LABEL] = "true"
            labels[L.GPU_PRESENT_LABEL] = "true"
        if pool.capacity == "queued":
            # GKE taints queued-provisioning nodes itself; the label lets workloads and Kueue flavors select them
            # (cluster-toolkit v1.95.0 gke-node-pool adds it the same way).
            labels[L.GKE_QUEUED_KEY] = "true"
        # Exemptions are visible: a node label per policy, `gpufleet.io/exempt-<policy>: <reason>` (the policy pack reads
        # nodeConfig.labels). A label value holds at most 63 characters and no spaces: the label carries the reason's
        # label-safe form, the plan's capacity row the full sentence.
        labels.update({L.exempt_key(p): L.label_safe(why) for p, why in sorted(pool.exemptions.items())})
        reservation = None
        if gke.reservation is not None:
            specific = gke.reservation.type == "specific"
            reservation = gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                consume_reservation_type=_RESERVATION[gke.reservation.type],
                key=RESERVATION_KEY if specific else None,
                values=[gke.reservation.name] if specific else None,
            )
        reservation = capacity_reservation(pool, args.project) or reservation
        dws = pool.capacity in DWS_MODES
        zones = list(gke.zones) or ([pool.reservation.zone] if pool.capacity == "reserved" and pool.reservation and pool.reservation.zone else [])
        gpudirect = bool(args.node_networks)
        ssd_mode, ssd_count = args.local_ssd
        if gke.autoscaling:
            # The autoscaler owns the size between these totals (min 0: idle GPU nodes go away); gpufleet never sets
            # node_count, so `pulumi up` does not fight the autoscaler. A pool with minNodes > 0 starts with them
            # (initial_node_count, per zone): GKE's autoscaler only keeps a pool from shrinking below its minimum.
            sizing: dict = {
                "autoscaling": gcp.container.NodePoolAutoscalingArgs(
                    total_min_node_count=pool.min_nodes,
                    total_max_node_count=pool.max_nodes,
                    # DWS pools: location policy ANY (GKE DWS docs; cluster-toolkit always sets it for DWS).
                    location_policy="ANY" if dws else gke.location_policy,
                ),
                "initial_node_count": None if dws else args.initial_node_count,
            }
            # initialNodeCount forces replacement and GKE rewrites it on resize (hashicorp/terraform-provider-google#6354).
            ignore = ["initialNodeCount"]
        else:
            # A fixed-size pool: no autoscaler, gpufleet owns node_count (per zone) and `pulumi up` keeps it.
            sizing = {"node_count": args.initial_node_count}
            ignore = []
        # Local SSD configs replace the pool when they change, and they follow from the machine type: like
        # cluster-toolkit's gke-node-pool (main.tf lines 309-316 at v1.95.0) they are set at creation and then left
        # alone, so pools created before gpufleet used the SSDs are not replaced by an upgrade of gpufleet.
        ignore += ["nodeConfig.ephemeralStorageLocalSsdConfig", "nodeConfig.localNvmeSsdBlockConfig"]
        series = gcp_families.series(machine.name)
        needs_gvnic = bool(series and series.gvnic)
        # A4X and A4X Max: Compute Engine requires a workload policy with the accelerator topology of one NVLink domain
        # (1x72) on the VMs of a sub-block (about-workload-policies); GKE takes it as the pool's COMPACT placement policy
        # by name, as Google's A4X blueprints do (cluster-toolkit v1.95.0 examples/gke-a4x*: resource-policy
        # workload_policy -> gke-node-pool placement_policy {type: COMPACT, policy_name}). The policy's name is
        # Pulumi's auto-name: resource policies are per project and region, shared by every cluster there.
        self.workload_policy = None
        wp = workload_policy(machine.name)
        placement = gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT") if gke.placement == "compact" else None
        if wp:
            self.workload_policy = gcp.compute.ResourcePolicy(
                f"{name}-workload-policy",
                project=args.project,
                region=region_of(args.location),
                description=f"gpufleet: one NVLink domain ({wp['accelerator_topology']}) for GKE node pool {pool.name}",
                workload_policy=gcp.compute.ResourcePolicyWorkloadPolicyArgs(
                    type=wp["type"], accelerator_topology=wp["accelerator_topology"]),
                opts=pulumi.ResourceOptions(parent=self),
            )
            placement = gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", policy_name=self.workload_policy.name)
        self.node_pool = gcp.container.NodePool(
            f"{name}-pool",
            name=pool.name,
            project=args.project,
            cluster=args.cluster_id,
            location=args.location,
            node_locations=zones or None,
            **sizing,
            # Flex-start and queued pools: no auto-repair (GKE DWS docs, `--no-enable-autorepair`); queued pools
            # also no auto-upgrade (cluster-toolkit dws examples: "queued provisioning requirement").
            management=gcp.container.NodePoolManagementArgs(
                auto_repair=not dws, auto_upgrade=gke.auto_upgrade and pool.capacity != "queued"
            ),
            upgrade_settings=upgrade_settings(gke),
            placement_policy=placement,
            queued_provisioning=gcp.container.NodePoolQueuedProvisioningArgs(enabled=True) if pool.capacity == "queued" else None,
            node_config=gcp.container.NodePoolNodeConfigArgs(
                machine_type=machine.name,
                spot=pool.capacity == "spot",
                flex_start=True if dws else None,
                max_run_duration=f"{gke.max_run_duration_seconds}s" if dws and gke.max_run_duration_seconds else None,
                resource_labels=reservation_labels(pool) or None,
                guest_accelerators=[accelerator(pool, machine, args.gpu_stack)],
                # The NVIDIA driver manager (GPU Operator) supports Ubuntu node images only.
                image_type="UBUNTU_CONTAINERD" if args.gpu_stack == "operator" else "COS_CONTAINERD",
                disk_size_gb=gke.disk_size_gb,
                # From the catalog: A3 Ultra and A4 reject Persistent Disk boot disks (Hyperdisk only).
                disk_type=machine.boot_disk,
                # Bundled local NVMe SSDs (A3: 16, A3 Ultra/A4: 32) hold images and emptyDirs instead of the boot disk,
                # as cluster-toolkit's gke-node-pool does by default (disk_definitions.tf).
                ephemeral_storage_local_ssd_config=gcp.container.NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs(
                    local_ssd_count=ssd_count
                ) if ssd_mode == "ephemeral-storage" else None,
                local_nvme_ssd_block_config=gcp.container.NodePoolNodeConfigLocalNvmeSsdBlockConfigArgs(
                    local_ssd_count=ssd_count
                ) if ssd_mode == "raw-block" else None,
                linux_node_config=gcp.container.NodePoolNodeConfigLinuxNodeConfigArgs(sysctls=dict(args.sysctls))
                if args.sysctls else None,
                labels=labels,
                taints=gke_taints(pool),
                reservation_affinity=reservation,
                # GPUDirect NICs are gVNICs; third-generation series (A3, A4) take gVNIC only (catalog/gcp_families.yaml).
                # GKE's gVNIC option needs Container-Optimized OS nodes ("Increase network traffic speed for GPU nodes":
                # requirements), so the operator stack's Ubuntu pools leave it to GKE.
                gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True)
                if gpudirect or (needs_gvnic and args.gpu_stack == "gke") else None,
                service_account=args.service_account,
                oauth_scopes=[CLOUD_PLATFORM_SCOPE],
                workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(mode="GKE_METADATA")
                if args.workload_identity else None,
                metadata={"disable-legacy-endpoints": "true"},
                shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
                    enable_secure_boot=True, enable_integrity_monitoring=True
                ),
                **cold_start_config(pool),
            ),
            network_config=gcp.container.NodePoolNetworkConfigArgs(
                enable_private_nodes=args.private_nodes,
                additional_node_network_configs=[
                    gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgs(network=n, subnetwork=s)
                    for n, s in args.node_networks
                ] or None,
            ),
            opts=pulumi.ResourceOptions(parent=self, ignore_changes=ignore),
        )
        self.register_outputs({"name": pool.name, "machineType": machine.name, "accelerator": machine.accelerator})
