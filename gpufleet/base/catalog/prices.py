"""Hourly node prices of EC2 instance types and Compute Engine GPU machines, each with its source, the date it was
read and where it came from.

Prices recorded by `gpufleet catalog refresh` (aws_api.yaml, gcp_api.yaml: the Price List GetProducts, EC2
DescribeSpotPriceHistory and Cloud Billing Catalog APIs, per region, each row with the date it was read) come
first. The hand-entered figures (aws_instances.yaml for us-east-1, gcp_machines.yaml for us-central1, typed from
the clouds' pricing pages) fill in only where no refresh recorded the price, and say so (origin "hand-entered").
Compute Engine's accelerator-optimized machines (A2, A3, A4, G2, G4) are priced as whole VMs in gcp_machines.yaml:
the refresh records per-GPU SKU prices only, so for them only the attachable-GPU part of an N1 machine comes from
the API (`gcp_machine_price`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog import _load
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.base.catalog import azure as azure_catalog
from gpufleet.base.catalog import gcp as gcp_catalog

API = "api"
HAND = "hand-entered"
API_AND_HAND = "api+hand-entered"
SNAPSHOT = "snapshot"
"""Read from a third party's copy of a cloud's price API that carries no date (the Azure prices: azure_vms.yaml)."""
# The region each hand-entered price file was typed for (its `sources:` say so).
HAND_REGION = {"aws": "us-east-1", "gcp": "us-central1"}
AWS_FILE, GCP_FILE, AZURE_FILE = "aws_api.yaml", "gcp_api.yaml", "azure_api.yaml"
COMPUTE_SERVICE = "services/6F81-5844-456A"  # Compute Engine's service id in the Cloud Billing Catalog

STALE_AFTER_DAYS = 90
"""A price read longer ago than this is flagged in the plan's cost section. One quarter: EC2 on-demand prices change
a few times a year (the June 2025 P4/P5 cut, aws.amazon.com/about-aws/whats-new/2025/06/), spot prices move daily
and are medians anyway, and gpufleet/base/spec/checks/catalog_checks.py warns about the whole catalog after the same 90."""


@dataclass(frozen=True)
class PriceFact:
    """USD per node-hour, what it was read from (`source`), when (`as_of`, ISO date), whether a cloud API or a person
    typed it (`origin`: api | hand-entered | api+hand-entered | snapshot), and the region it holds for."""

    value: float
    source: str
    as_of: str
    origin: str
    region: str

    def age_days(self, today: dt.date) -> int:
        return (today - dt.date.fromisoformat(self.as_of)).days


def _aws_rows(region: str) -> dict:
    return ((_load(AWS_FILE).get("regions") or {}).get(region) or {}).get("instance_types") or {}


def _gcp_region(region: str) -> dict:
    return (_load(GCP_FILE).get("regions") or {}).get(region) or {}


def azure_vm_price(name: str, capacity: str, region: Optional[str]) -> Optional[PriceFact]:
    """The price of one `name` VM at `capacity` (spot | anything else: pay-as-you-go) in `region`: read by
    `gpufleet catalog refresh --azure` (azure_api.yaml, dated), else azure_vms.yaml's undated snapshot, else None."""
    row = (((_load(AZURE_FILE).get("regions") or {}).get(region or "") or {}).get("vms") or {}).get(name) or {}
    key = "spot" if capacity == "spot" else "on_demand"
    as_of = str(row.get("as_of") or "")
    if row.get(key) is not None and as_of:
        meter = "Spot" if key == "spot" else "pay-as-you-go"
        return PriceFact(float(row[key]), f"{name} {meter}, {region}, Linux: Azure Retail Prices API (read {as_of})",
                         as_of, API, region or "")
    vm = azure_catalog.vms().get(name)
    value = vm.price(capacity, region) if vm is not None else None
    if value is None:
        return None
    source = f"{name} {capacity}, {region}: {azure_catalog.source_text([azure_catalog.PRICE_SOURCE])}"
    return PriceFact(value, source, "", SNAPSHOT, region or "")


def aws_refreshed_regions() -> list[str]:
    return sorted(_load(AWS_FILE).get("regions") or {})


def aws_instance_price(name: str, capacity: str, region: Optional[str]) -> Optional[PriceFact]:
    """The price of one `name` node at `capacity` (on-demand | spot) in `region`: refreshed, else hand-entered (us-east-1
    only), else None."""
    region = region or HAND_REGION["aws"]
    row = _aws_rows(region).get(name) or {}
    as_of = str(row.get("as_of") or "")
    if capacity == "spot":
        spot = row.get("spot") or {}
        if spot.get("median") is not None and as_of:
            return PriceFact(float(spot["median"]), f"EC2 DescribeSpotPriceHistory, {region}, Linux/UNIX: median of "
                             f"{spot.get('samples')} prices over {spot.get('window')} (read {as_of})", as_of, API, region)
    elif row.get("on_demand") is not None and as_of:
        return PriceFact(float(row["on_demand"]), f"AWS Price List GetProducts (AmazonEC2), {region}, on-demand Linux, "
                         f"shared tenancy (read {as_of})", as_of, API, region)
    if region != HAND_REGION["aws"]:
        return None
    t = aws_catalog.instance_types().get(name)
    value = t.price(capacity) if t else None
    if value is None:
        return None
    data = _load("aws_instances.yaml")
    key = _hand_price_source(t.sources, capacity)
    # A source read on another day than the file's prices_as_of names its date in `price_source_dates`.
    date = str((data.get("price_source_dates") or {}).get(key) or data.get("prices_as_of", "unknown"))
    # Sources keep the catalog's 0.1 path: plans stay byte-identical across the 0.2 layout move (tests/plan_identity.py).
    return PriceFact(value, f"gpufleet/catalog/aws_instances.yaml: {data['sources'].get(key, key)} (as of {date})", date, HAND, region)


def aws_capacity_block_price(name: str, region: Optional[str]) -> Optional[PriceFact]:
    """The effective hourly rate of one `name` instance in an EC2 Capacity Block for ML in `region`, as the Capacity
    Blocks pricing page publishes it (aws_instances.yaml `capacity_block_prices`, dated), else None."""
    data = _load("aws_instances.yaml").get("capacity_block_prices") or {}
    row = (data.get("rows") or {}).get(name)
    if not row or (region or HAND_REGION["aws"]) != row["region"]:
        return None
    source = (f"gpufleet/catalog/aws_instances.yaml capacity_block_prices: EC2 Capacity Blocks effective hourly rate of "
              f"one {name} ({row['per_accelerator']} USD per accelerator-hour) in {row['zone']}: {data['source']} "
              f"(as of {row['as_of']})")
    return PriceFact(float(row["hourly"]), source, str(row["as_of"]), HAND, row["region"])


def _hand_price_source(sources: tuple[str, ...], capacity: str) -> str:
    """The key of the source a hand-entered EC2 row's price was typed from: spot_estimate for spot; for on-demand
    the row's own *_pricing source (ec2_pricing, or karpenter_pricing for the rows filled from Karpenter's
    generated Price List table), ec2_pricing when the row names none."""
    if capacity == "spot":
        return "spot_estimate"
    return next((k for k in sources if k.endswith("_pricing")), "ec2_pricing")


def gcp_gpu_price(accelerator: str, capacity: str, region: str) -> Optional[PriceFact]:
    """Refreshed Cloud Billing price of one GPU of `accelerator` (on-demand | spot) in `region`, else None."""
    data = _gcp_region(region)
    value = ((data.get("gpu_prices") or {}).get(accelerator) or {}).get(capacity)
    if value is None:
        return None
    prov = data.get("provenance") or {}
    date = str(prov.get("date"))
    return PriceFact(float(value), f"Cloud Billing Catalog SKU ({COMPUTE_SERVICE}), {accelerator} {capacity}, "
                     f"{region}, per GPU (read {date} with project {prov.get('project')})", date, API, region)


def gcp_machine_price(machine: str, capacity: str, count: int, region: Optional[str]) -> Optional[PriceFact]:
    """One node of `machine` with `count` GPUs at `capacity` in `region`. The VM part is hand-entered (us-central1
    only); an N1 machine's attached GPUs take the refreshed per-GPU price when one is recorded for the region."""
    region = region or HAND_REGION["gcp"]
    m = gcp_catalog.machines().get(machine)
    if m is None or region != HAND_REGION["gcp"]:
        return None
    vm = m.spot if capacity == "spot" else m.on_demand
    if vm is None:
        return None
    data = _load(gcp_catalog.FILE)
    key = "spot_pricing" if capacity == "spot" else "gce_pricing"
    date = str(data.get("price_date", "unknown"))
    hand = f"gpufleet/catalog/{gcp_catalog.FILE}: {data.get('sources', {}).get(key, key)} (as of {date})"
    attached = m.gpu_spot if capacity == "spot" else m.gpu_on_demand
    api = gcp_gpu_price(m.accelerator, capacity, region) if attached else None
    if api is None:
        return PriceFact(m.price(capacity, count), hand, date, HAND, region)
    return PriceFact(round(vm + api.value * count, 4), f"VM: {hand}; {count} x GPU: {api.source}", min(date, api.as_of),
                     API_AND_HAND, region)
