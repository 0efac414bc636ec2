"""AWS facts from the EC2 and Price List APIs (boto3), per region.

- EC2 DescribeInstanceTypes: GPU model, count and memory; network cards; maximum EFA interfaces.
- EC2 DescribeInstanceTypeOfferings: regions and AZ IDs (not names: those differ per account) offering each type.
- Price List GetProducts (us-east-1 endpoint): on-demand Linux, shared tenancy, per region.
- EC2 DescribeSpotPriceHistory: recent Linux/UNIX spot prices per AZ, summarised as median and range with the window.
Every call pages with NextToken and is retried on throttling. boto3 is imported only by `clients()`.
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
from typing import Any, Callable, Optional

from gpufleet.base.catalog.refresh.retry import with_retry

# DescribeInstanceTypes GpuInfo (name, nominal memory GB) -> catalog GPU model. The API reports usable memory
# (an L4 shows 22888 MiB), so a GPU matches the model of its name whose nominal memory is within 15 %.
GPU_MODELS = {("T4", 16): "T4", ("A10G", 24): "A10G", ("L4", 24): "L4", ("L40S", 48): "L40S", ("A100", 40): "A100-40GB",
              ("A100", 80): "A100-80GB", ("H100", 80): "H100-80GB", ("H200", 141): "H200", ("B200", 180): "B200"}
SPOT_WINDOW_DAYS = 7


def clients(region: str) -> dict[str, Any]:
    """Real boto3 clients (needs `pip install gpufleet[catalog]` and AWS credentials)."""
    import boto3  # optional dependency: only `gpufleet catalog refresh` reaches this
    from botocore.config import Config

    cfg = Config(retries={"max_attempts": 1})  # gpufleet retries throttling itself (retry.py)
    return {"ec2": boto3.client("ec2", region_name=region, config=cfg),
            "pricing": boto3.client("pricing", region_name="us-east-1", config=cfg)}


def _pages(call: Callable[..., dict], key: str, sleep, **params) -> list:
    items, token = [], None
    while True:
        kwargs = dict(params, **({"NextToken": token} if token else {}))
        page = with_retry(lambda: call(**kwargs), sleep=sleep)
        items += page.get(key, [])
        token = page.get("NextToken")
        if not token:
            return items


def _gpu_model(gpus: list[dict]) -> tuple[Optional[str], int, Optional[str]]:
    """(catalog model or None, count, what the API called it)."""
    if not gpus:
        return None, 0, None
    g = gpus[0]
    gib = g.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024
    close = [(abs(gb - gib), model) for (name, gb), model in GPU_MODELS.items() if name == g["Name"] and abs(gb - gib) <= 0.15 * gb]
    model = min(close)[1] if close else None
    return model, sum(x.get("Count", 0) for x in gpus), f"{g.get('Manufacturer', '')} {g['Name']} {round(gib)} GiB".strip()


def _on_demand_price(pricing, instance_type: str, region: str, sleep) -> Optional[float]:
    filters = [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in (
        ("instanceType", instance_type), ("regionCode", region), ("operatingSystem", "Linux"), ("tenancy", "Shared"),
        ("preInstalledSw", "NA"), ("capacitystatus", "Used"))]
    for raw in _pages(pricing.get_products, "PriceList", sleep, ServiceCode="AmazonEC2", Filters=filters):
        product = json.loads(raw) if isinstance(raw, str) else raw
        for term in product.get("terms", {}).get("OnDemand", {}).values():
            for dim in term.get("priceDimensions", {}).values():
                usd = float(dim.get("pricePerUnit", {}).get("USD", 0) or 0)
                if usd > 0:
                    return round(usd, 4)
    return None


def _spot_summary(ec2, instance_type: str, now: dt.datetime, sleep) -> Optional[dict]:
    start = now - dt.timedelta(days=SPOT_WINDOW_DAYS)
    rows = _pages(ec2.describe_spot_price_history, "SpotPriceHistory", sleep, InstanceTypes=[instance_type],
                  ProductDescriptions=["Linux/UNIX"], StartTime=start, EndTime=now)
    prices = [float(r["SpotPrice"]) for r in rows]
    if not prices:
        return None
    return {"median": round(statistics.median(prices), 4), "min": round(min(prices), 4), "max": round(max(prices), 4),
            "samples": len(prices), "window": f"{start.date().isoformat()}..{now.date().isoformat()}"}


def collect(region: str, instance_types: list[str], api: dict[str, Any], now: dt.datetime, sleep=None) -> dict:
    """Facts of `instance_types` in `region`: {"types": {...}, "offerings": {...}, "unconfirmed": [...]}."""
    import time

    sleep = sleep or time.sleep
    ec2, pricing = api["ec2"], api["pricing"]
    described = {t["InstanceType"]: t for t in _pages(ec2.describe_instance_types, "InstanceTypes", sleep, InstanceTypes=instance_types)}
    in_region = {o["InstanceType"] for o in _pages(ec2.describe_instance_type_offerings, "InstanceTypeOfferings", sleep,
                                                   LocationType="region", Filters=[{"Name": "instance-type", "Values": instance_types}])}
    zone_ids: dict[str, list[str]] = {}
    for o in _pages(ec2.describe_instance_type_offerings, "InstanceTypeOfferings", sleep, LocationType="availability-zone-id",
                    Filters=[{"Name": "instance-type", "Values": instance_types}]):
        zone_ids.setdefault(o["Location"], []).append(o["InstanceType"])
    types, unconfirmed = {}, []
    for name in instance_types:
        t = described.get(name)
        if t is None:
            unconfirmed.append(f"{name}: not described by DescribeInstanceTypes in {region}")
            continue
        model, count, api_name = _gpu_model(t.get("GpuInfo", {}).get("Gpus", []))
        if count and model is None:
            unconfirmed.append(f"{name}: GPU '{api_name}' has no catalog model")
        net = t.get("NetworkInfo", {})
        efa = net.get("EfaInfo", {}).get("MaximumEfaInterfaces", 0) if net.get("EfaSupported") else 0
        row = {"gpu": model, "gpus": count, "network_cards": net.get("MaximumNetworkCards", 1), "efa_interfaces": efa}
        if name in in_region:
            row["on_demand"] = _on_demand_price(pricing, name, region, sleep)
            if row["on_demand"] is None:
                unconfirmed.append(f"{name}: no on-demand Linux price in {region} (Price List GetProducts)")
            row["spot"] = _spot_summary(ec2, name, now, sleep)
            if row["spot"] is None:
                unconfirmed.append(f"{name}: no spot price history in {region} over {SPOT_WINDOW_DAYS} days")
        types[name] = row
    offered = sorted(in_region)
    return {
        "types": types,
        "offerings": {"instance_types": offered, "zone_ids": {z: sorted(v) for z, v in sorted(zone_ids.items())}},
        "unconfirmed": unconfirmed,
    }
