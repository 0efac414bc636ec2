"""Where instance and machine types are offered (aws_offerings.yaml, gcp_offerings.yaml), written by
`gpufleet catalog refresh`. A location the files do not record is unknown (None), never "not offered".

AWS is judged per region: an AZ name (us-east-1a) maps to a different physical zone in each AWS account
(only the AZ ID, use1-az1, is the same everywhere), and stacks name zones by name, so a zone-level offering
recorded with the maintainer's account would be wrong for other accounts. The refresh records AZ IDs; a
zone-level EKS check needs the stack's account's name->ID mapping (DescribeAvailabilityZones), which an
offline plan does not have. GCP zone names are global, so GKE pools are judged per zone."""

from __future__ import annotations

from typing import Optional

from gpufleet.catalog._files import _load


def aws_regions() -> dict[str, dict]:
    return _load("aws_offerings.yaml").get("regions") or {}


def aws_offered_in_region(instance_type: str, region: str) -> Optional[bool]:
    """True/False when the region's offerings are recorded, None when they are not."""
    row = aws_regions().get(region)
    if row is None:
        return None
    return instance_type in row.get("instance_types", [])


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
    return _load("gcp_offerings.yaml").get("zones") or {}


def gcp_offered_in_zone(machine_type: str, zone: str, accelerator: Optional[str] = None) -> Optional[bool]:
    """Whether a zone offers the machine type (and the accelerator, when given); None when not recorded."""
    row = gcp_zones().get(zone)
    if row is None:
        return None
    ok = machine_type in row.get("machine_types", [])
    if ok and accelerator:
        ok = accelerator in row.get("accelerators", {})
    return ok


def gcp_zones_offering(machine_type: str, accelerator: Optional[str] = None) -> list[str]:
    return sorted(z for z in gcp_zones() if gcp_offered_in_zone(machine_type, z, accelerator))


def provenance(kind: str, location: str) -> str:
    """'<api>, <date>' of a recorded region (aws) or zone (gcp)."""
    row = (aws_regions() if kind == "aws" else gcp_zones()).get(location) or {}
    return f"{row.get('source', 'catalog refresh')}, {row.get('as_of', 'undated')}"
