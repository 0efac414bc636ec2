"""A pinned chart's `crds/`, applied by gpufleet as their own resource before the chart's release (docs/upgrades.md).

    crds = applied_crds("dev-jobset", versions.JOBSET, values, access, parent=self)
    # [ConfigGroup `dev-jobset-crds`] holding the archive's CRDs; the release then installs with skip_crds

Helm installs a chart's `crds/` only on the release's first install and never upgrades them
(helm.sh/docs/chart_best_practices/custom_resource_definitions, "Some caveats and explanations"), so a chart bump left
the old schemas in the cluster. For a pin whose HelmChart.crds is CRDS_APPLY, every CRD file of its `crd_dirs` (a
subchart's only when its condition is on in the release's values, as Helm decides) is read from the very archive Helm
installs (gpufleet.base.chart_crds, within gpufleet.base.limits) and applied as one `kubernetes:yaml/v2:ConfigGroup`:
server-side apply (the Kubernetes provider's default since v4, which upserts a CRD Helm created earlier), each CRD
annotated `pulumi.com/patchForce` so the fields Helm's field manager set on the first install are taken over instead
of conflicting (pulumi.com/registry/packages/kubernetes/how-to-guides/managing-resources-with-server-side-apply). The
release depends on the group, and everything that depends on the release (gpufleet's NodePools, ComputeDomains, ...)
comes after the CRDs too.

The archive is found where the release's chart is (gpufleet:registry.charts, a directory) or in the charts directory
(`gpufleet charts fetch` fills it; $GPUFLEET_CHARTS_DIR). Without it the release installs its own crds/ as before
(right on a first install, stale after a bump) and the program says so: a Pulumi warning at `pulumi up`, a plan warning
naming the chart and how to fetch it (gpufleet.app.plan.upgrade_warnings). An archive that is there but unreadable or
over a limit stops the program (pulumi.RunError, no traceback): it is not the file Helm would install.
"""

from __future__ import annotations

import functools
import io
import tarfile
import zlib
from pathlib import Path
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s
import yaml

from gpufleet.base import chart_crds
from gpufleet.base.chart_crds import crd_folders  # noqa: F401 (importable from here)
from gpufleet.base.versions import CRDS_APPLY, HelmChart

# Server-side apply takes over fields another manager (Helm, on the first install of crds/) set, instead of failing.
PATCH_FORCE = "pulumi.com/patchForce"


def archive_places(chart_source: Optional[str]) -> list[Path]:
    """Where a release's chart archive is looked for: its local chart directory (gpufleet:registry.charts), then the
    charts directory."""
    places = [Path(chart_source)] if chart_source and not chart_source.startswith("oci://") else []
    return [*places, chart_crds.charts_dir()]


def archive_of(chart: HelmChart, chart_source: Optional[str]) -> Optional[Path]:
    """The chart's archive in the first of archive_places that has it, or None."""
    for place in archive_places(chart_source):
        found = chart_crds.find_archive(chart, place)
        if found is not None:
            return found
    return None


class _Frame:
    __slots__ = ("mapping", "path", "expect_key", "key")

    def __init__(self, mapping: bool, path: tuple):
        self.mapping, self.path, self.expect_key, self.key = mapping, path, True, None


def force_annotated(text: str, where: str = "") -> str:
    """`text`, a stream of CustomResourceDefinitions, with `pulumi.com/patchForce: "true"` added to each document's
    metadata.annotations, as lines inserted where libyaml's events place the block mappings (the text is never
    re-dumped: what is applied is the archive's file plus those lines). ArchiveRefused for a document that is not a
    CRD, or whose metadata or annotations are not block mappings (no chart gpufleet pins writes them otherwise)."""
    inserts: list[tuple[int, str]] = []
    stack: list[_Frame] = []
    doc: dict = {}
    for ev in yaml.parse(io.StringIO(text), Loader=chart_crds._Loader):
        if isinstance(ev, yaml.DocumentStartEvent):
            doc = {"kind": None, "meta": None, "ann": None, "ann_seen": False, "line": ev.start_mark.line + 1}
            continue
        if isinstance(ev, yaml.DocumentEndEvent):
            if doc.get("kind") is None and doc.get("meta") is None:
                continue  # an empty document (a file's leading or trailing `---`)
            if doc["kind"] != "CustomResourceDefinition":
                raise chart_crds.ArchiveRefused(f"{where}: the document at line {doc['line']} is a {doc['kind']!r}, "
                                                "not a CustomResourceDefinition")
            line = f'{PATCH_FORCE}: "true"\n'
            if doc["ann"] is not None:
                inserts.append((doc["ann"][0], " " * doc["ann"][1] + line))
            elif doc["ann_seen"] or doc["meta"] is None:
                raise chart_crds.ArchiveRefused(f"{where}: the CRD at line {doc['line']} has no block metadata."
                                                "annotations or metadata gpufleet can add an annotation to")
            else:
                row, col = doc["meta"]
                inserts.append((row, " " * col + "annotations:\n" + " " * (col + 2) + line))
            continue
        if isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            stack.pop()
            continue
        if not isinstance(ev, (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent, yaml.AliasEvent)):
            continue
        frame = stack[-1] if stack else None
        if frame is not None and frame.mapping and frame.expect_key:
            frame.key, frame.expect_key = getattr(ev, "value", None), False
            at = (ev.start_mark.line, ev.start_mark.column)
            if frame.path == ("metadata",) and doc["meta"] is None:
                doc["meta"] = at
            elif frame.path == ("metadata", "annotations") and doc["ann"] is None:
                doc["ann"] = at
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                stack.append(_Frame(isinstance(ev, yaml.MappingStartEvent), frame.path + ("?",)))
            continue
        path = () if frame is None else frame.path + ((frame.key,) if frame.mapping else ("[]",))
        if frame is not None and frame.mapping:
            frame.expect_key = True
        if isinstance(ev, yaml.ScalarEvent) and path == ("kind",):
            doc["kind"] = ev.value
        if isinstance(ev, yaml.MappingStartEvent):
            if path == ("metadata", "annotations"):
                doc["ann_seen"] = True
            if path in (("metadata",), ("metadata", "annotations")) and ev.flow_style:
                doc["meta"] = doc["ann"] = None
                doc["ann_seen"] = True  # refused above: a flow mapping cannot take a line
            stack.append(_Frame(True, path))
        elif isinstance(ev, yaml.SequenceStartEvent):
            stack.append(_Frame(False, path))
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    for row, added in sorted(inserts, reverse=True):
        lines.insert(row, added)
    return "".join(lines)


def read_chart_crds(chart: HelmChart, values: dict, chart_source: Optional[str] = None) -> Optional[str]:
    """The CRDs gpufleet applies for this release, as one YAML stream: each file of the chart's crd_folders in archive
    order, with the patchForce annotation added (force_annotated); "" when none applies, None without the archive."""
    folders = crd_folders(chart, values)
    if not folders:
        return ""
    archive = archive_of(chart, chart_source)
    if archive is None:
        return None
    try:
        stat = archive.stat()
        return _annotated_stream(str(archive), (stat.st_size, stat.st_mtime_ns), folders)
    except chart_crds.ArchiveRefused as exc:
        reason = str(exc)
    except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        reason = chart_crds.one_line(exc)
    raise pulumi.RunError(f"chart archive {archive} cannot be read ({reason}): fetch it again (`gpufleet charts fetch`)")


@functools.lru_cache(maxsize=16)
def _annotated_stream(archive: str, stamp: tuple[int, int], folders: tuple[str, ...]) -> str:
    """read_chart_crds' stream of one archive's folders, read once per process for each (size, mtime) of the file:
    checking the limits and annotating kube-prometheus-stack's megabytes of CRDs took most of a plan's time, and a
    process that plans many stacks (fleet plans, the tests) would redo it for every plan. A refusal is not cached."""
    texts = []
    for member, text, _ in chart_crds.read_texts(archive, dirs=folders):
        try:
            chart_crds.check_yaml_limits(text)
            texts.append(force_annotated(text, member))
        except yaml.YAMLError as exc:
            raise chart_crds.ArchiveRefused(f"{member} is not valid YAML: {chart_crds.one_line(exc)}") from None
    return "---\n".join(texts)


def applied_crds(name: str, chart: HelmChart, values: dict, access: Any, parent: pulumi.Resource,
                 chart_source: Optional[str] = None) -> Optional[list[pulumi.Resource]]:
    """`<name>-crds`, a ConfigGroup of the CRDs of a CRDS_APPLY chart (none for other charts), a child of `parent` on
    the cluster's provider, after the cluster is ready. None when the archive is not on this machine (a Pulumi warning
    says so): the release then installs its crds/ itself. One YAML input per chart rather than one resource per CRD:
    the CRDs of kube-prometheus-stack alone are megabytes of schema, which as nested inputs took seconds to plan."""
    if chart.crds != CRDS_APPLY:
        return []
    stream = read_chart_crds(chart, values, chart_source)
    if stream is None:
        pulumi.log.warn(
            f"chart {chart.name} {chart.version}: its CRDs are not applied before the release (docs/upgrades.md): "
            f"{chart.name}-{chart.version}.tgz is not in {', '.join(str(p) for p in archive_places(chart_source))}; "
            f"Helm installs its crds/ only on a first install, never on an upgrade: {chart_crds.HOW_TO_ENABLE}",
            resource=parent)
        return None
    if not stream:
        return []
    # Never deleted with the group (a plan made without the archive drops it; a chart removed from the stack too):
    # deleting a CRD deletes every object of its kinds, and Helm never deletes crds/ either. retainOnDelete on a
    # component propagates to its child resources (pulumi.com/docs/iac/concepts/resources/options/retainondelete).
    opts = pulumi.ResourceOptions(parent=parent, provider=access.provider, depends_on=list(access.ready or []),
                                  retain_on_delete=True)
    return [k8s.yaml.v2.ConfigGroup(f"{name}-crds", yaml=stream, opts=opts)]
