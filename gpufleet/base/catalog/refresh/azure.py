"""Azure GPU VM prices from the Azure Retail Prices API, per region.

The API (learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices) is public and needs no
credentials: GET https://prices.azure.com/api/retail/prices?$filter=... returns `Items` (one price meter each) and a
`NextPageLink` to the next page (null on the last). A Linux VM's hourly prices are the items with
serviceName 'Virtual Machines', type 'Consumption', unitOfMeasure '1 Hour' and USD, whose productName does not end in
'Windows'; the Spot meter's skuName ends in ' Spot', the retired Low Priority meter's in ' Low Priority' (ignored).
Where a meter has several rows (a price change), the one with the latest effectiveStartDate holds.

No SDK: the standard library's HTTPS client, with a deadline and a size cap per page, following NextPageLink only to
the same host over https.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any, Callable, Optional

from gpufleet.base.catalog.refresh.retry import with_retry

ENDPOINT = "https://prices.azure.com/api/retail/prices"
API = "Azure Retail Prices API (prices.azure.com/api/retail/prices)"
PAGE_LIMIT = 8 * 1024 * 1024  # bytes per page: a filtered VM query returns a few kilobytes
MAX_PAGES = 20  # one size in one region has a handful of meters; more pages means the filter did not hold
TIMEOUT_S = 30

Fetch = Callable[[str], dict]


def query_url(region: str, size: str) -> str:
    """The first page's URL for `size`'s pay-as-you-go and Spot meters in `region` (filter values are case-sensitive
    since API version 2023-01-01-preview, so they are spelt as the API does)."""
    flt = (f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and armSkuName eq '{size}' "
           "and priceType eq 'Consumption'")
    return f"{ENDPOINT}?{urllib.parse.urlencode({'$filter': flt}, quote_via=urllib.parse.quote)}"


def fetch(url: str) -> dict:
    """One page of the API over https (never another scheme or host), at most PAGE_LIMIT bytes."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "https" or parts.netloc != urllib.parse.urlsplit(ENDPOINT).netloc:
        raise ValueError(f"refusing to follow {parts.scheme}://{parts.netloc}: only {ENDPOINT} is read")
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:  # noqa: S310 - https, checked above
        body = response.read(PAGE_LIMIT + 1)
    if len(body) > PAGE_LIMIT:
        raise ValueError(f"a page of more than {PAGE_LIMIT} bytes from {ENDPOINT}")
    return json.loads(body)


def _items(first: str, get: Fetch, sleep) -> list[dict]:
    items, url, pages = [], first, 0
    while url:
        pages += 1
        if pages > MAX_PAGES:
            raise ValueError(f"more than {MAX_PAGES} pages for {first}")
        page = with_retry(lambda u=url: get(u), sleep=sleep)
        items += page.get("Items") or []
        url = page.get("NextPageLink") or ""
        if url and not url.startswith(ENDPOINT):
            raise ValueError(f"NextPageLink leaves {ENDPOINT}: {url[:80]}")
    return items


def _linux_hourly(item: dict) -> bool:
    return (item.get("type") == "Consumption" and item.get("unitOfMeasure") == "1 Hour"
            and item.get("currencyCode", "USD") == "USD" and item.get("serviceName") == "Virtual Machines"
            and not str(item.get("productName", "")).endswith("Windows")
            and not str(item.get("skuName", "")).endswith(" Low Priority"))


def prices(items: list[dict], size: str, region: str) -> dict[str, Optional[float]]:
    """{on_demand, spot} of `size` in `region` from its meters (None where the API has no such meter)."""
    latest: dict[str, tuple[str, float]] = {}
    for item in items:
        if item.get("armSkuName") != size or item.get("armRegionName") != region or not _linux_hourly(item):
            continue
        kind = "spot" if str(item.get("skuName", "")).endswith(" Spot") else "on_demand"
        start = str(item.get("effectiveStartDate") or "")
        if kind not in latest or start > latest[kind][0]:
            latest[kind] = (start, float(item["retailPrice"]))
    return {kind: (latest[kind][1] if kind in latest else None) for kind in ("on_demand", "spot")}


def collect(region: str, sizes: list[str], get: Optional[Fetch] = None, sleep=None) -> dict[str, Any]:
    """{"vms": {size: {on_demand, spot}}, "unconfirmed": [...]} for `sizes` in `region`."""
    import time

    get, sleep = get or fetch, sleep or time.sleep
    vms, unconfirmed = {}, []
    for size in sizes:
        row = prices(_items(query_url(region, size), get, sleep), size, region)
        if row["on_demand"] is None and row["spot"] is None:
            unconfirmed.append(f"{size}: no Linux pay-as-you-go or Spot meter in {region}")
            continue
        if row["spot"] is None:
            unconfirmed.append(f"{size}: no Spot meter in {region}")
        vms[size] = row
    return {"vms": vms, "unconfirmed": unconfirmed}
