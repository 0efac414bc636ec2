"""`gpufleet catalog refresh` offline: AWS through botocore's Stubber, GCP through recorded API pages
(tests/fixtures/catalog_refresh/): pagination, throttling with retry, a type not offered in a zone/region,
a missing price, an API error; the generated catalog equals the golden files; --check exits 1 on drift;
plans never import the refresh or the cloud SDKs."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest

boto3 = pytest.importorskip("boto3", reason="boto3 is in the dev extra (pip install -e '.[dev]')")
from botocore.stub import Stubber  # noqa: E402

from gpufleet.app import cli  # noqa: E402
from gpufleet.base.catalog import refresh  # noqa: E402
from tests.helpers import ROOT, modules_a_plan_imports  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "catalog_refresh"
GOLDEN = ROOT / "tests" / "golden" / "catalog-refresh"
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
TYPES = ["p5.48xlarge", "g6.xlarge", "p6-b200.48xlarge"]
BUILD = refresh.build


def _recorded(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _ts(rows: dict) -> dict:
    rows = copy.deepcopy(rows)
    for r in rows.get("SpotPriceHistory", []):
        r["Timestamp"] = dt.datetime.fromisoformat(r["Timestamp"].replace("Z", "+00:00"))
    return rows


class StubbedAws:
    """boto3 clients whose responses come from the recorded file, in call order."""

    def __init__(self, error: str | None = None):
        rec = _recorded("aws.json")
        # Loopback endpoints: even an unstubbed call could not reach AWS.
        kw = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "x", "endpoint_url": "http://127.0.0.1:9"}
        self.ec2, self.pricing = boto3.client("ec2", **kw), boto3.client("pricing", **kw)
        self.ec2_stub, self.pricing_stub = Stubber(self.ec2), Stubber(self.pricing)
        self.ec2_stub.activate()  # a call without a recorded response fails instead of reaching AWS
        self.pricing_stub.activate()
        if error:
            self.ec2_stub.add_client_error("describe_instance_types", service_error_code=error, http_status_code=403)
            return
        # Throttled once, then two pages: the second call must carry the first page's NextToken.
        self.ec2_stub.add_client_error("describe_instance_types", service_error_code="RequestLimitExceeded", http_status_code=503)
        self.ec2_stub.add_response("describe_instance_types", rec["describe_instance_types"][0], {"InstanceTypes": TYPES})
        self.ec2_stub.add_response("describe_instance_types", rec["describe_instance_types"][1], {"InstanceTypes": TYPES, "NextToken": "page-2"})
        self.ec2_stub.add_response("describe_instance_type_offerings", rec["offerings_region"])
        self.ec2_stub.add_response("describe_instance_type_offerings", rec["offerings_zone_id"])
        self.pricing_stub.add_response("get_products", rec["price_p5"])
        self.ec2_stub.add_response("describe_spot_price_history", _ts(rec["spot_p5"]))
        self.pricing_stub.add_response("get_products", rec["price_g6"])  # a missing price
        self.ec2_stub.add_response("describe_spot_price_history", _ts(rec["spot_g6"]))

    def __call__(self, region: str) -> dict:
        return {"ec2": self.ec2, "pricing": self.pricing}


class TooManyRequests(Exception):
    """Stands in for google.api_core.exceptions.TooManyRequests (HTTP 429)."""

    code = 429


class RecordedGcp:
    """Page callables over recorded pages; the first SKU call is throttled."""

    def __init__(self):
        self.pages = _recorded("gcp.json")
        self.calls: list[tuple[str, object]] = []
        self.throttled = False

    def _source(self, kind: str):
        pages = self.pages[kind]
        tokens = [None] + [p.get("nextPageToken") for p in pages[:-1]]

        def page(token):
            self.calls.append((kind, token))
            if kind == "skus" and not self.throttled:
                self.throttled = True
                raise TooManyRequests("quota exceeded")
            return pages[tokens.index(token)]

        return page

    def __call__(self, project: str) -> dict:
        return {k: self._source(k) for k in ("machine_types", "accelerator_types", "skus")}


def _build(**kw):
    sleeps: list[float] = []
    gcp = RecordedGcp()
    result = refresh.build(["us-east-1"], [("my-project", ["us-central1"])], aws_api=kw.get("aws") or StubbedAws(), gcp_api=gcp,
                           now=NOW, sleep=sleeps.append, instance_types=TYPES)
    return result, sleeps, gcp


def test_aws_facts_pagination_throttling_offerings_and_prices():
    result, sleeps, _ = _build()
    assert result.errors == []
    facts = result.files["aws_api.yaml"]["regions"]["us-east-1"]
    assert facts["provenance"]["date"] == "2026-12-01"
    types = facts["instance_types"]
    assert set(types) == set(TYPES)  # p6-b200 came from the second page
    assert types["p5.48xlarge"] == {"gpu": "H100-80GB", "gpus": 8, "network_cards": 32, "efa_interfaces": 32, "on_demand": 55.04,
                                    "spot": {"median": 30.4, "min": 29.8, "max": 31.2, "samples": 3, "window": "2026-11-24..2026-12-01"},
                                    "as_of": "2026-12-01"}
    assert "on_demand" not in types["p6-b200.48xlarge"]  # not offered in the region: no price asked
    assert 1.0 in sleeps  # the throttled call was retried after a back-off
    offered = result.files["aws_offerings.yaml"]["regions"]["us-east-1"]
    assert offered["instance_types"] == ["g6.xlarge", "p5.48xlarge"]
    assert offered["not_offered"] == ["p6-b200.48xlarge"]  # asked about, not offered: a verdict, not a gap
    assert offered["zone_ids"] == {"use1-az4": ["g6.xlarge", "p5.48xlarge"], "use1-az6": ["g6.xlarge"]}
    assert "aws us-east-1: g6.xlarge: no on-demand Linux price in us-east-1 (Price List GetProducts)" in result.unconfirmed


def test_gcp_facts_pagination_throttling_zones_and_prices():
    result, sleeps, gcp = _build()
    assert ("machine_types", "mt-2") in gcp.calls and ("skus", "sku-2") in gcp.calls  # followed nextPageToken
    assert [c for c in gcp.calls if c[0] == "skus"][:2] == [("skus", None), ("skus", None)]  # throttled, retried
    zones = result.files["gcp_offerings.yaml"]["zones"]
    assert set(zones) == {"us-central1-a", "us-central1-b"}  # europe-west4 not asked for
    assert "a3-highgpu-8g" in zones["us-central1-a"]["machine_types"]
    assert "a3-highgpu-8g" not in zones["us-central1-b"]["machine_types"]  # a type not offered in a zone
    facts = result.files["gcp_api.yaml"]["regions"]["us-central1"]
    assert facts["gpu_prices"]["nvidia-tesla-t4"] == {"on-demand": 0.4, "spot": 0.175}
    assert facts["sale_options"]["nvidia-h100-80gb"] == ["flex-start", "spot"]
    assert "gcp my-project: nvidia-h100-80gb: SKU H100-SPOT (spot, us-central1) has no price" in result.unconfirmed
    assert "gcp us-central1 nvidia-tesla-t4 on-demand per GPU: catalog 0.35 -> API 0.4" in result.changes
    assert not [c for c in result.changes if "nvidia-tesla-t4 spot" in c]  # 0.175 in both


def test_changes_against_the_hand_entered_catalog():
    result, _, _ = _build()
    assert "aws us-east-1 p5.48xlarge.spot: catalog 30.0 -> API median 30.4 (2026-11-24..2026-12-01)" in result.changes
    assert not [c for c in result.changes if "p5.48xlarge.on_demand" in c]  # 55.04 both


def test_api_error_is_reported_and_nothing_is_written(tmp_path):
    result, _, _ = _build(aws=StubbedAws(error="UnauthorizedOperation"))
    assert result.errors and result.errors[0].startswith("aws us-east-1: ClientError: An error occurred (UnauthorizedOperation)")
    assert "aws_api.yaml" in result.files and result.files["aws_api.yaml"]["regions"] == {}


def test_generated_catalog_equals_golden(tmp_path):
    result, _, _ = _build()
    refresh.write(result, tmp_path)
    for name in ("aws_offerings.yaml", "aws_api.yaml", "gcp_offerings.yaml", "gcp_api.yaml"):
        assert (tmp_path / name).read_text() == (GOLDEN / name).read_text(), name


def _cli_refresh(monkeypatch, capsys, *args):
    monkeypatch.setattr(refresh.aws_refresh, "clients", StubbedAws())
    monkeypatch.setattr(refresh.gcp_refresh, "clients", RecordedGcp())
    monkeypatch.setattr(refresh, "build", lambda a, g, **kw: BUILD(a, g, now=NOW, sleep=lambda s: None, instance_types=TYPES, **kw))
    code = cli.main(["catalog", "refresh", "--aws", "us-east-1", "--gcp", "my-project:us-central1", *args])
    return code, capsys.readouterr()


def test_check_exits_0_when_files_match_and_1_on_drift(monkeypatch, capsys, tmp_path):
    for name in ("aws_offerings.yaml", "aws_api.yaml", "gcp_offerings.yaml", "gcp_api.yaml"):
        (tmp_path / name).write_text((GOLDEN / name).read_text())
    code, out = _cli_refresh(monkeypatch, capsys, "--output", str(tmp_path), "--check")
    assert code == 0, out.err
    assert "catalog changes (0):" in out.out and "not confirmed by the APIs" in out.out  # merged: nothing new
    (tmp_path / "gcp_offerings.yaml").write_text("schema_version: 1\nzones: {}\n")
    code, out = _cli_refresh(monkeypatch, capsys, "--output", str(tmp_path), "--check")
    assert code == 1
    assert f"drift: {tmp_path / 'gcp_offerings.yaml'} differs from the APIs" in out.err
    assert (tmp_path / "gcp_offerings.yaml").read_text() == "schema_version: 1\nzones: {}\n"  # --check writes nothing


def test_refresh_writes_files(monkeypatch, capsys, tmp_path):
    code, out = _cli_refresh(monkeypatch, capsys, "--output", str(tmp_path))
    assert code == 0
    assert f"wrote {tmp_path / 'aws_api.yaml'}" in out.out
    assert (tmp_path / "gcp_api.yaml").read_text() == (GOLDEN / "gcp_api.yaml").read_text()


def test_refresh_without_targets_exits_2(capsys):
    assert cli.main(["catalog", "refresh"]) == 2
    assert "needs --aws REGION[,REGION], --gcp PROJECT[:REGION,...] and/or --azure REGION[,REGION]" in capsys.readouterr().err


def test_plan_does_not_import_the_refresh_or_cloud_sdks():
    loaded = modules_a_plan_imports("prod-gke")
    assert "pulumi_gcp" in loaded  # the probe planned the GKE stack
    assert not [m for m in loaded if m.startswith(("boto3", "botocore", "google.cloud.compute", "google.cloud.billing",
                                                    "gpufleet.base.catalog.refresh"))]
