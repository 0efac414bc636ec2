"""The GCP side of `gpufleet catalog refresh` on the real Google client libraries (google-cloud-compute,
google-cloud-billing; REST transport), offline: their HTTP session is served from the recorded API pages
(tests/fixtures/catalog_refresh/gcp.json), so the libraries' own request building (URLs, pageToken), JSON ->
proto parsing, pagers and HTTP error mapping (429 -> TooManyRequests, 403 -> Forbidden) run as they would
against Google. The catalog built this way equals the same golden files as the recorded-page test.

Not collected by the main test run (the file name has no `test_` prefix): tests/unit/test_catalog_refresh_gcp_clients.py
runs it in an interpreter of its own, because Google's protos cannot be loaded into a process that already holds
the Pulumi provider protos (see there)."""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("google.cloud.compute_v1", reason="google-cloud-compute is in the dev and catalog extras")
pytest.importorskip("google.cloud.billing_v1", reason="google-cloud-billing is in the dev and catalog extras")
import requests  # noqa: E402
from google.auth.credentials import AnonymousCredentials  # noqa: E402

from gpufleet.base.catalog import refresh  # noqa: E402
from gpufleet.base.catalog.refresh import gcp as gcp_refresh  # noqa: E402
from tests.helpers import ROOT  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "catalog_refresh"
GOLDEN = ROOT / "tests" / "golden" / "catalog-refresh"
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
PATHS = {
    "/compute/v1/projects/my-project/aggregated/machineTypes": "machine_types",
    "/compute/v1/projects/my-project/aggregated/acceleratorTypes": "accelerator_types",
    "/v1/services/6F81-5844-456A/skus": "skus",
}


class RecordedHttp(requests.adapters.BaseAdapter):
    """Answers the clients' HTTP requests from the recorded pages (by path and pageToken); the first SKU
    request is throttled (HTTP 429), and `fail` makes a path answer 403."""

    def __init__(self, fail: str | None = None):
        super().__init__()
        self.pages = json.loads((FIXTURES / "gcp.json").read_text())
        self.requests: list[tuple[str, str, str | None]] = []
        self.throttled = False
        self.fail = fail

    def send(self, request, **kwargs):  # noqa: ANN001 - requests' adapter interface
        url = urlsplit(request.url)
        token = parse_qs(url.query).get("pageToken", [None])[0]
        self.requests.append((request.method, url.netloc + url.path, token))
        kind = PATHS.get(url.path)
        if kind is None:
            return self._response(request, 404, {"error": {"code": 404, "message": f"no recording for {url.path}"}})
        if kind == self.fail:
            return self._response(request, 403, {"error": {"code": 403, "message": "Required 'compute.machineTypes.list' "
                                                           "permission for 'projects/my-project'", "status": "PERMISSION_DENIED"}})
        if kind == "skus" and not self.throttled:
            self.throttled = True
            return self._response(request, 429, {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}})
        pages = self.pages[kind]
        tokens = [None] + [p.get("nextPageToken") for p in pages[:-1]]
        return self._response(request, 200, pages[tokens.index(token)])

    @staticmethod
    def _response(request, status: int, body: dict) -> requests.Response:
        response = requests.Response()
        response.status_code, response.request, response.url = status, request, request.url
        response.headers["Content-Type"] = "application/json"
        response._content = json.dumps(body).encode()
        return response

    def close(self) -> None:
        pass


def _api(http: RecordedHttp):
    clients = gcp_refresh.google_clients(credentials=AnonymousCredentials())
    for client in clients:
        # The REST transport's own requests session (google.auth AuthorizedSession): only its network is replaced.
        client._transport._session.mount("https://", http)
    return lambda project: gcp_refresh.page_callables(project, *clients)


def _build(http: RecordedHttp):
    sleeps: list[float] = []
    result = refresh.build([], [("my-project", ["us-central1"])], gcp_api=_api(http), now=NOW, sleep=sleeps.append)
    return result, sleeps


def test_real_clients_build_the_requests_follow_pages_and_retry_throttling():
    http = RecordedHttp()
    result, sleeps = _build(http)
    assert not result.errors
    assert ("GET", "compute.googleapis.com/compute/v1/projects/my-project/aggregated/machineTypes", "mt-2") in http.requests
    assert ("GET", "cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus", "sku-2") in http.requests
    skus = [r for r in http.requests if r[1].endswith("/skus")]
    assert skus[:2] == [skus[0], skus[0]] and skus[0][2] is None  # 429, then the same first page again
    assert sleeps == [1.0]
    zones = result.files["gcp_offerings.yaml"]["zones"]
    assert "us-central1-f" not in zones  # a scope with only a warning records nothing
    assert zones["us-central1-b"]["machine_types"] == ["g2-standard-8"]
    assert "gcp my-project: nvidia-h100-80gb: SKU H100-SPOT (spot, us-central1) has no price" in result.unconfirmed


def test_real_clients_give_the_golden_catalog(tmp_path):
    result, _ = _build(RecordedHttp())
    refresh.write(result, tmp_path)
    for name in ("gcp_offerings.yaml", "gcp_api.yaml"):
        assert (tmp_path / name).read_text() == (GOLDEN / name).read_text(), name


def test_real_clients_report_an_api_error_and_write_nothing():
    result, _ = _build(RecordedHttp(fail="machine_types"))
    assert result.errors and result.errors[0].startswith("gcp my-project: Forbidden: 403 GET https://compute.googleapis.com/")
    assert result.files["gcp_offerings.yaml"]["zones"] == {}
