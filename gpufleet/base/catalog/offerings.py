"""Where instance and machine types are offered (aws_offerings.yaml, gcp_offerings.yaml), written by
`gpufleet catalog refresh`. A location the files do not record is unknown (None), never "not offered".

AWS is judged per region: an AZ name (us-east-1a) maps to a different physical zone in each AWS account
(only the AZ ID, use1-az1, is the same everywhere), and stacks name zones by name, so a zone-level offering
recorded with the maintainer's account would be wrong for other accounts. The refresh records AZ IDs; a
zone-level EKS check needs the stack's account's name->ID mapping (DescribeAvailabilityZones), which an
offline plan does not have. GCP zone names are global, so GKE pools are judged per zone.

GCP zones a refresh has not recorded fall back to gcp_zones.yaml, a dated hand-entered reading of where each GPU
machine type and accelerator exists, so zone checks work without a refresh. AWS has no such fallback: the
region-level list per instance type needs a current source per region and type, and the one per-region reading
found (skypilot-org/skypilot-catalog catalogs/v7/aws/vms.csv @001367d2) still carries pre-June-2025 P4 prices, too
old to refuse a region on; until a refresh records the regions, an EKS pool is not judged (never "not offered")."""

from __future__ import annotations

from typing import Optional

from gpufleet.base.catalog._files import _load


def aws_regions() -> dict[str, dict]:
    return _load("aws_offerings.yaml").get("regions") or {}


def aws_offered_in_region(instance_type: str, region: str) -> Optional[bool]:
    """True/False when the region's offering of the type is recorded, None when it is not. A refresh records the types
    it asked about as `instance_types` (offered) or `not_offered`; a type it did not ask about is unknown."""
    row = aws_regions().get(region)
    if row is None:
        return None
    if instance_type in row.get("instance_types", []):
        return True
    if "not_offered" in row and instance_type not in row["not_offered"]:
        return None
    return False


def aws_regions_offering(instance_type: str) -> list[str]:
    return sorted(r for r, row in aws_regions().items() if instance_type in row.get("instance_types", []))


def aws_offered_in_zone_id(instance_type: str, zone_id: str) -> Optional[bool]:
    """By AZ ID (use1-az1), the account-independent zone name; None when not recorded."""
    for row in aws_regions().values():
        zones = row.get("zone_ids") or {}
        if zone_id in zones:
            return instance_type in zones[zone_id]
    return None


def gcp_zones() -> dict[str, dict]:
    """Zones recorded by `gpufleet catalog refresh` (gcp_offerings.yaml)."""
    return _load("gcp_offerings.yaml").get("zones") or {}


def gcp_published() -> dict:
    """The hand-entered per-zone reading (gcp_zones.yaml): machine_types and accelerators -> zones."""
    return _load("gcp_zones.yaml")


def _refresh_lists(machine_type: str) -> bool:
    """The refresh records the machine types of the accelerator-optimized families only (refresh/gcp.py
    GPU_FAMILIES); an N1 machine type with attachable GPUs is judged by its accelerator alone."""
    return machine_type.split("-", 1)[0] in ("a2", "a3", "a4", "a4x", "g2", "g4")


def gcp_offered_in_zone(machine_type: str, zone: str, accelerator: Optional[str] = None) -> Optional[bool]:
    """Whether a zone offers the machine type (and the accelerator, when given); None when nothing records it."""
    row = gcp_zones().get(zone)
    if row is not None:
        ok = machine_type in row.get("machine_types", []) if _refresh_lists(machine_type) else True
        if ok and accelerator:
            ok = accelerator in row.get("accelerators", {})
        return ok
    published = gcp_published()
    zones = (published.get("machine_types") or {}).get(machine_type)
    if zones is None and accelerator:
        zones = (published.get("accelerators") or {}).get(accelerator)
    return None if zones is None else zone in zones


def gcp_zones_offering(machine_type: str, accelerator: Optional[str] = None) -> list[str]:
    published = gcp_published()
    candidates = set(gcp_zones()) | set((published.get("machine_types") or {}).get(machine_type) or [])
    if accelerator:
        candidates |= set((published.get("accelerators") or {}).get(accelerator) or [])
    return sorted(z for z in candidates if gcp_offered_in_zone(machine_type, z, accelerator))


def provenance(kind: str, location: str) -> str:
    """'<api or document>, <date>' of a recorded region (aws) or zone (gcp)."""
    row = (aws_regions() if kind == "aws" else gcp_zones()).get(location)
    if row is None and kind == "gcp":
        published = gcp_published()
        return f"gpufleet/base/catalog/gcp_zones.yaml, read {published.get('as_of', 'undated')}"
    row = row or {}
    return f"{row.get('source', 'catalog refresh')}, {row.get('as_of', 'undated')}"
