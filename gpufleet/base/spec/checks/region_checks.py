"""Region, zone and ARN consistency: everything a stack places must be in the stack's region.

EKS: the region is `aws:region`. An availability zone name is its region plus one letter (us-east-1a; EC2 User
Guide, "Regions and Zones": "the code for Availability Zone is its Region code followed by a letter identifier"),
and a KMS key ARN names its region (arn:aws:kms:<region>:<account>:key/<id>); EKS can only use a KMS key in the
cluster's region (EKS User Guide, "Encrypt Kubernetes secrets with KMS": "The KMS key must be ... in the same
Region as the cluster").
GKE: the region is cluster.gke.region. A zone name is its region plus '-<letter>' (us-central1-a); a cluster's node
locations and a node pool's locations must be zones of the cluster's region (GKE API NodePool.locations), and an
existing subnetwork given as a self link names its region (.../regions/<region>/subnetworks/<name>).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
_SUBNET_REGION = re.compile(r"/regions/([a-z0-9-]+)/subnetworks/")


def aws_zone_region(zone: str) -> str:
    return zone[:-1]


def gcp_zone_region(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    if spec.cluster.platform == "eks":
        return _eks(stack, spec, config.get("aws:region"))
    if spec.cluster.platform == "gke":
        return _gke(stack, spec)
    return []


def _eks(stack: str, spec: Any, region: Optional[str]) -> list[Problem]:
    if not region:
        return []  # eks_checks reports the missing aws:region
    eks = spec.cluster.eks
    problems = []

    def zone(path: str, value: Optional[str]) -> None:
        if value and aws_zone_region(value) != region:
            problems.append(Problem(stack, path, f"not an availability zone of aws:region {region} (zones there are "
                                    f"{region}a, {region}b, ...)", value))

    for i, z in enumerate(eks.network.availability_zones):
        zone(f"{NS}:cluster.eks.network.availabilityZones[{i}]", z)
    for i, s in enumerate(eks.network.subnets):
        zone(f"{NS}:cluster.eks.network.subnets[{i}].availabilityZone", s.availability_zone)
    for i, pool in enumerate(spec.node_pools):
        zone(f"{NS}:nodePools[{i}].availabilityZone", pool.availability_zone)
    if eks.storage.fsx_lustre:
        zone(f"{NS}:cluster.eks.storage.fsxLustre.availabilityZone", eks.storage.fsx_lustre.availability_zone)
    if eks.kms_key_arn:
        key_region = eks.kms_key_arn.split(":")[3]
        if key_region != region:
            problems.append(Problem(stack, f"{NS}:cluster.eks.kmsKeyArn", f"the key is in {key_region}, but EKS can only use a "
                                    f"KMS key in the cluster's region (aws:region {region})", eks.kms_key_arn))
    return problems


def _gke(stack: str, spec: Any) -> list[Problem]:
    gke = spec.cluster.gke
    if gke is None:
        return []
    region = gke.region
    problems = []

    def zone(path: str, value: Optional[str]) -> None:
        if value and gcp_zone_region(value) != region:
            problems.append(Problem(stack, path, f"not a zone of the cluster's region {region} (cluster.gke.region; zones "
                                    f"there are {region}-a, {region}-b, ...)", value))

    zone(f"{NS}:cluster.gke.zone", gke.zone)
    for i, z in enumerate(gke.node_zones):
        zone(f"{NS}:cluster.gke.nodeZones[{i}]", z)
    for i, pool in enumerate(spec.node_pools):
        for j, z in enumerate((pool.gke.zones if pool.gke else [])):
            zone(f"{NS}:nodePools[{i}].gke.zones[{j}]", z)
    existing = gke.network.existing
    if existing is not None:
        found = _SUBNET_REGION.search(existing.subnetwork)
        if found and found.group(1) != region:
            problems.append(Problem(stack, f"{NS}:cluster.gke.network.existing.subnetwork", f"the subnetwork is in "
                                    f"{found.group(1)}, but a GKE cluster's subnetwork must be in its region {region}",
                                    existing.subnetwork))
    return problems
