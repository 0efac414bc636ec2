"""A local Helm chart repository: the pinned chart archives of ../shared/reference/charts/ and an index.yaml.

The index is what `helm repo index` writes (apiVersion v1, entries per chart name with the chart's
metadata, a sha256 `digest` and the archive's `urls`), built here from each archive's Chart.yaml so the
e2e tier needs no helm binary. Served on loopback by a thread until `stop()`.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import tarfile
import threading
from datetime import datetime, timezone
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml


def chart_metadata(archive: Path) -> dict:
    """The Chart.yaml at the archive's top directory."""
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml"))
        return yaml.safe_load(tar.extractfile(member).read())


def build_index(directory: Path) -> dict:
    """index.yaml for every chart archive (*.tgz) in `directory`."""
    entries: dict[str, list[dict]] = {}
    created = datetime.now(timezone.utc).isoformat()
    for archive in sorted(directory.glob("*.tgz")):
        meta = chart_metadata(archive)
        entry = {
            **meta,
            "digest": hashlib.sha256(archive.read_bytes()).hexdigest(),
            "urls": [archive.name],
            "created": created,
        }
        entries.setdefault(meta["name"], []).append(entry)
    return {"apiVersion": "v1", "entries": entries, "generated": created}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output readable
        pass


class ChartRepository:
    """Copies the archives into `work`, writes index.yaml, serves the folder on 127.0.0.1."""

    def __init__(self, charts: Path, work: Path):
        self.dir = work
        self.dir.mkdir(parents=True, exist_ok=True)
        for archive in charts.glob("*.tgz"):
            shutil.copy(archive, self.dir / archive.name)
        self.index = build_index(self.dir)
        (self.dir / "index.yaml").write_text(yaml.safe_dump(self.index, sort_keys=False))
        handler = functools.partial(_Quiet, directory=str(self.dir))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def versions(self) -> dict[str, list[str]]:
        return {name: [e["version"] for e in entries] for name, entries in self.index["entries"].items()}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
