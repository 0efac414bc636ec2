"""Non-GPU hourly charges (gpufleet/base/catalog/charges.yaml): control-plane fees, NAT, public IPv4, KMS, block and
file storage, per region, each with its sources and the date they were read.

A lookup returns a `Rate` (USD per unit, and where the figure comes from) or `Missing` (why there is none): the
plan lists a missing rate as unpriced, never as zero.
"""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass
from typing import Optional, Union

from gpufleet.base.catalog import _load
from gpufleet.base.catalog import kubernetes as k8s_catalog

FILE = "charges.yaml"


@dataclass(frozen=True)
class Rate:
    value: float
    source: str
    as_of: Optional[str] = None
    """ISO date the figure was read (None: not a catalog figure, e.g. a price the stack declares)."""
    origin: Optional[str] = None
    """api (read by `gpufleet catalog refresh`), hand-entered (typed from a pricing page), api+hand-entered, stack."""


@dataclass(frozen=True)
class Missing:
    reason: str


Price = Union[Rate, Missing]


@dataclass(frozen=True)
class Charge:
    """One hourly charge a platform's pricing traits state from the stack (a k3s host's pricePerHour, a declared
    overhead): the plan's cost section lists it as one item of `kind` (gpufleet/app/plan/cost.py KINDS), `key`
    naming it across changes of its price."""

    name: str
    kind: str
    price: Price
    key: str


@functools.cache
def _data() -> dict:
    return _load(FILE)


def _hand(value: float, source: str) -> Rate:
    """A charges.yaml figure: hand-entered from the cited pricing pages, read on the file's `as_of` date."""
    return Rate(value, source, as_of(), "hand-entered")


def as_of() -> str:
    return str(_data()["as_of"])


def hours_per_month() -> int:
    return int(_data()["hours_per_month"])


def source_text(keys) -> str:
    """The cited sources, joined, with the date they were read."""
    sources = _data()["sources"]
    return "; ".join(sources[k] for k in keys) + f" (read {as_of()})"


def _rate(row: Optional[dict], value_key: str = "price") -> Optional[Rate]:
    if not isinstance(row, dict) or row.get(value_key) is None:
        return None
    return _hand(float(row[value_key]), source_text(row["sources"]))


def _region(region: Optional[str]) -> Optional[dict]:
    return _data()["regions"].get(region or "")


def _missing_region(region: Optional[str], what: str) -> Missing:
    if not region:
        return Missing(f"no region known for {what}")
    if _region(region) is None:
        return Missing(f"the catalog has no prices for region {region} (known: {', '.join(_data()['regions'])})")
    return Missing(f"the catalog has no {what} price for {region}")


def eks_support(version: str, on: Optional[datetime.date] = None) -> tuple[str, Optional[str]]:
    """('standard' | 'extended' | 'unsupported' | 'unknown', end of standard support) of an EKS Kubernetes version on
    a date (default: the date this catalog was read, so a plan does not change overnight). The calendar and its rule
    are gpufleet/base/catalog/kubernetes.yaml's (one table: extended-support billing starts at the beginning of the
    end-of-standard-support day, UTC)."""
    try:
        facts = k8s_catalog.eks_kubernetes_version(str(version), on or datetime.date.fromisoformat(as_of()))
    except KeyError:
        return "unknown", None
    return facts.status, facts.end_of_standard_support


def eks_control_plane(version: str) -> Price:
    """Hourly fee of one EKS cluster at its Kubernetes version's support status."""
    status, end = eks_support(version)
    row = _data()["eks"]["control_plane"]
    if status == "unknown":
        return Missing(f"EKS {version}: not in gpufleet/catalog/kubernetes.yaml, so standard or extended rate unknown")
    if status == "unsupported":
        return Missing(f"EKS {version} is past the end of extended support: clusters on it are upgraded by AWS; no rate")
    keys = row["sources"] + ["eks_versions"]
    when = (f"until {end}, when extended-support billing starts" if end else "end date not recorded") if status == "standard" \
        else f"since {end}"
    return _hand(float(row[status]), f"EKS {version} in {status} support ({when}): " + source_text(keys))


def gke_support(version: str, on: Optional[datetime.date] = None) -> tuple[str, Optional[str]]:
    """('standard' | 'extended' | 'unsupported' | 'unknown', end of standard support) of a GKE minor on a date (default:
    the date this catalog was read, as eks_support). The calendar is kubernetes.yaml's gke.versions."""
    try:
        facts = k8s_catalog.gke_kubernetes_version(str(version), on or datetime.date.fromisoformat(as_of()))
    except KeyError:
        return "unknown", None
    return facts.status, facts.end_of_standard_support


def gke_cluster_fee(version: Optional[str] = None, channel: Optional[str] = None) -> Price:
    """Hourly cluster management fee of one GKE cluster. With a version: on the Extended release channel a minor in
    its extended support period adds the extended-support fee (charges.yaml gke.extended_support); on the other
    channels GKE upgrades the cluster at the end of standard support, so the standard fee stays."""
    row = _data()["gke"]["cluster_management"]
    standard = _hand(float(row["hourly"]), source_text(row["sources"]))
    if version is None:
        return standard
    status, end = gke_support(version)
    if status == "unknown":
        return Missing(f"GKE {version}: not in gpufleet/catalog/kubernetes.yaml, so standard or extended fee unknown")
    if status == "unsupported":
        return Missing(f"GKE {version} is past the end of extended support: GKE upgrades clusters on it; no rate")
    if status != "extended":
        return standard
    since = f"since {end}" if end else "end of standard support not recorded"
    if channel != "EXTENDED":
        return _hand(standard.value, f"GKE {version} is past standard support ({since}) on the {channel or 'default'} "
                                     "channel: GKE upgrades the cluster rather than bill extended support; " + standard.source)
    extra = _data()["gke"]["extended_support"]
    # The extended fee was read after the file's as_of date: its row carries its own reading date.
    return Rate(standard.value + float(extra["additional_hourly"]),
                f"GKE {version} in extended support ({since}) on the Extended channel: {standard.value:.2f} + "
                f"{float(extra['additional_hourly']):.2f} extended-support fee; " + source_text(row["sources"] + extra["sources"]),
                str(extra.get("read") or as_of()), "hand-entered")


def aks_tier_fee(tier: str) -> Price:
    """Hourly cluster management fee of one AKS cluster in a pricing tier (Free, Standard, Premium)."""
    row = (_data().get("aks", {}).get("tiers") or {}).get(tier)
    if row is None:
        return Missing(f"AKS tier {tier}: not in gpufleet/base/catalog/charges.yaml aks.tiers")
    return _hand(float(row["hourly"]), source_text(row["sources"]))


def gke_extended_hourly() -> float:
    """USD per cluster-hour of a GKE cluster in extended support on the Extended channel (standard + additional)."""
    data = _data()["gke"]
    return float(data["cluster_management"]["hourly"]) + float(data["extended_support"]["additional_hourly"])


def gke_free_tier_credit() -> float:
    return float(_data()["gke"]["cluster_management"]["free_tier_monthly_credit"])


def monitoring_alert_condition_hourly() -> Rate:
    """One Cloud Monitoring alerting-policy condition, its monthly charge spread over the month's hours."""
    row = _data()["gke"]["monitoring_alert_condition"]
    return _hand(float(row["monthly"]) / hours_per_month(), source_text(row["sources"]))


def kms_key_hourly() -> Rate:
    row = _data()["kms"]["key_monthly"]
    return _hand(float(row["price"]) / hours_per_month(), source_text(row["sources"]))


def nat_gateway_hourly(region: Optional[str]) -> Price:
    return _rate((_region(region) or {}).get("nat_gateway_hourly")) or _missing_region(region, "NAT gateway")


def interface_endpoint_az_hourly(region: Optional[str]) -> Price:
    """One interface VPC endpoint in one Availability Zone, per hour (plus data processed: usage)."""
    return (_rate((_region(region) or {}).get("interface_endpoint_az_hourly"))
            or _missing_region(region, "interface VPC endpoint"))


def public_ipv4_hourly(region: Optional[str]) -> Price:
    return _rate((_region(region) or {}).get("public_ipv4_hourly")) or _missing_region(region, "public IPv4")


def amp_collector_hourly(region: Optional[str]) -> Price:
    """An Amazon Managed Service for Prometheus collector (scraper), per hour it runs (plus samples: usage)."""
    row = (_region(region) or {}).get("amp_collector_hourly")
    if isinstance(row, dict) and row.get("price") is None:
        return Missing(f"AWS managed collector price not read: {source_text(row['sources'])}")
    return _rate(row) or _missing_region(region, "AWS managed collector (Amazon Managed Service for Prometheus)")


def ebs_gb_hourly(region: Optional[str], volume_type: str) -> Price:
    rate = _rate(((_region(region) or {}).get("ebs_gb_month") or {}).get(volume_type))
    if rate is None:
        return _missing_region(region, f"EBS {volume_type}")
    return _hand(rate.value / hours_per_month(), rate.source)


def ebs_gp3_extra_hourly(region: Optional[str], iops: float, throughput: float) -> Price:
    """gp3 IOPS and throughput provisioned above the free baseline, per volume-hour (0 at the baseline)."""
    row = (_region(region) or {}).get("ebs_gp3_extra")
    if row is None:
        return _missing_region(region, "EBS gp3 IOPS/throughput")
    extra = max(0.0, iops - row["free_iops"]) * row["iops_month"] + max(0.0, throughput - row["free_throughput"]) * row["throughput_month"]
    return _hand(extra / hours_per_month(), source_text(row["sources"]))


def fsx_lustre_gb_hourly(region: Optional[str], deployment_type: str, throughput: Optional[int]) -> Price:
    table = (_region(region) or {}).get("fsx_lustre_gb_month")
    if table is None:
        return _missing_region(region, "FSx for Lustre")
    tiers = table.get(deployment_type)
    price = (tiers or {}).get(str(throughput)) if throughput is not None else None
    if price is None:
        tier = deployment_type if throughput is None else f"{deployment_type} at {throughput} MB/s/TiB"
        return Missing(f"the catalog has no FSx for Lustre price for {tier} in {region}")
    return _hand(float(price) / hours_per_month(), source_text(table["sources"]))


def fsx_lustre_min_gib() -> int:
    return int(_data()["fsx_lustre"]["min_gib"])


def cloud_nat(region: Optional[str]) -> Optional[dict]:
    row = (_region(region) or {}).get("cloud_nat")
    return dict(row, source=source_text(row["sources"])) if row else None


def cloud_nat_hourly(region: Optional[str], vms: int, ips: int) -> Price:
    """Public Cloud NAT gateway-hour for `vms` VMs (capped at 32) plus its external IP addresses."""
    row = cloud_nat(region)
    if row is None:
        return _missing_region(region, "Cloud NAT")
    gateway = row["cap_hourly"] if vms > row["cap_vms"] else row["per_vm_hourly"] * vms
    return _hand(gateway + row["ip_hourly"] * ips, row["source"])


def pd_gib_hourly(region: Optional[str], disk_type: str) -> Price:
    rate = _rate(((_region(region) or {}).get("pd_gib_month") or {}).get(disk_type))
    if rate is None:
        return _missing_region(region, f"{disk_type} disk")
    return _hand(rate.value / hours_per_month(), rate.source)


def filestore_tier(csi_tier: str) -> str:
    """The Filestore API tier of a GKE CSI StorageClass `tier` parameter (standard -> BASIC_HDD)."""
    return _data()["filestore"]["csi_tiers"].get(csi_tier, csi_tier.upper())


def filestore_min_gib(tier: str, gke_csi: bool = False) -> Optional[int]:
    data = _data()["filestore"]
    if gke_csi and tier in data["min_gib_gke_csi"]:
        return int(data["min_gib_gke_csi"][tier])
    found = data["min_gib"].get(tier)
    return None if found is None else int(found)


def filestore_gib_hourly(region: Optional[str], tier: str) -> Price:
    return _rate(((_region(region) or {}).get("filestore_gib_hour") or {}).get(tier)) or _missing_region(
        region, f"Filestore {tier}")


def gce_machine_hourly(region: Optional[str], machine_type: str) -> Price:
    return _rate(((_region(region) or {}).get("machines") or {}).get(machine_type)) or Missing(
        f"the catalog has no price for machine type {machine_type} in {region} (cloud.google.com/compute/vm-instance-pricing "
        "not read yet)")
