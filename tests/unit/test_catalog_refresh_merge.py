"""How `gpufleet catalog refresh` merges a run into the files already written (refresh/merge.py), what it reports,
how plans read the result (offerings.py: a type never asked about is unknown), and the cost section's stale-price
warning (gpufleet/app/plan/cost.py stale_prices, prices.STALE_AFTER_DAYS)."""

from __future__ import annotations

import datetime as dt

import yaml

from gpufleet.app.plan.cost import CostItem, stale_prices
from gpufleet.base.catalog import prices
from gpufleet.base.catalog.refresh import merge

OLD_OFFERINGS = {"schema_version": 1, "regions": {
    "us-east-1": {"source": "ec2.DescribeInstanceTypeOfferings", "as_of": "2026-11-01", "instance_types": ["g6.xlarge", "p5.48xlarge"],
                  "not_offered": ["p6-b200.48xlarge"], "zone_ids": {"use1-az4": ["g6.xlarge", "p5.48xlarge"]}},
    "eu-west-1": {"source": "ec2.DescribeInstanceTypeOfferings", "as_of": "2026-10-01", "instance_types": ["g6.xlarge"],
                  "not_offered": [], "zone_ids": {"euw1-az1": ["g6.xlarge"]}},
}}
OLD_API = {"schema_version": 1, "regions": {"us-east-1": {"provenance": {"date": "2026-11-01"}, "instance_types": {
    "g6.xlarge": {"on_demand": 0.8048, "spot": {"median": 0.35}, "as_of": "2026-11-01"},
    "p5.48xlarge": {"on_demand": 55.04, "spot": {"median": 30.0}, "as_of": "2026-11-01"}}}}}


def _write(directory, name, data):
    (directory / name).write_text(yaml.safe_dump(data))


def test_a_run_asking_about_one_type_keeps_the_others_and_other_regions(tmp_path):
    _write(tmp_path, "aws_offerings.yaml", OLD_OFFERINGS)
    _write(tmp_path, "aws_api.yaml", OLD_API)
    run = {  # us-east-1 read again for p5.48xlarge only: no longer offered there
        "aws_offerings.yaml": {"schema_version": 1, "regions": {"us-east-1": {
            "source": "ec2.DescribeInstanceTypeOfferings", "as_of": "2026-12-01", "instance_types": [],
            "not_offered": ["p5.48xlarge"], "zone_ids": {}}}},
        "aws_api.yaml": {"schema_version": 1, "regions": {"us-east-1": {"provenance": {"date": "2026-12-01"}, "instance_types": {
            "p5.48xlarge": {"on_demand": 57.0, "spot": None, "as_of": "2026-12-01"}}}}},
    }
    files, changes, kept = merge.merge(run, {"aws": ["us-east-1"]}, tmp_path)
    east = files["aws_offerings.yaml"]["regions"]["us-east-1"]
    assert east["instance_types"] == ["g6.xlarge"]  # g6 was not asked about: kept
    assert east["not_offered"] == ["p5.48xlarge", "p6-b200.48xlarge"]
    assert east["zone_ids"] == {"use1-az4": ["g6.xlarge"]}
    assert files["aws_offerings.yaml"]["regions"]["eu-west-1"] == OLD_OFFERINGS["regions"]["eu-west-1"]
    rows = files["aws_api.yaml"]["regions"]["us-east-1"]["instance_types"]
    assert rows["g6.xlarge"]["as_of"] == "2026-11-01" and rows["p5.48xlarge"]["as_of"] == "2026-12-01"
    assert changes == [
        "aws us-east-1: offered no longer: p5.48xlarge",
        "aws us-east-1 p5.48xlarge on-demand: 55.04 -> 57.0 (+3.6 %)",
        "aws us-east-1 p5.48xlarge spot median: no price any more (was 30.0)",
    ]
    assert kept == []  # eu-west-1 has offerings only; aws_api.yaml records no other region


def test_gcp_region_read_replaces_its_zones_and_keeps_other_regions(tmp_path):
    zone = {"source": "s", "as_of": "2026-11-01", "projects": ["p"], "machine_types": ["a3-highgpu-8g"], "accelerators": {"nvidia-h100-80gb": 8}}
    _write(tmp_path, "gcp_offerings.yaml", {"schema_version": 1, "zones": {"us-central1-a": zone, "us-central1-c": zone, "europe-west4-b": zone}})
    _write(tmp_path, "gcp_api.yaml", {"schema_version": 1, "regions": {"europe-west4": {"gpu_prices": {}}, "us-central1": {
        "gpu_prices": {"nvidia-tesla-t4": {"on-demand": 0.35}}}}})
    new_zone = dict(zone, as_of="2026-12-01", machine_types=[], accelerators={"nvidia-tesla-t4": 4})
    run = {"gcp_offerings.yaml": {"schema_version": 1, "zones": {"us-central1-a": new_zone}},
           "gcp_api.yaml": {"schema_version": 1, "regions": {"us-central1": {"gpu_prices": {"nvidia-tesla-t4": {"on-demand": 0.4}}}}}}
    files, changes, kept = merge.merge(run, {"gcp": ["us-central1"]}, tmp_path)
    assert list(files["gcp_offerings.yaml"]["zones"]) == ["europe-west4-b", "us-central1-a"]  # us-central1-c read, not listed
    assert "gcp us-central1-a: machine types no longer: a3-highgpu-8g" in changes
    assert "gcp us-central1-c: no GPU machine or accelerator type listed any more" in changes
    assert "gcp us-central1 nvidia-tesla-t4 on-demand per GPU: 0.35 -> 0.4 (+14.3 %)" in changes
    assert kept == ["gcp: europe-west4 (as recorded before)"]


def test_offered_in_region_is_unknown_for_a_type_never_asked_about(monkeypatch):
    from gpufleet.base.catalog import offerings

    monkeypatch.setattr(offerings, "aws_regions", lambda: OLD_OFFERINGS["regions"])
    assert offerings.aws_offered_in_region("p5.48xlarge", "us-east-1") is True
    assert offerings.aws_offered_in_region("p6-b200.48xlarge", "us-east-1") is False
    assert offerings.aws_offered_in_region("g5.xlarge", "us-east-1") is None  # not asked: no verdict
    assert offerings.aws_offered_in_region("g5.xlarge", "ap-south-1") is None


def test_prices_older_than_the_threshold_are_warned_about_per_reading():
    items = [CostItem("GPU pool a", "gpu-nodes", 0, 2, 1.0, "s", as_of="2026-08-01", origin="hand-entered"),
             CostItem("GPU pool b", "gpu-nodes", 0, 2, 1.0, "s", as_of="2026-08-01", origin="hand-entered"),
             CostItem("GPU pool c", "gpu-nodes", 0, 2, 1.0, "s", as_of="2026-11-30", origin="api"),
             CostItem("declared", "host", 1, 1, 1.0, "s", origin="stack"),
             CostItem("unpriced", "gpu-nodes", 0, 2, None, "why")]
    assert prices.STALE_AFTER_DAYS == 90
    today = dt.date(2026, 12, 1)
    assert stale_prices(items, today) == [
        "prices read 2026-08-01, 122 days ago (over 90): GPU pool a, GPU pool b; refresh them with `gpufleet catalog "
        "refresh` or check them on the pricing pages"]
    assert stale_prices(items, dt.date(2026, 10, 30)) == []  # 90 days: not yet


def test_a_hand_entered_price_cites_the_source_and_date_it_was_typed_from():
    """Rows priced from Karpenter's generated Price List table cite it with its date, not the pricing page's."""
    b200 = prices.aws_instance_price("p6-b200.48xlarge", "on-demand", "us-east-1")
    assert (b200.origin, b200.as_of) == ("hand-entered", "2026-07-20")
    assert "zz_generated.pricing_aws.go" in b200.source
    p5 = prices.aws_instance_price("p5.48xlarge", "spot", "us-east-1")
    assert (p5.as_of, p5.origin) == ("2025-11-15", "hand-entered") and "Spot price history" in p5.source
    assert prices.aws_instance_price("p5.48xlarge", "on-demand", "us-west-2") is None  # no refreshed price, not us-east-1
