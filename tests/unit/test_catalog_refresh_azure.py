"""`gpufleet catalog refresh --azure`: GPU VM prices from the Azure Retail Prices API (issue 53).

The pages below are built in the API's documented response shape (learn.microsoft.com/rest/api/cost-management/
retail-prices/azure-retail-prices: `Items`, `NextPageLink`, each item's armSkuName, armRegionName, skuName,
productName, type, unitOfMeasure, retailPrice, effectiveStartDate): this machine cannot reach prices.azure.com, so they
are not recordings of a real answer, and their prices are made up. What is tested is the reading: paging, which meters
count, and that the plan then prices AKS pools with the dated figures before the undated snapshot."""

from __future__ import annotations

import datetime as dt
import urllib.parse

import pytest
import yaml

from gpufleet.app import cli
from gpufleet.base.catalog import _files, prices
from gpufleet.base.catalog import refresh
from gpufleet.base.catalog.refresh import azure as azure_refresh

H100 = "Standard_ND96isr_H100_v5"
NOW = dt.datetime(2026, 12, 5, tzinfo=dt.timezone.utc)


def item(size: str, region: str, sku: str, price: float, *, product: str = "Virtual Machines NDsrH100v5 Series",
         type_: str = "Consumption", start: str = "2026-01-01T00:00:00Z") -> dict:
    return {"currencyCode": "USD", "retailPrice": price, "unitPrice": price, "armRegionName": region,
            "effectiveStartDate": start, "skuName": sku, "productName": product, "serviceName": "Virtual Machines",
            "unitOfMeasure": "1 Hour", "type": type_, "armSkuName": size}


def api(pages_by_size: dict[str, list[list[dict]]]):
    """A fake API: the filter's armSkuName picks the pages; page N links to page N+1 on the same endpoint."""
    calls = []

    def get(url: str) -> dict:
        calls.append(url)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
        size = query.get("$filter", "").split("armSkuName eq '")[1].split("'")[0] if "$filter" in query else query["size"]
        page = int(query.get("page", 0))
        pages = pages_by_size.get(size, [[]])
        nxt = f"{azure_refresh.ENDPOINT}?size={size}&page={page + 1}" if page + 1 < len(pages) else None
        return {"Items": pages[page], "NextPageLink": nxt}
    return get, calls


def test_meters_pay_as_you_go_and_spot_across_pages_ignoring_windows_low_priority_and_reservations():
    pages = [[item(H100, "eastus", "ND96isr H100 v5", 98.0, start="2025-01-01T00:00:00Z"),
              item(H100, "eastus", "ND96isr H100 v5", 99.5, product="Virtual Machines NDsrH100v5 Series Windows")],
             [item(H100, "eastus", "ND96isr H100 v5", 97.0, start="2026-06-01T00:00:00Z"),  # the later price holds
              item(H100, "eastus", "ND96isr H100 v5 Low Priority", 20.0),
              item(H100, "eastus", "ND96isr H100 v5 Spot", 30.5),
              item(H100, "eastus", "ND96isr H100 v5", 60.0, type_="Reservation")]]
    get, calls = api({H100: pages})
    got = azure_refresh.collect("eastus", [H100], get, sleep=lambda _: None)
    assert got["vms"] == {H100: {"on_demand": 97.0, "spot": 30.5}}
    assert len(calls) == 2 and "armRegionName eq 'eastus'" in urllib.parse.unquote(calls[0])
    # A size without meters is reported, not recorded as free.
    got = azure_refresh.collect("eastus", ["Standard_ND96isr_H200_v5"], get, sleep=lambda _: None)
    assert got == {"vms": {}, "unconfirmed": ["Standard_ND96isr_H200_v5: no Linux pay-as-you-go or Spot meter in eastus"]}


def test_a_next_page_off_the_endpoint_is_refused_and_nothing_is_written(tmp_path):
    def get(url: str) -> dict:
        return {"Items": [], "NextPageLink": "http://prices.example.com/api/retail/prices?page=1"}
    result = refresh.build([], [], azure_regions=["eastus"], azure_api=get, now=NOW, sleep=lambda _: None, base=tmp_path)
    assert result.errors and result.errors[0].startswith("azure eastus: ValueError: NextPageLink leaves https://prices.azure.com")
    with pytest.raises(ValueError, match="refusing to follow http://prices.example.com"):
        azure_refresh.fetch("http://prices.example.com/api/retail/prices")


def test_refresh_writes_dated_prices_and_the_plan_prefers_them_to_the_snapshot(tmp_path, monkeypatch):
    get, _ = api({H100: [[item(H100, "westus3", "ND96isr H100 v5", 91.25), item(H100, "westus3", "ND96isr H100 v5 Spot", 27.5)]]})
    result = refresh.build([], [], azure_regions=["westus3"], azure_api=get, now=NOW, sleep=lambda _: None, base=tmp_path)
    assert not result.errors and result.read == {"azure": ["westus3"]}
    assert "azure westus3 Standard_ND96isr_H100_v5 pay-as-you-go: new price 91.25" in result.summary
    refresh.write(result, tmp_path)
    written = yaml.safe_load((tmp_path / "azure_api.yaml").read_text())
    assert written["regions"]["westus3"]["vms"][H100] == {"on_demand": 91.25, "spot": 27.5, "as_of": "2026-12-05"}
    # The plan reads the refreshed file: dated API prices first, the snapshot where the refresh read nothing.
    real = _files._load
    monkeypatch.setattr(_files, "_load", lambda name: written if name == "azure_api.yaml" else real(name))
    monkeypatch.setattr(prices, "_load", lambda name: written if name == "azure_api.yaml" else real(name))
    fact = prices.azure_vm_price(H100, "spot", "westus3")
    assert (fact.value, fact.as_of, fact.origin) == (27.5, "2026-12-05", "api")
    assert fact.source == f"{H100} Spot, westus3, Linux: Azure Retail Prices API (read 2026-12-05)"
    snap = prices.azure_vm_price("Standard_NC24ads_A100_v4", "on-demand", "eastus")
    assert (snap.value, snap.as_of, snap.origin) == (3.673, "", "snapshot")


def test_cli_refuses_a_malformed_region_before_any_call(capsys):
    assert cli.main(["catalog", "refresh", "--azure", "east us\x1b[31m"]) == 2
    err = capsys.readouterr().err
    assert "is not an Azure region name" in err and "\x1b" not in err
