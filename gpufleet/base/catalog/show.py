"""`gpufleet catalog show [TYPE|GPU]`: catalog facts with their sources, as text.

With no argument: the catalog's files and dates, and the names it knows. With an EC2 instance type, a GCP
machine type, or a GPU model: that entry's facts, then each source it cites, spelled out.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base import catalog
from gpufleet.base.catalog import _load, aws, azure, gcp, offerings, prices


def _sources(file: str, keys) -> list[str]:
    table = _load(file).get("sources", {})
    return [f"  [{k}] {table.get(k, '(source key not found)')}" for k in keys]


def _aws(name: str) -> list[str]:
    t = aws.instance_type(name)
    # The on-demand figure's own date (a row typed from Karpenter's Price List table is of 2026-07-20, not of the
    # file's prices_as_of): the date the plan's cost line gives it (prices.aws_instance_price).
    def dated(capacity: str, value) -> str:
        fact = prices.aws_instance_price(name, capacity, None)
        return f"{_money(value)}" + (f" (as of {fact.as_of})" if fact is not None else "")
    lines = [
        f"EC2 instance type {name}",
        f"  GPU: {t.gpus} x {t.gpu}" if t.gpus else "  GPU: none (CPU type)",
        f"  network cards: {t.network_cards}; EFA interfaces: {t.efa_interfaces}"
        + (f" (secondary: {t.efa_secondary})" if t.efa_interfaces else ""),
        f"  price (USD/h, us-east-1): on-demand {dated('on-demand', t.on_demand)}, spot {dated('spot', t.spot)}",
    ]
    block = aws.capacity_block_rates().get(name)
    if block:
        lines.append(f"  EC2 Capacity Block (USD/h per instance, {block['region']}, {block['zone']}): {_money(block['hourly'])} "
                     f"({block['per_accelerator']} per accelerator, as of {block['as_of']}; aws_instances.yaml capacity_block_prices)")
    where = offerings.aws_regions_offering(name)
    lines.append(f"  offered in (recorded regions): {', '.join(where) if where else 'not recorded'}")
    return lines + ["sources:"] + _sources("aws_instances.yaml", t.sources)


def _gcp(name: str) -> list[str]:
    m = gcp.machine(name)
    lines = [
        f"GCP machine type {name}",
        f"  accelerator: {m.accelerator} ({m.gpu}), count {'/'.join(map(str, m.counts))}"
        + (f", {m.gpu_memory_gb:g} GB GPU memory" if m.gpu_memory_gb else ""),
        f"  {m.vcpus if m.vcpus is not None else '?'} vCPUs, "
        f"{f'{m.memory_gb:g}' if m.memory_gb is not None else '?'} GB memory",
        f"  sold as: {', '.join(m.sale_options)}" + (" (on-demand normally through a reservation)" if m.on_demand_needs_reservation else ""),
        f"  GPUDirect: {m.gpudirect.kind} ({m.gpudirect.additional_node_networks} additional networks)" if m.gpudirect else "  GPUDirect: none",
        f"  boot disk: {m.boot_disk}",
        f"  price (USD/h, us-central1, as of {gcp.price_date()}): on-demand {_money(m.on_demand)}, spot {_money(m.spot)}"
        + (f"; per GPU on-demand {_money(m.gpu_on_demand)}, spot {_money(m.gpu_spot)}" if m.gpu_on_demand else ""),
    ]
    where = offerings.gcp_zones_offering(name, m.accelerator)
    lines.append(f"  offered in (recorded zones): {', '.join(where) if where else 'not recorded'}")
    return lines + ["sources:"] + _sources(gcp.FILE, m.sources)


def _azure(name: str) -> list[str]:
    v = azure.vm(name)
    ib = f"{v.infiniband.links} x {v.infiniband.gbps} Gb/s" if v.infiniband else "none"
    lines = [
        f"Azure VM size {name} (AKS)",
        f"  GPU: {v.gpus} x {v.gpu}; {v.vcpus} vCPUs, {v.memory_gib} GiB, {v.arch}; InfiniBand: {ib}",
        "  price (USD/h, undated snapshot): " + (
            "none found (gpufleet/base/catalog/azure_vms.yaml says why): the plan lists the pool as unpriced"
            if not v.prices else "; ".join(f"{region} on-demand {_money(od)}, spot {_money(spot)}"
                                           for region, od, spot in v.prices)),
        f"  offered in: {', '.join(v.regions) if v.regions else 'not recorded'}",
    ]
    keys = [*v.sources, *([azure.PRICE_SOURCE] if v.prices else [])]
    return lines + ["sources:"] + _sources(azure.FILE, keys)


def _amd_gpu(name: str) -> list[str]:
    from gpufleet.base.catalog import amd

    g, f = catalog.gpu(name), amd.amd_facts()[name]
    lines = [
        f"GPU {name} (AMD Instinct, k3s pools only)",
        f"  architecture: {g.architecture}; memory: {g.memory_gb} GB; minimum AMD GPU Driver: {f.min_driver}"
        + (f"; {f.devices_per_gpu} devices per GPU" if f.devices_per_gpu > 1 else ""),
    ]
    if f.partitions:
        for compute, n in f.partitions.compute.items():
            memory = ", ".join(m + (f" (driver >= {d})" if d else "") for m, d in f.partitions.memory.get(compute, {}).items())
            lines.append(f"  partition {compute}: {n} per GPU; memory {memory}")
    else:
        lines.append("  partitions: none (advertised whole)")
    return lines + ["sources:"] + _sources(amd.FILE, g.sources)


def _gpu(name: str) -> list[str]:
    g = catalog.gpu(name)
    if g.amd:
        return _amd_gpu(name)
    lines = [
        f"GPU {name}",
        f"  architecture: {g.architecture}; memory: {g.memory_gb} GB; minimum driver branch: {g.min_driver_branch or 'not recorded'}",
    ]
    if g.mig:
        profiles = ", ".join(f"{p} x{n}" for p, n in g.mig.profiles.items())
        lines.append(f"  MIG: up to {g.mig.max_instances} instances; profiles: {profiles}")
    else:
        lines.append("  MIG: not supported")
    ec2 = [n for n, t in aws.instance_types().items() if t.gpu == name]
    gce = [n for n, m in gcp.machines().items() if m.gpu == name]
    vms = [n for n, v in azure.vms().items() if v.gpu == name]
    lines.append(f"  EC2 types: {', '.join(ec2) or 'none'}; GCP machine types: {', '.join(gce) or 'none'}; "
                 f"Azure VM sizes: {', '.join(vms) or 'none'}")
    return lines + ["sources:"] + _sources("gpus.yaml", g.sources)


def _money(value: Optional[float]) -> str:
    return "not sold / unpriced" if value is None else f"{value:.4g}"


def _overview() -> list[str]:
    lines = ["gpufleet catalog (gpufleet/base/catalog/)"]
    lines += [f"  {f}: facts as of {d}" for f, d in catalog.catalog_dates().items()]
    lines.append(f"  GPUs: {', '.join(catalog.gpu_models())}")
    lines.append(f"  EC2 instance types: {', '.join(aws.instance_types())}")
    lines.append(f"  GCP machine types: {', '.join(gcp.machines())}")
    lines.append(f"  Azure VM sizes: {', '.join(azure.vms())}")
    lines.append(f"  recorded offerings: {len(offerings.aws_regions())} AWS regions, {len(offerings.gcp_zones())} GCP zones")
    lines.append("show one: gpufleet catalog show p5.48xlarge | a3-highgpu-8g | H100-80GB")
    return lines


def show(name: Optional[str] = None) -> str:
    """Text for `gpufleet catalog show [name]`; KeyError (with what is known) when the name is unknown."""
    if not name:
        return "\n".join(_overview()) + "\n"
    if name in aws.instance_types():
        return "\n".join(_aws(name)) + "\n"
    if name in gcp.machines():
        return "\n".join(_gcp(name)) + "\n"
    if name in azure.vms():
        return "\n".join(_azure(name)) + "\n"
    if name in catalog.gpu_models():
        return "\n".join(_gpu(name)) + "\n"
    known = sorted(aws.instance_types()) + sorted(gcp.machines()) + sorted(azure.vms()) + sorted(catalog.gpu_models())
    raise KeyError(f"'{name}' is not an EC2 instance type, GCP machine type, Azure VM size or GPU model in the catalog "
                   f"(known: {', '.join(known)})")
