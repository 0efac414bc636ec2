"""The whole path offline: `gpufleet catalog refresh` on recorded API responses (tests/fixtures/catalog_refresh: paging
with NextToken / nextPageToken, throttling then success, a region without an instance type, a SKU without a price)
merges into a copy of the catalog, and `gpufleet plan` on that catalog prices pools with what the APIs returned
(source and date on each cost line) and judges offerings the refresh recorded. Also: a second run keeps what it did
not read, the run reports what changed, and a missing cloud SDK is one error up front (exit 2)."""

from __future__ import annotations

import io
import json
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

pytest.importorskip("boto3", reason="boto3 is in the dev extra (pip install -e '.[dev]')")

from gpufleet.app import cli  # noqa: E402
from gpufleet.base.catalog import refresh  # noqa: E402
from tests.forked import Forked  # noqa: E402
from tests.helpers import ROOT  # noqa: E402
from tests.unit.test_catalog_refresh import BUILD, NOW, TYPES, RecordedGcp, StubbedAws  # noqa: E402

CATALOG = ROOT / "gpufleet" / "base" / "catalog"


def _refresh(mp: pytest.MonkeyPatch, catalog: Path, *args: str) -> tuple[int, str, str]:
    """`gpufleet catalog refresh ARGS --output CATALOG` with the recorded responses instead of the clouds."""
    mp.setattr(refresh.aws_refresh, "clients", StubbedAws())
    mp.setattr(refresh.gcp_refresh, "clients", RecordedGcp())
    mp.setattr(refresh, "build", lambda a, g, **kw: BUILD(a, g, now=NOW, sleep=lambda s: None, instance_types=TYPES, **kw))
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["catalog", "refresh", *args, "--output", str(catalog)])
    return code, out.getvalue(), err.getvalue()


def _plan(forked: Forked, catalog: Path, stack_file: Path, stack: str) -> tuple[int, dict, str]:
    code, out, err = forked(["plan", stack, "--config", str(stack_file), "--format", "json"], catalog=catalog)
    return code, (json.loads(out) if code in (0, 1) else {}), err


@pytest.fixture(scope="module")
def forked():
    """Each plan in a process of its own that reads the catalog from the given directory (tests/forked.py)."""
    with Forked(env={"PYTHONWARNINGS": "ignore"}, catalogs=True) as run:
        yield run


def _stack(tmp: Path, base: str, edit) -> Path:
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{base}.yaml").read_text())
    edit(doc["config"])
    path = tmp / f"Pulumi.{base}-x.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _item(plan: dict, key: str) -> dict:
    return next(i for i in plan["cost"]["items"] if i["key"] == key)


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory):
    """(the package's catalog copied, the same copy after a refresh from the recorded responses)."""
    before, after = tmp_path_factory.mktemp("before"), tmp_path_factory.mktemp("after")
    for f in CATALOG.glob("*.yaml"):
        shutil.copy(f, before / f.name)
        shutil.copy(f, after / f.name)
    return before, after


@pytest.fixture(scope="module")
def refreshed(catalogs):
    """The refresh of us-east-1 and my-project:us-central1 into the `after` copy, run once: (exit code, stdout, stderr)."""
    mp = pytest.MonkeyPatch()
    try:
        return _refresh(mp, catalogs[1], "--aws", "us-east-1", "--gcp", "my-project:us-central1")
    finally:
        mp.undo()


def test_refresh_reports_what_it_changes(refreshed):
    code, out, err = refreshed
    assert code == 0, out + err
    assert "aws us-east-1: offerings recorded for the first time (2 types offered, 1 not)" in out
    assert "aws us-east-1 p5.48xlarge spot median: new price 30.4" in out
    assert "aws us-east-1 p5.48xlarge on-demand: new price 55.04" in out
    assert "gcp us-central1-b: offerings recorded for the first time (1 GPU machine types, 1 accelerators)" in out
    assert "gcp us-central1 nvidia-tesla-t4 on-demand per GPU: new price 0.4" in out
    # the SKU without a price and the type without an on-demand price are reported, not written as zero
    assert "nvidia-h100-80gb: SKU H100-SPOT (spot, us-central1) has no price" in out
    assert "g6.xlarge: no on-demand Linux price in us-east-1 (Price List GetProducts)" in out


def test_eks_cost_lines_take_the_refreshed_prices_with_source_and_date(tmp_path, catalogs, refreshed, forked):
    stack = _stack(tmp_path, "prod-eks", lambda c: None)
    code0, plan0, err0 = _plan(forked, catalogs[0], stack, "prod-eks-x")
    code1, plan1, err1 = _plan(forked, catalogs[1], stack, "prod-eks-x")
    assert code0 in (0, 1) and code1 in (0, 1), err0 + err1
    h100_0, h100_1 = _item(plan0, "gpu-nodes:h100-train"), _item(plan1, "gpu-nodes:h100-train")
    assert (h100_0["unitHourly"], h100_0["priceOrigin"], h100_0["priceAsOf"]) == (30.0, "hand-entered", "2025-11-15")
    assert (h100_1["unitHourly"], h100_1["priceOrigin"], h100_1["priceAsOf"]) == (30.4, "api", "2026-12-01")
    assert "EC2 DescribeSpotPriceHistory, us-east-1, Linux/UNIX: median of 3 prices over 2026-11-24..2026-12-01" in h100_1["source"]
    assert h100_1["hourlyMax"] == pytest.approx(4 * 30.4)
    assert plan1["cost"]["hourlyMax"] == pytest.approx(plan0["cost"]["hourlyMax"] + 4 * 0.4, abs=1e-3)
    # g6.xlarge: the Price List returned no on-demand price, so the hand-entered figure stays, marked as such
    l4 = _item(plan1, "gpu-nodes:l4-infer")
    assert (l4["unitHourly"], l4["priceOrigin"]) == (0.8048, "hand-entered")
    h100_cap = next(c for c in plan1["capacity"] if c["pool"] == "h100-train")
    assert h100_cap["pricePerNodeHour"] == 30.4
    # the stale warning names the hand-entered 2025 prices, no longer the refreshed pool
    warned = " ".join(plan1["cost"]["priceWarnings"])
    assert "GPU pool l4-infer" in warned and "GPU pool h100-train" not in warned
    assert "GPU pool h100-train" in " ".join(plan0["cost"]["priceWarnings"])


def test_eks_pool_of_a_type_the_region_does_not_offer_is_refused_after_the_refresh(tmp_path, catalogs, refreshed, forked):
    def b200(config):
        pool = dict(config["gpufleet:nodePools"][1], name="b200-train", instanceType="p6-b200.48xlarge", capacity="on-demand")
        pool.pop("instanceTypes", None)
        config["gpufleet:nodePools"].append(pool)

    stack = _stack(tmp_path, "prod-eks", b200)
    code0, plan0, err0 = _plan(forked, catalogs[0], stack, "prod-eks-x")
    assert code0 in (0, 1), err0  # the package records no AWS offerings: not judged
    code1, _, err1 = _plan(forked, catalogs[1], stack, "prod-eks-x")
    assert code1 == 2
    assert ("p6-b200.48xlarge is not offered in us-east-1 (ec2.DescribeInstanceTypeOfferings, 2026-12-01; regions that "
            "offer it: none recorded)") in err1
    assert "Traceback" not in err1


def test_gke_n1_gpus_priced_from_billing_and_zone_verdicts_follow_the_refresh(tmp_path, catalogs, refreshed, forked):
    def n1(config):
        pools = config["gpufleet:nodePools"]
        t4 = {k: v for k, v in pools[1].items() if k not in ("machineType", "capacity", "gke")}
        t4.update(name="t4-infer", machineType="n1-standard-4", acceleratorCount=1, capacity="on-demand")
        pools.append(t4)

    stack = _stack(tmp_path, "prod-gke", n1)
    code0, plan0, err0 = _plan(forked, catalogs[0], stack, "prod-gke-x")
    code1, plan1, err1 = _plan(forked, catalogs[1], stack, "prod-gke-x")
    assert code0 in (0, 1) and code1 in (0, 1), err0 + err1
    t4_0, t4_1 = _item(plan0, "gpu-nodes:t4-infer"), _item(plan1, "gpu-nodes:t4-infer")
    assert (t4_0["unitHourly"], t4_0["priceOrigin"]) == (0.54, "hand-entered")  # 0.19 VM + 0.35 per T4
    assert (t4_1["unitHourly"], t4_1["priceOrigin"], t4_1["priceAsOf"]) == (0.59, "api+hand-entered", "2026-12-01")
    assert "1 x GPU: Cloud Billing Catalog SKU (services/6F81-5844-456A), nvidia-tesla-t4 on-demand, us-central1" in t4_1["source"]
    # A3 High in us-central1-b: the hand-entered zone reading lists it; the refresh read that zone without it
    moved = _stack(tmp_path, "prod-gke", lambda c: c["gpufleet:nodePools"][0]["gke"].update(zones=["us-central1-b"]))
    code0, _, err0 = _plan(forked, catalogs[0], moved, "prod-gke-x")
    code1, _, err1 = _plan(forked, catalogs[1], moved, "prod-gke-x")
    assert code0 in (0, 1), err0
    assert code1 == 2 and "a3-highgpu-8g with nvidia-h100-80gb is not offered in us-central1-b" in err1
    assert "compute.machineTypes/acceleratorTypes.aggregatedList, 2026-12-01" in err1


def test_a_second_run_keeps_what_it_did_not_read(monkeypatch, tmp_path, catalogs, refreshed):
    catalog = tmp_path / "catalog"
    shutil.copytree(catalogs[1], catalog)
    aws = (catalog / "aws_api.yaml").read_text()
    code, out, err = _refresh(monkeypatch, catalog, "--gcp", "my-project:us-central1")
    assert code == 0, err
    assert "catalog changes (0):" in out  # the same readings again: nothing changes
    assert (catalog / "aws_api.yaml").read_text() == aws  # AWS not read: untouched
    # a region recorded before and not read now stays, and the report says so
    data = yaml.safe_load((catalog / "gcp_api.yaml").read_text())
    data["regions"]["europe-west4"] = dict(data["regions"]["us-central1"])
    (catalog / "gcp_api.yaml").write_text(refresh.render(data, "gcp_api.yaml"))
    code, out, err = _refresh(monkeypatch, catalog, "--gcp", "my-project:us-central1")
    assert code == 0 and "kept, not read this run:\n  gcp: europe-west4 (as recorded before)" in out
    assert "europe-west4" in yaml.safe_load((catalog / "gcp_api.yaml").read_text())["regions"]


def test_a_missing_sdk_is_one_error_up_front(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(refresh, "_installed", lambda module: module != "boto3")
    called = []
    monkeypatch.setattr(refresh.aws_refresh, "clients", lambda region: called.append(region))
    code = cli.main(["catalog", "refresh", "--aws", "us-east-1,us-west-2", "--output", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and not called and list(tmp_path.iterdir()) == []
    assert err == ("gpufleet: catalog refresh --aws needs boto3, which is not installed: pip install 'gpufleet[catalog]' "
                   "(the catalog extra: boto3, google-cloud-compute, google-cloud-billing)\n")
    monkeypatch.setattr(refresh, "_installed", lambda module: not module.startswith("google"))
    assert cli.main(["catalog", "refresh", "--gcp", "p:us-central1", "--output", str(tmp_path)]) == 2
    assert "needs google.cloud.compute_v1, google.cloud.billing_v1, which are not installed" in capsys.readouterr().err
