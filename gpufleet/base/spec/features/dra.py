"""gpufleet:dra — what the DRA pools (`nodePools[*].allocation: dra`) offer workloads: ResourceClaimTemplates in the
teams' namespaces and ComputeDomains for multi-node NVLink jobs. Checks: gpufleet/base/spec/features/dra_checks.py."""

from typing import Annotated, Optional

from pydantic import Field

from gpufleet.base.spec.base import DNS_LABEL, Model


class ComputeDomainSpec(Model):
    """A ComputeDomain (resource.nvidia.com/v1beta1) of NVIDIA's DRA driver: pods that claim its channel get IMEX
    channels across the nodes of one NVLink domain, so a multi-node job uses the rack's NVLink fabric."""

    name: str = Field(pattern=DNS_LABEL, max_length=40)
    """The ComputeDomain's name; its channel ResourceClaimTemplate is `<name>-channel` in the same namespace."""
    namespace: str = Field(default="default", pattern=DNS_LABEL)
    """The namespace of the team or job template that uses it; default: `default`."""
    pool: str = Field(pattern=DNS_LABEL, max_length=40)
    """The DRA pool of multi-node NVLink machines (GB200 NVL72) the domain's pods run on."""
    num_nodes: int = Field(default=0, ge=0)
    """spec.numNodes: IMEX daemons to wait for. Default 0: with the driver's default IMEXDaemonsWithDNSNames feature
    gate the domain follows the pods (the CRD recommends 0 there)."""


class DraSpec(Model):
    """What the DRA pools offer workloads; used only when a pool has `allocation: dra`."""

    namespaces: list[Annotated[str, Field(pattern=DNS_LABEL, max_length=63)]] = ["default"]
    """Namespaces that get the DRA pools' ResourceClaimTemplates (`<pool>-gpu`: one whole GPU; `<pool>-mig-<profile>`:
    one MIG device on MIG pools). Default: `default`."""
    compute_domains: list[ComputeDomainSpec] = []
    """ComputeDomains, one per training team or job template that runs multi-node NVLink jobs; default: none."""
    driver_root: Optional[str] = Field(default=None, pattern=r"^/[A-Za-z0-9._/-]*$", max_length=200)
    """nvidiaDriverRoot of the DRA driver: where the NVIDIA driver's files are on the host. Default: from the platform
    and driver source (/run/nvidia/driver when the GPU Operator installs the driver, /home/kubernetes/bin/nvidia on
    GKE, / for a preinstalled driver)."""


def channel_pools(spec) -> tuple[str, ...]:
    """Device-plugin pools a ComputeDomain runs on: GPUs come from the device plugin (GKE's on GKE's own GPU stack),
    IMEX channels from NVIDIA's DRA driver with its GPU allocation off. Google's A4X design (cluster-toolkit v1.95.0
    (079cf834) modules/management/kubectl-apply/main.tf lines 317-369: `resources.gpus.enabled: false`, the kubelet
    plugin on the A4X nodes; examples/gke-a4x/gke-a4x.yaml: GKE's device plugin, Kueue quota on nvidia.com/gpu)."""
    allocation = {p.name: p.allocation for p in spec.node_pools}
    return tuple(sorted({cd.pool for cd in spec.dra.compute_domains if allocation.get(cd.pool) == "device-plugin"}))
