"""`gpufleet charts fetch`: download the pinned chart archives whose CRDs `gpufleet plan` validates against.

    results = fetch(crd_charts(), charts_dir())

Each archive comes from the URL its pin names (gpufleet.base.versions): the pin's `archive`, else the chart's entry
in its repository's index.yaml (what Helm does: helm/helm pkg/downloader/chart_downloader.go ResolveChartVersion
takes the entry's first URL, relative to the repository). The file is checked against the sha256 the pin records,
else the one the index lists, and is not saved when it differs. Charts in OCI registries are left to `helm pull`,
run when a `helm` is on PATH (GitHub's hosted runners have one), else printed: the registry protocol and its token
dance are Helm's to speak. The archives are saved as
`<name>-<version>.tgz` in the directory the plan reads (gpufleet.app.plan.chart_archives); once they are there, a
plan needs no network. Pulumi's Helm Release downloads the same archives at `pulumi up` anyway.

Every download is bounded and written safely (docs/security.md, "What gpufleet reads and writes on disk"):
- at most DOWNLOAD_MAX_BYTES and DEADLINE_SECONDS of wall-clock time each (READ_TIMEOUT_SECONDS per read of the
  socket), streamed into the sha256 as it arrives, never held whole in memory;
- a redirect keeps its scheme (an https download never continues over http, ftp or anything else; http may move to
  https);
- the archive is written to a new file with a unique name in the directory (tempfile.mkstemp: O_CREAT | O_EXCL, and
  O_NOFOLLOW where the platform has it), synced, checked, and only then renamed over `<name>-<version>.tgz`: a
  symlink planted at any name cannot redirect the write, a half-written file is never under the name the plan reads,
  and two fetches into one directory at once both finish.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shlex
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urljoin, urlsplit

import yaml

from gpufleet.app.plan.chart_archives import file_name, find_archive
from gpufleet.app.plan.crd_sources import SOURCES
from gpufleet.base import versions
from gpufleet.base.versions import HelmChart

TIMEOUT_SECONDS = 120
"""How long `helm pull` of an OCI chart may take."""
DEADLINE_SECONDS = 120.0
"""Wall-clock time one download (an archive or a repository's index.yaml) may take, from the request to its last
byte. The biggest pinned archive is 1.9 MB (AMD's gpu-operator-charts, versions.AMD_GPU_OPERATOR): two minutes
allow 16 kB/s."""
READ_TIMEOUT_SECONDS = 30.0
"""How long one read of the socket may wait (a download stops at most this long after its deadline)."""
DOWNLOAD_MAX_BYTES = 64 * 1024 * 1024
"""Bytes one download may hold: 33 times the biggest pinned archive (1.9 MB), and room for a big repository's
index.yaml (prometheus-community's, the biggest gpufleet reads, is a few MB)."""
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Pin:
    name: str
    """The gpufleet.base.versions constant, e.g. KUEUE."""
    chart: HelmChart


@dataclass(frozen=True)
class Result:
    pin: Pin
    ok: bool
    """The archive is in the directory now (it was, or it was fetched and verified)."""
    message: str


class FetchError(Exception):
    """An archive that could not be downloaded or verified: the message says which URL and why."""


def crd_charts() -> list[Pin]:
    """The pins whose chart archives hold the CRDs of the custom resources gpufleet creates, in SOURCES' order."""
    names = dict.fromkeys(s.pin for s in SOURCES if not s.extras)
    return [Pin(name, getattr(versions, name)) for name in names]


def stack_charts(plan) -> list[Pin]:
    """The chart of every Helm release in a stack's offline plan (gpufleet.app.plan.engine.Plan), each once: what
    `gpufleet charts fetch --stack` puts in the directory gpufleet:registry.charts names (issue 37). A release of a
    version other than its pin's (a stack's own gpuOperator.version) has no recorded digest."""
    pins = {v.name: (k, v) for k, v in vars(versions).items() if isinstance(v, HelmChart)}
    out: dict[tuple[str, str], Pin] = {}
    for r in plan.resources:
        if r.type != "kubernetes:helm.sh/v3:Release":
            continue
        version = str(r.inputs.get("version", ""))
        name = versions.chart_name_of(r.inputs["chart"], version)
        constant, pin = pins.get(name, (name, None))
        if pin is None:
            continue
        if pin.version != version:
            pin = HelmChart(pin.name, pin.repo, version, version)
        out.setdefault((name, version), Pin(constant, pin))
    return list(out.values())


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _SameScheme(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to the same scheme, or from http to https: never from https to anything else
    (urllib's own handler also follows https to http and to ftp)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = urlsplit(req.full_url).scheme, urlsplit(newurl).scheme
        if new not in ("http", "https") or (old == "https" and new != "https"):
            raise FetchError(f"{req.full_url}: redirected to {newurl.split('?')[0]!r}: only a redirect to https "
                             "(or from http to http) is followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameScheme)


def _stream(url: str, sink: Callable[[bytes], None]) -> None:
    """Hand the body of `url` to `sink` in chunks, within DEADLINE_SECONDS and DOWNLOAD_MAX_BYTES (FetchError
    otherwise, with the URL and why)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    request = urllib.request.Request(url, headers={"User-Agent": "gpufleet-charts-fetch"})
    try:
        with _OPENER.open(request, timeout=min(READ_TIMEOUT_SECONDS, DEADLINE_SECONDS)) as response:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > DOWNLOAD_MAX_BYTES:
                raise FetchError(f"{url}: {int(length):,} bytes, more than the {DOWNLOAD_MAX_BYTES:,} a download may hold")
            total = 0
            while True:
                if time.monotonic() > deadline:
                    raise FetchError(f"{url}: not finished after {DEADLINE_SECONDS:g} s")
                chunk = response.read1(_CHUNK)
                if not chunk:
                    return
                total += len(chunk)
                if total > DOWNLOAD_MAX_BYTES:
                    raise FetchError(f"{url}: more than the {DOWNLOAD_MAX_BYTES:,} bytes a download may hold")
                sink(chunk)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise FetchError(f"{url}: cannot download ({reason})") from None


def _get(url: str) -> bytes:
    """A small document (a repository's index.yaml), within the same bounds as an archive."""
    chunks: list[bytes] = []
    _stream(url, chunks.append)
    return b"".join(chunks)


def resolve(pin: Pin) -> tuple[str, str, str]:
    """(archive URL, expected sha256 or "", where that digest was read) of a chart in an https repository."""
    chart = pin.chart
    if chart.archive:
        return chart.archive, chart.digest, f"versions.{pin.name}"
    index_url = chart.repo.rstrip("/") + "/index.yaml"
    try:
        index = yaml.load(_get(index_url), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError as exc:
        raise FetchError(f"{index_url}: not a chart repository index ({exc})") from None
    entries = index.get("entries") if isinstance(index, dict) else None
    versions_listed = (entries.get(chart.name) if isinstance(entries, dict) else None) or []
    entry = next((e for e in versions_listed if isinstance(e, dict) and str(e.get("version")) == chart.version), None)
    if entry is None or not entry.get("urls"):
        raise FetchError(f"{index_url}: no {chart.name} {chart.version} with a download URL")
    url = urljoin(chart.repo.rstrip("/") + "/", str(entry["urls"][0]))
    if chart.digest:
        return url, chart.digest, f"versions.{pin.name}"
    return url, str(entry.get("digest") or ""), f"the index {index_url}"


def _helm_pull_args(chart: HelmChart, directory: Path) -> list[str]:
    """`helm pull` of an OCI chart, referenced as components/helm_chart.py chart_args references it for the Release."""
    return ["pull", f"{chart.repo.rstrip('/')}/{chart.name}", "--version", chart.version, "--destination", str(directory)]


def helm_pull_command(chart: HelmChart, directory: Path) -> str:
    return shlex.join(["helm", *_helm_pull_args(chart, directory)])


def _verified(path: Path, digest: str) -> bool:
    if not digest:
        return True
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1024 * 1024), b""):
            h.update(chunk)
    return h.hexdigest() == digest


def _download_to(url: str, target: Path) -> tuple[Path, str]:
    """(a new file beside `target` holding the body of `url`, its sha256). The file is created exclusively under a
    unique name, written as the bytes arrive and synced; the caller renames it or removes it."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as f:
            def sink(chunk: bytes) -> None:
                digest.update(chunk)
                f.write(chunk)
            _stream(url, sink)
            f.flush()
            os.fchmod(f.fileno(), 0o644)  # mkstemp's 0600: a chart archive is no secret, and CI may read it as another user
            os.fsync(f.fileno())
    except BaseException:
        os.unlink(name)
        raise
    return Path(name), digest.hexdigest()


def _sync_directory(directory: Path) -> None:
    """The rename on disk too (POSIX: fsync of the directory); where a directory cannot be opened, nothing."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _helm_pull(pin: Pin, label: str, directory: Path) -> Result:
    """An OCI chart through `helm pull`, which saves it as `<name>-<version>.tgz` (chart_downloader.go DownloadTo)."""
    command = helm_pull_command(pin.chart, directory)
    helm = shutil.which("helm")
    if helm is None:
        return Result(pin, False, f"{label}: an OCI chart and no helm on PATH; install Helm 3 "
                                  f"(helm.sh/docs/intro/install) and run again, or fetch it yourself: {command}")
    try:
        run = subprocess.run([helm, *_helm_pull_args(pin.chart, directory)], capture_output=True, text=True,
                             timeout=TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Result(pin, False, f"{label}: `{command}` did not run ({exc})")
    if run.returncode != 0:
        why = (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1]
        return Result(pin, False, f"{label}: `{command}` failed: {why}")
    saved = find_archive(pin.chart, directory)
    if saved is None:
        return Result(pin, False, f"{label}: `{command}` saved no {file_name(pin.chart)}")
    return Result(pin, True, f"{label}: fetched with `{command}` as {saved.name} (an OCI tag: no sha256 recorded, "
                             "not verified)")


def fetch_one(pin: Pin, directory: Path) -> Result:
    chart = pin.chart
    label = f"{chart.name} {chart.version} (versions.{pin.name})"
    have = find_archive(chart, directory)
    if have is not None and _verified(have, chart.digest):
        return Result(pin, True, f"{label}: present, {have.name}")
    if chart.repo.startswith("oci://"):
        return _helm_pull(pin, label, directory)
    target = directory / file_name(chart)
    try:
        url, digest, digest_source = resolve(pin)
        partial, got = _download_to(url, target)
    except FetchError as exc:
        return Result(pin, False, f"{label}: {exc}")
    except OSError as exc:
        return Result(pin, False, f"{label}: cannot write in {directory} ({exc.strerror or exc})")
    if digest and got != digest:
        partial.unlink()
        return Result(pin, False, f"{label}: {url} has sha256 {got}, but {digest_source} records {digest}: "
                                  "not saved (a replaced or corrupted archive)")
    try:
        os.replace(partial, target)  # never a half-written archive under the name the plan reads
        _sync_directory(directory)
        if have is not None and have != target:  # a copy that failed its digest, under another accepted name
            have.unlink(missing_ok=True)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        return Result(pin, False, f"{label}: cannot write {target} ({exc.strerror or exc})")
    verified = f"sha256 as {digest_source} records" if digest else "no sha256 recorded for this chart, not verified"
    return Result(pin, True, f"{label}: fetched {url} as {target.name} ({verified})")


def fetch(pins: list[Pin], directory: Path, progress=None) -> list[Result]:
    """Fetch every pin's archive into `directory` (created if needed); one result per pin, in order. `progress`:
    called with (done, total, chart) after each (gpufleet/app/progress.py: on a terminal only)."""
    directory.mkdir(parents=True, exist_ok=True)
    results = []
    for pin in pins:
        results.append(fetch_one(pin, directory))
        if progress is not None:
            progress(len(results), len(pins), f"{pin.chart.name} {pin.chart.version}")
    return results


def report(results: list[Result], directory: Path) -> str:
    lines = [f"chart archives in {directory}:"] + [f"  {'ok' if r.ok else 'missing'}: {r.message}" for r in results]
    missing = [r for r in results if not r.ok]
    if missing:
        lines.append(f"{len(missing)} of {len(results)} archives missing: `gpufleet plan` warns that it did not "
                     "validate the custom resources whose CRDs they hold")
    return "\n".join(lines) + "\n"
