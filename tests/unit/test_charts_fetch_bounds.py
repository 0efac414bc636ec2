"""`gpufleet charts fetch` writes and downloads within bounds (issue 48): a unique temporary file created exclusively
(a planted symlink cannot redirect the write; two fetches at once both finish), a wall-clock deadline and a size cap
per download, no redirect that leaves the scheme. A local HTTP server on 127.0.0.1 serves a small archive made here
and the hostile answers."""

from __future__ import annotations

import hashlib
import threading
import time
import urllib.request
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gpufleet.app import charts_fetch
from gpufleet.app.charts_fetch import FetchError, Pin, fetch
from gpufleet.base import versions

BODY = b"\x1f\x8b" + b"chart archive bytes " * 500
CHART = replace(versions.VOLCANO, digest=hashlib.sha256(BODY).hexdigest())
NAME = f"volcano-{CHART.version}.tgz"


class _Handler(BaseHTTPRequestHandler):
    both_waiting = threading.Barrier(2, timeout=5)

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/to-ftp":
            self.send_response(302)
            self.send_header("Location", "ftp://127.0.0.1/archive.tgz")
            self.end_headers()
            return
        if self.path == "/drip":  # one byte every 50 ms, for ever
            self.send_response(200)
            self.send_header("Content-Length", str(10 ** 6))
            self.end_headers()
            try:
                for _ in range(400):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass
            return
        if self.path == "/together.tgz":  # two fetches are answered only when both have asked
            _Handler.both_waiting.wait()
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        for i in range(0, len(BODY), 1000):
            self.wfile.write(BODY[i:i + 1000])
            self.wfile.flush()


@pytest.fixture
def base(monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _pin(url: str) -> Pin:
    return Pin("VOLCANO", replace(CHART, archive=url))


def test_a_symlink_planted_at_the_temporary_name_is_not_followed(base, tmp_path):
    """The old fixed `.<name>.part` and any other name: the archive lands under its own name, the target of the
    link is untouched and no temporary file is left behind."""
    into = tmp_path / "charts"
    into.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (into / f".{NAME}.part").symlink_to(victim)
    [result] = fetch([_pin(f"{base}/{NAME}")], into)
    assert result.ok, result.message
    assert victim.read_text() == "keep me"
    assert (into / NAME).read_bytes() == BODY and not (into / NAME).is_symlink()
    assert sorted(p.name for p in into.iterdir()) == sorted([NAME, f".{NAME}.part"])


def test_a_symlink_at_the_archive_name_is_replaced_not_written_through(base, tmp_path):
    into = tmp_path / "charts"
    into.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (into / NAME).symlink_to(victim)
    [result] = fetch([_pin(f"{base}/{NAME}")], into)
    assert result.ok, result.message
    assert victim.read_text() == "keep me" and (into / NAME).read_bytes() == BODY


def test_two_fetches_into_one_directory_at_once_both_finish(base, tmp_path):
    into = tmp_path / "charts"
    results: list = []
    threads = [threading.Thread(target=lambda: results.extend(fetch([_pin(f"{base}/together.tgz")], into)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [r.ok for r in results] == [True, True], [r.message for r in results]
    assert [p.name for p in into.iterdir()] == [NAME] and (into / NAME).read_bytes() == BODY


def test_a_download_over_the_size_cap_stops_and_saves_nothing(base, tmp_path, monkeypatch):
    monkeypatch.setattr(charts_fetch, "DOWNLOAD_MAX_BYTES", 4096)
    [result] = fetch([_pin(f"{base}/{NAME}")], tmp_path)
    assert not result.ok
    assert result.message.endswith(f"{base}/{NAME}: {len(BODY):,} bytes, more than the 4,096 a download may hold")
    assert list(tmp_path.iterdir()) == []


def test_a_download_past_its_deadline_stops_and_saves_nothing(base, tmp_path, monkeypatch):
    """A server that sends a byte every 50 ms (each read is quick, the download never ends)."""
    monkeypatch.setattr(charts_fetch, "DEADLINE_SECONDS", 0.5)
    started = time.monotonic()
    [result] = fetch([_pin(f"{base}/drip")], tmp_path)
    assert time.monotonic() - started < 5
    assert not result.ok and result.message.endswith(f"{base}/drip: not finished after 0.5 s")
    assert list(tmp_path.iterdir()) == []


def test_a_redirect_to_another_scheme_is_not_followed(base, tmp_path):
    [result] = fetch([_pin(f"{base}/to-ftp")], tmp_path)
    assert not result.ok
    assert result.message.endswith(f"{base}/to-ftp: redirected to 'ftp://127.0.0.1/archive.tgz': only a redirect "
                                   "to https (or from http to http) is followed")


def test_https_is_never_redirected_to_http():
    """The handler's rule, on the request urllib would follow (no TLS server here: 127.0.0.1 serves http only)."""
    handler = charts_fetch._SameScheme()
    request = urllib.request.Request("https://charts.example/volcano.tgz")
    with pytest.raises(FetchError, match="redirected to 'http://charts.example/volcano.tgz'"):
        handler.redirect_request(request, None, 302, "Found", {}, "http://charts.example/volcano.tgz")
    upgraded = handler.redirect_request(urllib.request.Request("http://charts.example/a.tgz"), None, 302, "Found", {},
                                        "https://mirror.example/a.tgz")
    assert upgraded.full_url == "https://mirror.example/a.tgz"
