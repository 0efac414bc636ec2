"""Plan warnings about upgrades that would not land (docs/upgrades.md).

    warnings = crds_not_applied(stack, resources)

A release of a chart whose CRDs gpufleet applies (versions.HelmChart.crds CRDS_APPLY) that still installs its own
crds/ did so because the chart archive was not on this machine (gpufleet.components.chart_crds): the first install is
right, but a chart bump from this machine would leave the cluster's CRDs as they are. The plan says which charts and
how to fetch their archives, instead of letting the `pulumi up` warning be the only trace.

    warnings = crds_deleted_on_uninstall(stack, resources)

A chart whose own uninstall hook deletes the CRDs gpufleet applies and keeps on delete (versions.HelmChart
crds_deleted_on_uninstall: no value turns it off, and Pulumi's Release runs every hook on delete): the plan names the
release and its CRD group, which the tree marks retained on delete, so `pulumi destroy` is not read as keeping them.
"""

from __future__ import annotations

import dataclasses

from gpufleet.base import versions
from gpufleet.base.chart_crds import HOW_TO_ENABLE, charts_dir, crd_folders
from gpufleet.base.spec import Problem

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_GROUP = "kubernetes:yaml/v2:ConfigGroup"


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


def crds_deleted_on_uninstall(stack: str, resources) -> list[Problem]:
    pins = _pins()
    groups = {r.urn: r for r in resources if r.type == CONFIG_GROUP and r.retain_on_delete}
    out = []
    for r in resources:
        if r.type != RELEASE:
            continue
        version = str(r.inputs.get("version", ""))
        pin = pins.get(versions.chart_name_of(str(r.inputs.get("chart", "")), version))
        # The chart's own CRD group: `<name>-crds` beside its `<name>-release` (components/helm_chart.py).
        own = r.name.removesuffix("-release") + "-crds"
        kept = [groups[u].name for u in r.dependencies if u in groups and groups[u].name == own]
        if pin is None or not pin.crds_deleted_on_uninstall or not kept:
            continue
        out.append(Problem(stack, f"resource {r.name}",
                           f"chart {pin.name} {version}: uninstalling this release (`pulumi destroy`, or a stack that "
                           f"no longer installs it) runs the chart's own hook {pin.crds_deleted_on_uninstall}, which "
                           f"deletes the CRDs of {', '.join(kept)} that gpufleet keeps on delete, and with them every "
                           f"object of their kinds; no value turns it off and Pulumi's Release runs it (how to keep "
                           f"them: docs/upgrades.md, \"What `pulumi destroy` deletes\")"))
    return sorted(out, key=lambda p: p.message)
