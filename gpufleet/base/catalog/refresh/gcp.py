"""GCP facts from the Compute Engine and Cloud Billing Catalog APIs, per project and region.

- Compute machineTypes.aggregatedList: which GPU machine types each zone offers, with their accelerators.
- Compute acceleratorTypes.aggregatedList: which accelerator types each zone offers (maximum per VM).
- Cloud Billing Catalog services/6F81-5844-456A/skus (Compute Engine): GPU on-demand and spot (Preemptible)
  hourly prices per region, and which consumption options have a SKU (on-demand, spot, flex-start).
The API is reached through `api` callables that return one page (a dict in the REST JSON shape) for a page
token; `clients()` builds them on google-cloud-compute and google-cloud-billing (`pip install gpufleet[catalog]`)
over their REST transport, each page converted back to the REST JSON shape (camelCase, as the APIs document it).
tests/unit/test_catalog_refresh_gcp_clients.py drives the real clients through a recorded HTTP session. Pages
are followed with nextPageToken and each call is retried on throttling (HTTP 429 -> TooManyRequests).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from gpufleet.base.catalog.prices import COMPUTE_SERVICE
from gpufleet.base.catalog.refresh.retry import with_retry

GPU_FAMILIES = ("a2", "a3", "a4", "a4x", "g2", "g4")  # accelerator-optimized; N1 takes attachable GPUs
# Billing SKU description fragment -> Compute Engine accelerator type (first match wins, most specific first).
SKU_ACCELERATORS = (
    ("H100 80GB Mega", "nvidia-h100-mega-80gb"), ("H100 80GB", "nvidia-h100-80gb"), ("H200 141GB", "nvidia-h200-141gb"),
    ("A100 80GB", "nvidia-a100-80gb"), ("A100", "nvidia-tesla-a100"), ("B200", "nvidia-b200"), ("L4", "nvidia-l4"),
    ("T4", "nvidia-tesla-t4"),
)
USAGE = {"OnDemand": "on-demand", "Preemptible": "spot"}


def google_clients(credentials: Any = None) -> tuple[Any, Any, Any]:
    """The Compute Engine MachineTypes and AcceleratorTypes clients and the Cloud Billing Catalog client, on the
    REST transport (application default credentials unless `credentials` is given)."""
    from google.cloud import billing_v1, compute_v1  # optional dependency: only refresh reaches this

    return (compute_v1.MachineTypesClient(credentials=credentials, transport="rest"),
            compute_v1.AcceleratorTypesClient(credentials=credentials, transport="rest"),
            billing_v1.CloudCatalogClient(credentials=credentials, transport="rest"))


def page_callables(project: str, machines: Any, accelerators: Any, catalog: Any) -> dict[str, Callable]:
    """One page per call (for a page token) of each list, as the REST JSON dict `collect` reads."""
    from google.protobuf import json_format

    def first_page(pager) -> dict:
        page = next(iter(pager.pages))
        # The proto -> REST JSON mapping (camelCase, no default-valued fields): an aggregated-list scope that
        # holds only a warning stays without machineTypes, so collect() does not record it as "offers none".
        return json_format.MessageToDict(type(page).pb(page))

    return {
        "machine_types": lambda token: first_page(machines.aggregated_list(request={"project": project, "page_token": token or ""})),
        "accelerator_types": lambda token: first_page(accelerators.aggregated_list(request={"project": project, "page_token": token or ""})),
        "skus": lambda token: first_page(catalog.list_skus(request={"parent": COMPUTE_SERVICE, "page_token": token or ""})),
    }


def clients(project: str) -> dict[str, Callable]:
    """Page callables on the real Google clients (needs the `catalog` extra and application credentials)."""
    return page_callables(project, *google_clients())


def _pages(call: Callable[[Optional[str]], dict], sleep) -> list[dict]:
    pages, token = [], None
    while True:
        page = with_retry(lambda: call(token), sleep=sleep)
        pages.append(page)
        token = page.get("nextPageToken") or page.get("next_page_token")
        if not token:
            return pages


def _zone(key: str) -> str:
    return key.split("/", 1)[1] if "/" in key else key


def _price(sku: dict) -> Optional[float]:
    for info in sku.get("pricingInfo", []):
        rates = info.get("pricingExpression", {}).get("tieredRates", [])
        if rates:
            unit = rates[-1].get("unitPrice", {})
            return round(int(unit.get("units", 0) or 0) + int(unit.get("nanos", 0) or 0) / 1e9, 6)
    return None


def _accelerator_of(description: str) -> Optional[str]:
    for fragment, accelerator in SKU_ACCELERATORS:
        if fragment in description:
            return accelerator
    return None


def collect(project: str, regions: list[str], api: dict[str, Callable], sleep=None) -> dict:
    """{"regions": {region: {"zones": ..., "gpu_prices": ..., "sale_options": ...}}, "unconfirmed": [...]}."""
    import time

    sleep = sleep or time.sleep
    out: dict[str, dict] = {r: {"zones": {}, "gpu_prices": {}, "sale_options": {}} for r in regions}
    unconfirmed: list[str] = []
    for page in _pages(api["machine_types"], sleep):
        for key, scoped in (page.get("items") or {}).items():
            zone = _zone(key)
            region = zone.rsplit("-", 1)[0]
            # A scope with only a warning (NO_RESULTS_ON_PAGE) says nothing about the zone: not recorded.
            if region not in out or "machineTypes" not in scoped:
                continue
            row = out[region]["zones"].setdefault(zone, {"machine_types": [], "accelerators": {}})
            for m in scoped.get("machineTypes", []):
                family = m["name"].split("-", 1)[0]
                if family in GPU_FAMILIES:
                    row["machine_types"].append(m["name"])
    for page in _pages(api["accelerator_types"], sleep):
        for key, scoped in (page.get("items") or {}).items():
            zone = _zone(key)
            region = zone.rsplit("-", 1)[0]
            if region not in out or "acceleratorTypes" not in scoped:
                continue
            row = out[region]["zones"].setdefault(zone, {"machine_types": [], "accelerators": {}})
            for a in scoped.get("acceleratorTypes", []):
                row["accelerators"][a["name"]] = int(a.get("maximumCardsPerInstance", 0))
    for page in _pages(api["skus"], sleep):
        for sku in page.get("skus", []):
            category = sku.get("category", {})
            if category.get("resourceGroup") != "GPU":
                continue
            accelerator = _accelerator_of(sku.get("description", ""))
            description = sku.get("description", "")
            option = "flex-start" if ("DWS" in description or "Flex" in description) else USAGE.get(category.get("usageType"))
            if accelerator is None or option is None:
                continue
            for region in sku.get("serviceRegions", []):
                if region not in out:
                    continue
                out[region]["sale_options"].setdefault(accelerator, set()).add(option)
                price = _price(sku)
                if option in ("on-demand", "spot"):
                    if price is None:
                        unconfirmed.append(f"{accelerator}: SKU {sku.get('skuId')} ({option}, {region}) has no price")
                    else:
                        out[region]["gpu_prices"].setdefault(accelerator, {})[option] = price
    for region, data in out.items():
        for zone in data["zones"].values():
            zone["machine_types"] = sorted(set(zone["machine_types"]))
            zone["accelerators"] = dict(sorted(zone["accelerators"].items()))
        data["zones"] = dict(sorted(data["zones"].items()))
        data["sale_options"] = {a: sorted(v) for a, v in sorted(data["sale_options"].items())}
        data["gpu_prices"] = dict(sorted(data["gpu_prices"].items()))
        offered = {a for z in data["zones"].values() for a in z["accelerators"]}
        for accelerator in sorted(offered):
            if "on-demand" not in data["gpu_prices"].get(accelerator, {}) and "spot" not in data["gpu_prices"].get(accelerator, {}):
                unconfirmed.append(f"{accelerator}: offered in {region} but no GPU price SKU found")
        if not data["zones"]:
            unconfirmed.append(f"{region}: no zone of project {project} listed GPU machine or accelerator types")
    return {"regions": out, "unconfirmed": unconfirmed}
