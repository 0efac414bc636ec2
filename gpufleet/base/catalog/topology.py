"""Topology Aware Scheduling facts (gpufleet/base/catalog/topology.yaml): the node labels each platform gives a GPU
machine, coarsest first, and the Kueue release that schedules by them. Each fact carries its sources."""

from __future__ import annotations

from typing import Optional

from gpufleet.base.catalog._files import _load


def data() -> dict:
    return _load("topology.yaml")


def sources() -> dict[str, str]:
    return dict(data()["sources"])


def eks_layers(instance_type: str) -> Optional[int]:
    """How many `topology.k8s.aws/network-node-layer-N` labels EKS nodes of this type carry (None: no topology)."""
    d = data()["eks_layers"]
    if instance_type in d["types4"]:
        return 4
    if instance_type in d["types3"] or instance_type.split(".")[0] in d["families3"]:
        return 3
    return None


def eks_levels(layers: int) -> list[str]:
    return [f"{data()['eks_layers']['prefix']}{n}" for n in range(1, layers + 1)]


def eks_supported() -> list[str]:
    d = data()["eks_layers"]
    return [f"{f}.*" for f in d["families3"]] + list(d["types3"]) + list(d["types4"])


def gke_family(machine_type: str) -> str:
    return machine_type.rsplit("-", 1)[0]


def gke_labelled(machine_type: str) -> bool:
    """Google documents the gce-topology labels on these machine families' nodes."""
    return gke_family(machine_type) in data()["gke"]["families"]


def gke_levels() -> list[str]:
    return list(data()["gke"]["levels"])


def gke_families() -> list[str]:
    return list(data()["gke"]["families"])


def nvlink_label() -> str:
    return data()["nvlink_label"]


def hostname_label() -> str:
    return data()["hostname_label"]


def kueue_tas_beta() -> str:
    """The first Kueue minor with TopologyAwareScheduling on by default."""
    return data()["kueue"]["tas_beta"]
