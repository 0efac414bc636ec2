"""What the stack's Kubernetes minor needs from the rest of the stack (issue 51, docs/upgrades.md).

    needs = kubernetes_needs(spec, resources, charts_dir())   # [Need(what, requires, ok, source)]

Listed by every plan (JSON `kubernetes`, a text and markdown section), so the plan of a minor bump says what must move
with it, each with its source:
- the GPU Operator release's supported Kubernetes versions (gpufleet/base/catalog/drivers.yaml, from NVIDIA's platform
  support matrix);
- each pinned chart's `kubeVersion` constraint from the Chart.yaml of its archive (Helm refuses to install a chart
  whose constraint the cluster does not meet: helm.sh/docs/topics/charts, "The Chart.yaml file", kubeVersion);
- the API versions of the built-in objects gpufleet emits that not every minor serves (BUILTIN_SINCE);
- the cloud's own add-ons for the minor, from the platform (VersionTraits.addon_needs: the EKS add-ons gpufleet
  installs and the self-managed ones EKS installs, from versions.EKS_SELF_MANAGED_ADDONS).
A constraint that is not met is a plan warning naming what to move; one that cannot be read says so (ok None).
"""

from __future__ import annotations

import functools
import re
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

from gpufleet.base import catalog, chart_crds, platforms, versions
from gpufleet.base.spec import Problem

# libyaml's safe loader where PyYAML has it (its wheels do): the same values, several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

RELEASE = "kubernetes:helm.sh/v3:Release"

# Built-in API versions gpufleet emits that appeared in a known minor (served by default from then on).
BUILTIN_SINCE: dict[str, tuple[str, str]] = {
    # DRA's structured parameters API went GA, resource.k8s.io/v1, in Kubernetes v1.34 (kubernetes.io/blog/2025/08/27/
    # kubernetes-v1-34-release, "DRA graduates to stable"; the beta versions are off by default on a plain cluster).
    "resource.k8s.io/v1": ("1.34", "Kubernetes v1.34 release notes: resource.k8s.io/v1 (DRA) GA, served by default"),
}


@dataclass(frozen=True)
class Need:
    what: str
    requires: str
    ok: Optional[bool]
    """True met, False not met, None not evaluated (the reason is in `requires`)."""
    source: str

    def to_json(self) -> dict:
        return {"what": self.what, "requires": self.requires, "ok": self.ok, "source": self.source}

    def line(self) -> str:
        mark = {True: "ok", False: "NOT MET", None: "unknown"}[self.ok]
        return f"[{mark}] {self.what}: {self.requires} ({self.source})"


def _minor(v: str) -> tuple[int, int]:
    major, minor = (v.split(".") + ["0"])[:2]
    return int(major), int(minor)


_CONSTRAINT = re.compile(r"^(>=|<=|>|<|=|==|!=)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-[0-9A-Za-z.-]+)?$")


def satisfies(minor: str, constraint: str) -> Optional[bool]:
    """Whether Kubernetes `minor` (its .0 patch, and any later patch: constraints here bound minors) meets a Chart.yaml
    kubeVersion constraint: comparisons joined by spaces or commas (AND) and `||` (OR), as Masterminds/semver reads
    them; None for a form this does not read."""
    have = (*_minor(minor), 0)
    any_ok = False
    for alternative in constraint.split("||"):
        ok = True
        for part in filter(None, re.split(r"[\s,]+", alternative.strip().replace(">= ", ">=").replace("<= ", "<=")
                                          .replace("> ", ">").replace("< ", "<"))):
            m = _CONSTRAINT.match(part)
            if m is None:
                return None
            op = m.group(1) or "="
            want = (int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0))
            ok &= {">=": have >= want, "<=": have <= want, ">": have > want, "<": have < want,
                   "=": have[:2] == want[:2], "==": have[:2] == want[:2], "!=": have[:2] != want[:2]}[op]
        any_ok |= ok
    return any_ok


def _kube_version(chart: versions.HelmChart, directory: Path) -> tuple[Optional[str], str]:
    """(kubeVersion, "") from the archive's Chart.yaml ("" when it declares none), or (None, why not read)."""
    archive = chart_crds.find_archive(chart, directory)
    if archive is None:
        return None, f"{chart.name}-{chart.version}.tgz not in {directory}"
    try:
        stat = archive.stat()
    except OSError as exc:
        return None, f"{archive} cannot be read ({chart_crds.one_line(exc)})"
    return _archive_kube_version(str(archive), chart.name, (stat.st_size, stat.st_mtime_ns))


@functools.lru_cache(maxsize=64)
def _archive_kube_version(archive: str, name: str, stamp: tuple[int, int]) -> tuple[Optional[str], str]:
    """_kube_version of one archive, read once per process for each (size, mtime) of the file: every plan asks for
    each of its charts (a fleet plan or the tests plan hundreds)."""
    try:
        [(_, text, _)] = chart_crds.read_texts(archive, {f"{name}/Chart.yaml": False}) or [(0, "", 0)]
        meta = yaml.load(text, Loader=_LOADER) if text else {}
    except (chart_crds.ArchiveRefused, yaml.YAMLError, OSError, EOFError, tarfile.TarError, zlib.error, ValueError) as exc:
        return None, f"{archive} cannot be read ({chart_crds.one_line(exc)})"
    value = meta.get("kubeVersion") if isinstance(meta, dict) else None
    return (str(value) if value else ""), ""


def kubernetes_needs(spec, resources, directory: Path) -> list[Need]:
    minor = spec.cluster.kubernetes_version
    out: list[Need] = []
    pins = {v.name: v for v in vars(versions).values() if isinstance(v, versions.HelmChart)}
    seen = set()
    for r in resources:
        if r.type != RELEASE:
            continue
        version = str(r.inputs.get("version", ""))
        name = versions.chart_name_of(str(r.inputs.get("chart", "")), version)
        pin = pins.get(name)
        if pin is None or (name, version) in seen:
            continue
        seen.add((name, version))
        chart = versions.HelmChart(pin.name, pin.repo, version, pin.app_version)
        if name == versions.GPU_OPERATOR.name:
            try:
                supported = catalog.operator_release(version).kubernetes
                out.append(Need(f"GPU Operator {version}", f"supports Kubernetes {', '.join(supported)}",
                                minor in supported, "gpufleet/base/catalog/drivers.yaml gpu_operator_releases "
                                "(NVIDIA GPU Operator platform support)"))
            except KeyError:
                out.append(Need(f"GPU Operator {version}", "not in the catalog", None, "gpufleet/base/catalog/drivers.yaml"))
        constraint, why = _kube_version(chart, directory)
        if constraint is None:
            out.append(Need(f"chart {name} {version}", f"kubeVersion not read: {why}", None, "its Chart.yaml"))
        elif constraint:
            out.append(Need(f"chart {name} {version}", f"kubeVersion {constraint!r}", satisfies(minor, constraint),
                            f"Chart.yaml of {name}-{version}.tgz"))
    emitted = sorted({str(r.inputs.get("apiVersion")) for r in resources if r.inputs.get("apiVersion") in BUILTIN_SINCE})
    for api in emitted:
        since, source = BUILTIN_SINCE[api]
        out.append(Need(f"objects at {api}", f"served from Kubernetes {since}", _minor(minor) >= _minor(since), source))
    # The cloud's own add-ons for this minor (the platform's VersionTraits.addon_needs: EKS add-ons).
    out += [Need(*row) for row in platforms.of(spec).versions.addon_needs(spec, resources)]
    # Sorted: registrations arrive in an order that can vary between runs, and a plan must not.
    return sorted(out, key=lambda n: (n.what, n.requires))


def warnings(stack: str, spec, needs: list[Need]) -> list[Problem]:
    return [Problem(stack, "gpufleet:cluster.kubernetesVersion",
                    f"Kubernetes {spec.cluster.kubernetes_version} is not met by {n.what}: it {n.requires} ({n.source}); "
                    "move it with the cluster, or stay on a minor it supports")
            for n in needs if n.ok is False]
