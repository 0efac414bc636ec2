"""Region, zone and ARN consistency: everything a stack places must be in the stack's region. Each platform checks
its own (KeyTraits.checks: gpufleet/base/spec/platforms/eks_limits.py, gke_limits.py); here how a zone's name gives
its region.

AWS: an availability zone name is its region plus one letter (us-east-1a; EC2 User Guide, "Regions and Zones": "the
code for Availability Zone is its Region code followed by a letter identifier").
GCP: a zone name is its region plus '-<letter>' (us-central1-a).
"""

from __future__ import annotations


def aws_zone_region(zone: str) -> str:
    return zone[:-1]


def gcp_zone_region(zone: str) -> str:
    return zone.rsplit("-", 1)[0]
