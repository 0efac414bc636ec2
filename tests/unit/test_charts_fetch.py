"""`gpufleet charts fetch` (gpufleet/app/charts_fetch.py), offline: a local http.server serves copies of the pinned
archives from ../shared/reference/charts, and the pins are pointed at it. The published digests the pins record are
real: the AMD GPU Operator's archive in the reference is the published file (it matches), KEDA's is a `helm package`
of the tag (charts/SOURCES.md), so it does not match and is refused, as a replaced archive would be."""

from __future__ import annotations

import hashlib
import shutil
import sys
import threading
from dataclasses import replace
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from gpufleet.app import charts_fetch
from gpufleet.app.charts_fetch import Pin, crd_charts, fetch, helm_pull_command
from gpufleet.app.cli import main
from gpufleet.app.plan.chart_archives import find_archive
from gpufleet.app.plan.crd_sources import SOURCES, Crd, lookup
from gpufleet.base import versions
from gpufleet.components.helm_chart import chart_args

AMD, KEDA, VOLCANO, NETOP = (versions.AMD_GPU_OPERATOR, versions.KEDA, versions.VOLCANO, versions.NETWORK_OPERATOR)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no request log on the test's stderr
        pass


@pytest.fixture
def server(charts, tmp_path, monkeypatch):
    """http://127.0.0.1:<port>/ serving copies of three reference archives and a chart repository index.yaml for the
    Network Operator (relative URL, the digest of the copy). Volcano's archive is not served (a missing file)."""
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    served = tmp_path / "served"
    served.mkdir()
    for chart in (AMD, KEDA, NETOP):
        shutil.copy(find_archive(chart, charts), served / find_archive(chart, charts).name)
    netop = find_archive(NETOP, charts)
    (served / "index.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "entries": {"network-operator": [
        {"version": NETOP.version, "urls": [netop.name], "digest": hashlib.sha256(netop.read_bytes()).hexdigest()},
        {"version": "v0.0.1", "urls": ["elsewhere.tgz"]},
    ]}}))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(served)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _at(base: str, name: str, chart):
    """The pin, its archive URL moved to the local server (same file name)."""
    return Pin(name, replace(chart, archive=f"{base}/{chart.archive.rsplit('/', 1)[1]}"))


def test_an_archive_is_fetched_verified_and_read_by_the_plan(server, tmp_path):
    into = tmp_path / "cache"
    [result] = fetch([_at(server, "AMD_GPU_OPERATOR", AMD)], into)
    assert result.ok, result.message
    assert result.message.endswith(f"as gpu-operator-charts-{AMD.version}.tgz (sha256 as versions.AMD_GPU_OPERATOR records)")
    assert hashlib.sha256((into / f"gpu-operator-charts-{AMD.version}.tgz").read_bytes()).hexdigest() == AMD.digest
    assert isinstance(lookup("amd.com/v1alpha1", "DeviceConfig", into), Crd)
    [again] = fetch([_at(server, "AMD_GPU_OPERATOR", AMD)], into)
    assert (again.ok, again.message) == (True, f"gpu-operator-charts {AMD.version} (versions.AMD_GPU_OPERATOR): present, "
                                               f"gpu-operator-charts-{AMD.version}.tgz")


def test_a_digest_mismatch_is_refused_and_nothing_is_saved(server, tmp_path):
    into = tmp_path / "cache"
    [result] = fetch([_at(server, "KEDA", KEDA)], into)
    assert not result.ok
    assert f"but versions.KEDA records {KEDA.digest}: not saved (a replaced or corrupted archive)" in result.message
    assert list(into.iterdir()) == []


def test_a_present_archive_with_the_wrong_digest_is_fetched_again(server, tmp_path, charts):
    into = tmp_path / "cache"
    into.mkdir()
    (into / f"gpu-operator-charts-{AMD.version}.tgz").write_bytes(b"truncated")
    [result] = fetch([_at(server, "AMD_GPU_OPERATOR", AMD)], into)
    assert result.ok and "fetched" in result.message
    assert (into / f"gpu-operator-charts-{AMD.version}.tgz").read_bytes() == find_archive(AMD, charts).read_bytes()


def test_a_missing_file_says_which_url(server, tmp_path):
    [result] = fetch([_at(server, "VOLCANO", VOLCANO)], tmp_path)
    assert not result.ok
    assert result.message == (f"volcano {VOLCANO.version} (versions.VOLCANO): {server}/volcano-{VOLCANO.version}.tgz: "
                              "HTTP 404 File not found")


def test_a_repository_chart_is_found_in_its_index_and_checked_against_the_index_digest(server, tmp_path):
    """The Network Operator pin names a repository, no archive: the index's entry for the pinned version gives the
    URL (relative to the repository, as Helm resolves it) and the digest."""
    [result] = fetch([Pin("NETWORK_OPERATOR", replace(NETOP, repo=server))], tmp_path)
    assert result.ok, result.message
    assert result.message.endswith(f"(sha256 as the index {server}/index.yaml records)")
    assert isinstance(lookup("mellanox.com/v1alpha1", "NicClusterPolicy", tmp_path), Crd)
    [missing] = fetch([Pin("NETWORK_OPERATOR", replace(NETOP, repo=server, version="v99.0.0"))], tmp_path)
    assert missing.message.endswith(f"{server}/index.yaml: no network-operator v99.0.0 with a download URL")


def test_an_unreachable_server_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    [result] = fetch([Pin("KEDA", replace(KEDA, archive="http://127.0.0.1:9/keda.tgz"))], tmp_path)
    assert not result.ok and result.message.startswith(f"keda {KEDA.version} (versions.KEDA): http://127.0.0.1:9/keda.tgz: cannot download (")


def _path_with(tmp_path: Path, helm_script: str = "") -> str:
    """A PATH holding only a stand-in `helm`, a Python script (none when the script is empty)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if helm_script:
        (bin_dir / "helm").write_text(f"#!{sys.executable}\nimport shutil, sys\n{helm_script}")
        (bin_dir / "helm").chmod(0o755)
    return str(bin_dir)


def test_oci_charts_without_helm_print_the_helm_pull_to_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _path_with(tmp_path))
    into = tmp_path / "charts dir"
    [result] = fetch([Pin("KUEUE", versions.KUEUE)], into)
    assert (result.ok, result.message) == (
        False, f"kueue {versions.KUEUE.version} (versions.KUEUE): an OCI chart and no helm on PATH; install Helm 3 "
               f"(helm.sh/docs/intro/install) and run again, or fetch it yourself: helm pull oci://registry.k8s.io/kueue/charts/kueue --version {versions.KUEUE.version} "
               f"--destination '{into}'")


def test_oci_charts_are_pulled_by_helm_when_it_is_on_path(tmp_path, monkeypatch, charts):
    """A stand-in helm that saves the reference archive where `--destination` says, as `helm pull` would."""
    archive = find_archive(versions.KUEUE, charts)
    monkeypatch.setenv("PATH", _path_with(tmp_path, f"shutil.copy({str(archive)!r}, sys.argv[sys.argv.index('--destination') + 1])\n"))
    [result] = fetch([Pin("KUEUE", versions.KUEUE)], tmp_path / "charts")
    assert result.ok, result.message
    assert result.message == (f"kueue {versions.KUEUE.version} (versions.KUEUE): fetched with "
                              f"`{helm_pull_command(versions.KUEUE, tmp_path / 'charts')}` as kueue-{versions.KUEUE.version}.tgz "
                              "(an OCI tag: no sha256 recorded, not verified)")
    assert isinstance(lookup("kueue.x-k8s.io/v1beta2", "ClusterQueue", tmp_path / "charts"), Crd)


def test_a_failing_helm_pull_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _path_with(tmp_path, "sys.exit('Error: failed to authorize: 401 Unauthorized')\n"))
    [result] = fetch([Pin("KARPENTER", versions.KARPENTER)], tmp_path / "charts")
    assert (result.ok, result.message) == (
        False, f"karpenter {versions.KARPENTER.version} (versions.KARPENTER): "
               f"`{helm_pull_command(versions.KARPENTER, tmp_path / 'charts')}` failed: "
               "Error: failed to authorize: 401 Unauthorized")


def test_every_chart_the_plan_reads_is_fetched_from_where_the_release_installs_it():
    """The pins of SOURCES, each from the same reference the Helm Release gets (components/helm_chart.py)."""
    pins = crd_charts()
    assert {p.name for p in pins} == {s.pin for s in SOURCES}
    for pin in pins:
        args = chart_args(pin.chart)
        if pin.chart.repo.startswith("oci://"):
            assert helm_pull_command(pin.chart, Path("/d")) == f"helm pull {args['chart']} --version {args['version']} --destination /d"
        elif pin.chart.archive:
            assert charts_fetch.resolve(pin)[:2] == (args["chart"], pin.chart.digest)
        else:
            assert args["repository_opts"]["repo"] == pin.chart.repo


def test_the_cli_fills_the_directory_and_exits_1_while_an_archive_is_missing(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(charts_fetch, "crd_charts", lambda: [_at(server, "AMD_GPU_OPERATOR", AMD), _at(server, "VOLCANO", VOLCANO)])
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(tmp_path / "charts"))
    assert main(["charts", "fetch"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"chart archives in {tmp_path / 'charts'}:"
    assert out[1].startswith("  ok: gpu-operator-charts") and out[2].startswith("  missing: volcano")
    assert out[3] == "1 of 2 archives missing: `gpufleet plan` warns that it did not validate the custom resources whose CRDs they hold"
    monkeypatch.setattr(charts_fetch, "crd_charts", lambda: [_at(server, "AMD_GPU_OPERATOR", AMD)])
    assert main(["charts", "fetch", "--dir", str(tmp_path / "charts")]) == 0


def test_the_cli_cannot_create_the_directory(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["charts", "fetch", "--dir", str(tmp_path / "file" / "charts")]) == 2
    assert capsys.readouterr().err.startswith(f"gpufleet: cannot create {tmp_path / 'file' / 'charts'}: ")
