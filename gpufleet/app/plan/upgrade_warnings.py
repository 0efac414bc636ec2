"""Plan warnings about upgrades that would not land (docs/upgrades.md).

    warnings = crds_not_applied(stack, resources)

A release of a chart whose CRDs gpufleet applies (versions.HelmChart.crds CRDS_APPLY) that still installs its own
crds/ did so because the chart archive was not on this machine (gpufleet.components.chart_crds): the first install is
right, but a chart bump from this machine would leave the cluster's CRDs as they are. The plan says which charts and
how to fetch their archives, instead of letting the `pulumi up` warning be the only trace.
"""

from __future__ import annotations

import dataclasses

from gpufleet.base import versions
from gpufleet.base.chart_crds import HOW_TO_ENABLE, charts_dir, crd_folders
from gpufleet.base.spec import Problem

RELEASE = "kubernetes:helm.sh/v3:Release"


def _pins() -> dict[str, versions.HelmChart]:
    return {v.name: v for v in vars(versions).values() if isinstance(v, versions.HelmChart)}


def crds_not_applied(stack: str, resources) -> list[Problem]:
    pins = _pins()
    out = []
    for r in resources:
        if r.type != RELEASE or r.inputs.get("skipCrds"):
            continue
        version = str(r.inputs.get("version", ""))
        pin = pins.get(versions.chart_name_of(str(r.inputs.get("chart", "")), version))
        if pin is None or pin.crds != versions.CRDS_APPLY:
            continue
        values = r.inputs.get("values") if isinstance(r.inputs.get("values"), dict) else {}
        if not crd_folders(dataclasses.replace(pin, version=version), values):
            continue
        out.append(Problem(stack, f"resource {r.name}",
                           f"chart {pin.name} {version}: its CRDs are not applied before the release, since the "
                           f"archive is not in {charts_dir()} (docs/upgrades.md); the release installs its crds/ "
                           f"itself, which Helm does on a first install only, never on an upgrade: {HOW_TO_ENABLE}"))
    return sorted(out, key=lambda p: p.message)
