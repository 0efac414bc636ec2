"""Merge one refresh's readings into the generated catalog files already written, and say what changed.

A run reads some AWS regions (for some instance types) and some GCP regions (with some projects); everything else in
the files stays as it was (a region, a type or a zone not read this run is kept with its own date, never dropped).
- aws_offerings.yaml: per region, the membership of each type asked about (offered, not_offered, AZ IDs) is
  replaced; types not asked about keep their recorded membership.
- aws_api.yaml: per region and instance type, the row read replaces the old one (each row has its own `as_of`);
  a type the APIs did not describe keeps its old row.
- azure_api.yaml: per region and VM size, the row read replaces the old one (each row has its own `as_of`).
- gcp_offerings.yaml, gcp_api.yaml: a GCP region read replaces its zones and prices as a whole (the aggregated lists
  return every zone and machine type the project sees; the project is recorded beside them).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Optional

import yaml

from gpufleet.base.catalog._files import LOADER


def load(directory: Path, name: str) -> dict:
    path = directory / name
    if not path.exists():
        return {}
    return yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER) or {}


def _aws_offerings(old: dict, new: dict) -> dict:
    out = copy.deepcopy(old)
    for region, row in new.items():
        prev = out.get(region)
        if prev is None:
            out[region] = row
            continue
        asked = set(row.get("instance_types", [])) | set(row.get("not_offered", []))

        def kept(types: list[str]) -> set[str]:
            return {t for t in types if t not in asked}

        zones: dict[str, set[str]] = {z: kept(v) for z, v in (prev.get("zone_ids") or {}).items()}
        for z, types in (row.get("zone_ids") or {}).items():
            zones.setdefault(z, set()).update(types)
        out[region] = {
            "source": row["source"], "as_of": row["as_of"],
            "instance_types": sorted(kept(prev.get("instance_types", [])) | set(row.get("instance_types", []))),
            "not_offered": sorted(kept(prev.get("not_offered", [])) | set(row.get("not_offered", []))),
            "zone_ids": {z: sorted(v) for z, v in sorted(zones.items()) if v},
        }
    return dict(sorted(out.items()))


def _aws_api(old: dict, new: dict) -> dict:
    out = copy.deepcopy(old)
    for region, row in new.items():
        prev = out.get(region) or {}
        types = dict(prev.get("instance_types") or {})
        types.update(row.get("instance_types") or {})
        out[region] = {"provenance": row["provenance"], "instance_types": dict(sorted(types.items()))}
    return dict(sorted(out.items()))


def _azure_api(old: dict, new: dict) -> dict:
    out = copy.deepcopy(old)
    for region, row in new.items():
        vms = dict((out.get(region) or {}).get("vms") or {})
        vms.update(row.get("vms") or {})
        out[region] = {"provenance": row["provenance"], "vms": dict(sorted(vms.items()))}
    return dict(sorted(out.items()))


def _gcp_zones(old: dict, new: dict, regions: set[str]) -> dict:
    out = {z: row for z, row in old.items() if z.rsplit("-", 1)[0] not in regions}
    out.update(new)
    return dict(sorted(out.items()))


def _gcp_api(old: dict, new: dict) -> dict:
    return dict(sorted({**old, **new}.items()))


def merge(files: dict[str, dict], read: dict[str, list[str]], directory: Path) -> tuple[dict[str, dict], list[str], list[str]]:
    """(merged files, what changed, what was kept without being read) for the readings in `files`."""
    merged, old_files = {}, {}
    for name, data in files.items():
        old = load(directory, name)
        old_files[name] = old
        key = "zones" if name == "gcp_offerings.yaml" else "regions"
        before, now = old.get(key) or {}, data.get(key) or {}
        if name == "aws_offerings.yaml":
            after = _aws_offerings(before, now)
        elif name == "aws_api.yaml":
            after = _aws_api(before, now)
        elif name == "azure_api.yaml":
            after = _azure_api(before, now)
        elif name == "gcp_offerings.yaml":
            after = _gcp_zones(before, now, set(read.get("gcp", [])))
        else:
            after = _gcp_api(before, now)
        merged[name] = {**data, key: after}
    changes = summary(old_files, merged)
    kept = []
    for cloud, name in (("aws", "aws_api.yaml"), ("gcp", "gcp_api.yaml"), ("azure", "azure_api.yaml")):
        if name in old_files:
            left = sorted(set((old_files[name].get("regions") or {})) - set(read.get(cloud, [])))
            if left:
                kept.append(f"{cloud}: {', '.join(left)} (as recorded before)")
    return merged, changes, kept


# --- what changed ------------------------------------------------------------------------------------------------

def _price(x: Any) -> Optional[float]:
    if isinstance(x, dict):
        x = x.get("median")
    return None if x is None else float(x)


def _moved(what: str, old: Optional[float], new: Optional[float]) -> Optional[str]:
    if old == new:
        return None
    if old is None:
        return f"{what}: new price {new}"
    if new is None:
        return f"{what}: no price any more (was {old})"
    return f"{what}: {old} -> {new} ({(new - old) / old * 100:+.1f} %)" if old else f"{what}: {old} -> {new}"


def _listed(what: str, old: set, new: set) -> list[str]:
    out = []
    if new - old:
        out.append(f"{what} now: {', '.join(sorted(new - old))}")
    if old - new:
        out.append(f"{what} no longer: {', '.join(sorted(old - new))}")
    return out


def summary(old: dict[str, dict], new: dict[str, dict]) -> list[str]:
    """Readable lines: offerings gained and lost, prices new, moved or gone, per region/zone."""
    out: list[str] = []
    if "aws_offerings.yaml" in new:
        before = old.get("aws_offerings.yaml", {}).get("regions") or {}
        for region, row in (new["aws_offerings.yaml"].get("regions") or {}).items():
            prev = before.get(region)
            if prev is None:
                out.append(f"aws {region}: offerings recorded for the first time ({len(row.get('instance_types', []))} "
                           f"types offered, {len(row.get('not_offered', []))} not)")
                continue
            out += [f"aws {region}: {line}" for line in
                    _listed("offered", set(prev.get("instance_types", [])), set(row.get("instance_types", [])))]
    if "aws_api.yaml" in new:
        before = old.get("aws_api.yaml", {}).get("regions") or {}
        for region, row in (new["aws_api.yaml"].get("regions") or {}).items():
            prev = (before.get(region) or {}).get("instance_types") or {}
            for name, facts in (row.get("instance_types") or {}).items():
                was = prev.get(name) or {}
                for key, label in (("on_demand", "on-demand"), ("spot", "spot median")):
                    line = _moved(f"aws {region} {name} {label}", _price(was.get(key)), _price(facts.get(key)))
                    if line:
                        out.append(line)
    if "azure_api.yaml" in new:
        before = old.get("azure_api.yaml", {}).get("regions") or {}
        for region, row in (new["azure_api.yaml"].get("regions") or {}).items():
            prev = (before.get(region) or {}).get("vms") or {}
            for name, facts in (row.get("vms") or {}).items():
                for key, label in (("on_demand", "pay-as-you-go"), ("spot", "spot")):
                    line = _moved(f"azure {region} {name} {label}", _price((prev.get(name) or {}).get(key)), _price(facts.get(key)))
                    if line:
                        out.append(line)
    if "gcp_offerings.yaml" in new:
        before = old.get("gcp_offerings.yaml", {}).get("zones") or {}
        after = new["gcp_offerings.yaml"].get("zones") or {}
        for zone, row in after.items():
            prev = before.get(zone)
            if prev is None:
                out.append(f"gcp {zone}: offerings recorded for the first time ({len(row.get('machine_types', []))} "
                           f"GPU machine types, {len(row.get('accelerators', {}))} accelerators)")
                continue
            out += [f"gcp {zone}: {line}" for line in
                    _listed("machine types", set(prev.get("machine_types", [])), set(row.get("machine_types", [])))
                    + _listed("accelerators", set(prev.get("accelerators", {})), set(row.get("accelerators", {})))]
        out += [f"gcp {zone}: no GPU machine or accelerator type listed any more" for zone in before if zone not in after]
    if "gcp_api.yaml" in new:
        before = old.get("gcp_api.yaml", {}).get("regions") or {}
        for region, row in (new["gcp_api.yaml"].get("regions") or {}).items():
            prev = (before.get(region) or {}).get("gpu_prices") or {}
            prices = row.get("gpu_prices") or {}
            for accelerator in sorted(set(prev) | set(prices)):
                for option in ("on-demand", "spot"):
                    line = _moved(f"gcp {region} {accelerator} {option} per GPU", (prev.get(accelerator) or {}).get(option),
                                  (prices.get(accelerator) or {}).get(option))
                    if line:
                        out.append(line)
    return out
