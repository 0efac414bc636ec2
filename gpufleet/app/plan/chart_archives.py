"""Where the pinned Helm chart archives are on this machine (docs/validation.md, "Where the CRDs come from").

    directory = charts_dir()                       # $GPUFLEET_CHARTS_DIR, else the per-user cache
    path = find_archive(versions.KUEUE, directory)  # .../kueue-<version>.tgz, or None

The directory holds `<name>-<version>.tgz` files, as `helm pull` names them (helm/helm pkg/downloader/
chart_downloader.go DownloadTo: the file name of the chart's URL, which repositories and gpufleet's pinned archive URLs
spell `<name>-<version>.tgz`, and `<name>-<tag>.tgz` for an OCI chart). A chart version is matched with or without its leading `v`: NGC
publishes `network-operator` as v<version> while a `helm package` of the tag is <version> (../shared/reference/charts/
SOURCES.md, "a leading `v` ignored"). `gpufleet charts fetch` fills the per-user cache
($XDG_CACHE_HOME/gpufleet/charts, default ~/.cache/gpufleet/charts, as the XDG Base Directory specification says).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from gpufleet.base.versions import HelmChart, archive_file_names

# Where the archives are: the base layer's (the components read CRDs from the same archives); importable from here.
from gpufleet.base.chart_crds import CHARTS_DIR_ENV, HOW_TO_ENABLE, cache_dir, charts_dir, find_archive  # noqa: E402,F401


def file_name(chart: HelmChart, suffix: str = ".tgz") -> str:
    """The name `gpufleet charts fetch` saves a chart under: `<name>-<version><suffix>`, the version as pinned."""
    return f"{chart.name}-{chart.version}{suffix}"


def file_names(chart: HelmChart, suffix: str = ".tgz") -> tuple[str, ...]:
    """Every name the chart's archive may have: the version as pinned, without and with a leading `v`."""
    return archive_file_names(chart, suffix)


def unchecked_local_charts(stack: str, spec, resources) -> list:
    """A plan warning per chart a stack installs from a `gpufleet:registry.charts` directory whose pin records no
    sha256 (versions.HelmChart.digest; or a release of another version than its pin's, such as a stack's own
    gpuOperator.version): components/helm_chart.py local_chart hands that file to Helm as it finds it. Charts whose
    pin records a digest are checked twice (the stack spec refuses a file with another digest, and so does the
    program at `pulumi up`) and are not listed. An `oci://` chart source is the registry's to check (the plan cannot)."""
    from gpufleet.base import versions
    from gpufleet.base.spec import Problem

    directory = spec.registry.charts
    if not directory or directory.startswith("oci://"):
        return []
    pins = {v.name: (k, v) for k, v in vars(versions).items() if isinstance(v, HelmChart)}
    out, seen = [], set()
    for r in resources:
        if r.type != "kubernetes:helm.sh/v3:Release":
            continue
        version = str(r.inputs.get("version", ""))
        name = versions.chart_name_of(str(r.inputs.get("chart", "")), version)
        constant, pin = pins.get(name, (None, None))
        if (name, version) in seen or (pin is not None and pin.digest and pin.version == version):
            continue
        seen.add((name, version))
        which = f" (versions.{constant})" if pin is not None and pin.version == version else ""
        out.append(Problem(stack, "gpufleet:registry.charts",
                           f"chart {name} {version}{which}: no sha256 is recorded for this version, so its archive in "
                           f"{directory} is installed as found, unchecked: compare it with what its publisher lists "
                           "before `pulumi up`"))
    return sorted(out, key=lambda p: p.message)
