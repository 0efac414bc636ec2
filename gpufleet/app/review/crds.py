"""What a chart bump changes in the cluster's CRDs, for the review of two plans (issue 51, docs/upgrades.md).

    changes, notes = crd_changes(base_plan, head_plan, charts_dir())

Per CRD of a release whose chart version changes: the served versions added and removed, the storage version before
and after, whether the schema changed, and how the CRD reaches the cluster (gpufleet applies it before the release,
or Helm upgrades it as a template). The CRDs come from the plans themselves where gpufleet applies them (the
`<release>-crds` ConfigGroup, components/chart_crds.py), else from the two chart archives in the charts directory
(a note says when one is not there). A served version that goes away names the objects of the base plan written at it
and the storage migration to run: the API server keeps serving stored objects only through versions the CRD still
lists, and a version leaves a CRD only once it is gone from `status.storedVersions`
(kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning, "Upgrade existing
objects to a new stored version").
"""

from __future__ import annotations

import dataclasses
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

from gpufleet.base import chart_crds, versions

RELEASE = "kubernetes:helm.sh/v3:Release"
GROUP = "kubernetes:yaml/v2:ConfigGroup"
HOW = {
    versions.CRDS_APPLY: "applied by gpufleet before the release",
    versions.CRDS_TEMPLATES: "a template of the chart: Helm upgrades it with the release",
    versions.CRDS_INSTALL_ONLY: "NOT upgraded: Helm installs crds/ on a first install only (docs/upgrades.md)",
}
MIGRATION_DOC = ("kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/"
                 "#upgrade-existing-objects-to-a-new-stored-version")


@dataclass(frozen=True)
class CrdChange:
    crd: str
    """The CRD's name, `<plural>.<group>`."""
    release: str
    """The release resource whose chart ships it (`dev-jobset-release`)."""
    chart: str
    """`<chart> <base version> -> <head version>`."""
    how: str
    state: str
    """new | removed | changed | unchanged"""
    served_before: tuple[str, ...] = ()
    served_after: tuple[str, ...] = ()
    storage_before: Optional[str] = None
    storage_after: Optional[str] = None
    schema_changed: bool = False
    objects_at_removed: tuple[str, ...] = ()
    """Objects of the base plan written at a version the head's CRD no longer serves (`ClusterQueue 'a' at v1beta1`)."""

    @property
    def added(self) -> tuple[str, ...]:
        return tuple(v for v in self.served_after if v not in self.served_before)

    @property
    def removed(self) -> tuple[str, ...]:
        return tuple(v for v in self.served_before if v not in self.served_after) if self.state == "changed" else ()

    @property
    def migration(self) -> Optional[str]:
        """The storage migration to run before the bump, when a served version goes away or the storage moves."""
        if self.state != "changed" or not (self.removed or self.storage_before != self.storage_after):
            return None
        old = ", ".join(v for v in (*self.removed, self.storage_before) if v and v != self.storage_after)
        return (f"rewrite every {self.crd} object at the storage version {self.storage_after} "
                f"(`kubectl get {self.crd} -A -o json | kubectl replace -f -`, or the storage version migrator), then "
                f"remove {old or 'the old versions'} from the CRD's status.storedVersions ({MIGRATION_DOC})")

    def to_json(self) -> dict:
        return {"crd": self.crd, "release": self.release, "chart": self.chart, "how": self.how, "state": self.state,
                "servedBefore": list(self.served_before), "servedAfter": list(self.served_after),
                "servedAdded": list(self.added), "servedRemoved": list(self.removed),
                "storageBefore": self.storage_before, "storageAfter": self.storage_after,
                "schemaChanged": self.schema_changed, "objectsAtRemovedVersions": list(self.objects_at_removed),
                "migration": self.migration}

    def line(self) -> str:
        if self.state == "new":
            return (f"{self.crd} ({self.chart}): new CRD, serves {', '.join(self.served_after) or 'nothing'}, "
                    f"storage {self.storage_after}; {self.how}")
        if self.state == "removed":
            return f"{self.crd} ({self.chart}): no longer shipped by the chart; the cluster keeps it (nothing deletes it)"
        parts = []
        if self.added:
            parts.append(f"serves {', '.join(self.added)} (added)")
        if self.removed:
            parts.append(f"stops serving {', '.join(self.removed)}")
        if self.storage_before != self.storage_after:
            parts.append(f"storage {self.storage_before} -> {self.storage_after}")
        else:
            parts.append(f"storage {self.storage_after}")
        parts.append("schema changed" if self.schema_changed else "schema unchanged")
        out = f"{self.crd} ({self.chart}): {'; '.join(parts)}; {self.how}"
        if self.objects_at_removed:
            out += f"; written at a removed version in the base: {', '.join(self.objects_at_removed)}"
        if self.migration:
            out += f". Before the bump: {self.migration}"
        return out


def _pins() -> dict[str, versions.HelmChart]:
    return {v.name: v for v in vars(versions).values() if isinstance(v, versions.HelmChart)}


def _releases(plan: dict) -> dict[str, tuple[versions.HelmChart, dict]]:
    """Release resource name -> (its pin at the plan's version, its values), for pinned charts."""
    pins, out = _pins(), {}
    for r in plan.get("resources") or []:
        if not isinstance(r, dict) or r.get("type") != RELEASE:
            continue
        inputs = r.get("inputs") if isinstance(r.get("inputs"), dict) else {}
        version = str(inputs.get("version", ""))
        pin = pins.get(versions.chart_name_of(str(inputs.get("chart", "")), version))
        if pin is not None:
            values = inputs.get("values") if isinstance(inputs.get("values"), dict) else {}
            out[str(r.get("name"))] = (dataclasses.replace(pin, version=version), values)
    return out


def _applied(plan: dict) -> dict[str, str]:
    """Release resource name -> the YAML of the CRDs gpufleet applies before it (the `<name>-crds` ConfigGroup)."""
    out = {}
    for r in plan.get("resources") or []:
        if isinstance(r, dict) and r.get("type") == GROUP and str(r.get("name", "")).endswith("-crds"):
            text = (r.get("inputs") or {}).get("yaml")
            if isinstance(text, str):
                out[str(r["name"])[: -len("-crds")] + "-release"] = text
    return out


def _from_archive(pin: versions.HelmChart, values: dict, directory: Path) -> tuple[Optional[list[dict]], str]:
    """The CRDs of a templated chart, read from its archive (every file of its crd_dirs, as templates); (None, why)
    when the archive is not there or cannot be read."""
    archive = chart_crds.find_archive(pin, directory)
    if archive is None:
        return None, f"{pin.name}-{pin.version}.tgz is not in {directory}: {chart_crds.HOW_TO_ENABLE}"
    try:
        out = []
        for member, text, _ in chart_crds.read_texts(str(archive), dirs=chart_crds.crd_folders(pin, values)):
            out += chart_crds.crd_documents(text, helm_template=True)
        return out, ""
    except (chart_crds.ArchiveRefused, yaml.YAMLError, OSError, EOFError, tarfile.TarError, zlib.error) as exc:
        return None, f"{archive} cannot be read ({chart_crds.one_line(exc)})"


def _crds(plan: dict, release: str, pin: versions.HelmChart, values: dict, directory: Path) -> tuple[Optional[dict], str]:
    applied = _applied(plan).get(release)
    if applied is None and pin.crds == versions.CRDS_APPLY and chart_crds.crd_folders(pin, values):
        return None, (f"the plan holds no CRDs of chart {pin.name} {pin.version}: its archive was not on the machine "
                      f"that planned it ({chart_crds.HOW_TO_ENABLE})")
    if applied is not None:
        try:
            docs = chart_crds.crd_documents(applied)
        except (chart_crds.ArchiveRefused, yaml.YAMLError) as exc:
            return None, f"the plan's CRDs of {release} cannot be read ({chart_crds.one_line(exc)})"
    elif pin.crds == versions.CRDS_TEMPLATES:
        docs, why = _from_archive(pin, values, directory)
        if docs is None:
            return None, why
    else:
        return {}, ""
    return {str((d.get("metadata") or {}).get("name")): d for d in docs if isinstance(d, dict)}, ""


def _objects_at(plan: dict, group: str, kind: str, version: str) -> list[str]:
    out = []
    for r in plan.get("resources") or []:
        inputs = r.get("inputs") if isinstance(r, dict) and isinstance(r.get("inputs"), dict) else {}
        if inputs.get("apiVersion") == f"{group}/{version}" and inputs.get("kind") == kind:
            name = (inputs.get("metadata") or {}).get("name") or r.get("name")
            out.append(f"{kind} '{name}' at {version}")
    return sorted(out)


def crd_changes(base: dict, head: dict, directory: Path) -> tuple[list[CrdChange], list[str]]:
    """The CRD changes of every release whose chart version differs between the plans, and notes on what could not be
    compared."""
    before, after = _releases(base), _releases(head)
    out: list[CrdChange] = []
    notes: list[str] = []
    for release in sorted(set(before) & set(after)):
        (old_pin, old_values), (new_pin, new_values) = before[release], after[release]
        if old_pin.version == new_pin.version:
            continue
        chart = f"{new_pin.name} {old_pin.version} -> {new_pin.version}"
        old, why_old = _crds(base, release, old_pin, old_values, directory)
        new, why_new = _crds(head, release, new_pin, new_values, directory)
        if old is None or new is None:
            notes.append(f"{release} ({chart}): CRDs not compared: {why_old or why_new}")
            continue
        how = HOW.get(new_pin.crds, "")
        for name in sorted(set(old) | set(new)):
            a, b = old.get(name), new.get(name)
            if a is None:
                out.append(CrdChange(name, release, chart, how, "new", served_after=chart_crds.served_versions(b),
                                     storage_after=chart_crds.storage_version(b)))
                continue
            if b is None:
                out.append(CrdChange(name, release, chart, how, "removed", served_before=chart_crds.served_versions(a),
                                     storage_before=chart_crds.storage_version(a)))
                continue
            served_a, served_b = chart_crds.served_versions(a), chart_crds.served_versions(b)
            spec_a, spec_b = a.get("spec") or {}, b.get("spec") or {}
            removed = [v for v in served_a if v not in served_b]
            group, kind = spec_b.get("group", ""), (spec_b.get("names") or {}).get("kind", "")
            stale = tuple(o for v in removed for o in _objects_at(base, group, kind, v))
            change = CrdChange(name, release, chart, how, "changed", served_a, served_b, chart_crds.storage_version(a),
                               chart_crds.storage_version(b), spec_a != spec_b, stale)
            out.append(change if (change.schema_changed or change.added or change.removed
                                  or change.storage_before != change.storage_after)
                       else dataclasses.replace(change, state="unchanged"))
    return [c for c in out if c.state != "unchanged"], notes


def text_lines(changes: list[CrdChange], notes: list[str]) -> list[str]:
    """The review's "CRD changes" section, one line per CRD (text and markdown share it)."""
    return [c.line() for c in changes] + notes
