"""AKS GPU pools priced from the undated snapshot of the Azure Retail Prices API (issue 53): the catalog's `prices:`
equal the reference reading row for row (Spot dropped where the snapshot copies pay-as-you-go), the plan prices a pool
in the cluster's location and says "undated (snapshot)", and a location or size the snapshot lacks stays unpriced
with the reason."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import yaml

from gpufleet.app.plan.cost import price_read, stale_prices
from gpufleet.app.plan.engine import plan
from gpufleet.base.catalog import azure
from tests.helpers import example_config, stack_file

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "azure" / "prices.yaml"
TODAY = dt.date(2026, 12, 5)


def test_catalog_prices_equal_the_reference_reading_without_copied_spot():
    ref = yaml.safe_load(REFERENCE.read_text())["prices"]
    ours = {name: vm.prices for name, vm in azure.vms().items() if vm.prices}
    assert set(ours) == set(ref)
    for name, rows in ours.items():
        for region, on_demand, spot in rows:
            row = ref[name][region]
            assert on_demand == row["on_demand"], (name, region)
            copied = "spot_equals_on_demand" in (row.get("flags") or [])
            assert spot == (None if copied else row["spot"]), (name, region)
    # The two sizes no source prices, and H100 Spot (the snapshot copies pay-as-you-go), stay unpriced.
    assert azure.vm("Standard_ND96isr_H200_v5").prices == () and azure.vm("Standard_ND128isr_NDR_GB200_v6").prices == ()
    assert azure.vm("Standard_ND96isr_H100_v5").price("spot", "eastus") is None


def _gpu_items(location: str) -> dict:
    config = example_config("aks-train")
    config["gpufleet:cluster"]["aks"]["location"] = location
    result = plan(stack_file(config, "aks-train"), today=TODAY)
    return {i.key.split(":", 1)[1]: i for i in result.cost.items if i.kind == "gpu-nodes"}, result


def test_gpu_pools_priced_in_the_clusters_location_undated():
    items, result = _gpu_items("eastus")
    h100, a100 = items["h100ib"], items["a100spot"]
    assert (h100.unit_hourly, a100.unit_hourly) == (98.32, 0.444433)  # eastus pay-as-you-go; eastus Spot
    assert (h100.as_of, h100.origin) == ("", "snapshot")
    assert price_read(h100) == "undated (snapshot)"
    assert h100.source.startswith("on-demand price of one node: Standard_ND96isr_H100_v5 on-demand, eastus: "
                                  "skypilot-org/skypilot-catalog@098741e70562f65d7af1cceb81e33b284f742604")
    assert "no as-of date" in h100.source
    # An undated price is never reported stale by age (it has none); the dated management fee is recent.
    assert stale_prices(result.cost.items, TODAY) == []


def test_a_location_the_snapshot_lacks_is_unpriced_with_the_reason():
    items, _ = _gpu_items("westeurope")
    h100 = items["h100ib"]
    assert h100.unit_hourly is None
    assert h100.source.startswith("pool h100ib: no on-demand price for its VM size in the cluster's location")
    assert "nine US regions" in h100.source
