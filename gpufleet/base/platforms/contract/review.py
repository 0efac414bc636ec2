"""Which of a platform's resources' fields force replacement or disrupt nodes (gpufleet/app/review).

The review reads two plans' resources by Pulumi type token. A platform declares, for the resource types of its
providers, which input changes replace a resource (with the source of each fact), what losing one means, what data
one holds and which upstream versions its inputs name. The review collects every registered platform's rows; the
Kubernetes and Helm rows every platform shares stay in gpufleet/app/review. Inputs here are the plan JSON's: plain
dicts, camelCase, numbers as floats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class VersionedPart:
    """A resource that runs a Kubernetes version the platform's move rules judge (VersionTraits.move_rules)."""

    part: str
    """Its role: "control plane" or "node pool" (gpufleet.base.platforms.contract.versions)."""
    name: str
    """What a reviewer calls it: the cluster, the pool, the k3s host."""
    version: str
    """The version its inputs name (a minor such as "1.N", a GKE version "1.N.P-gke.B", a k3s release "v1.N.P+k3sR")."""
    key: str
    """The stack key (under `gpufleet:`) that sets it, for the fix ("cluster.kubernetesVersion")."""


@dataclass(frozen=True)
class ReplaceTable:
    """The inputs of one resource type whose change replaces the resource.

    Paths are Pulumi input names (camelCase), dotted; list indices are ignored (`instanceTypes[0]` matches
    `instanceTypes`), and a rule matches every path below it (`nodeConfig.guestAccelerators` matches
    `nodeConfig.guestAccelerators.type`)."""

    paths: tuple[str, ...]
    source: str
    checked: bool
    """Whether the entry was read at `source` while writing the table (True) or taken from the provider docs without
    re-reading (False): re-check those first."""
    conditional: tuple[str, ...] = ()
    """Inputs that force replacement only in some directions (named in `source`); reported as 'may replace'."""


class ReviewTraits:
    """Defaults: a platform that declares nothing here has no resources of its own the review knows (its changes are
    judged by the shared Kubernetes and Helm rows only)."""

    replace_tables: Mapping[str, ReplaceTable] = {}
    """Type token -> the inputs whose change replaces a resource of that type, for its providers' resources. Default:
    none."""

    disruptive_kinds: Mapping[str, str] = {}
    """Type token -> what replacing or deleting such a resource means ("node pool", "cluster", "file system"): the
    review lists those changes as disruptive. Default: none."""

    hidden_names: Mapping[str, Mapping[str, str]] = {}
    """Type token -> {"<secret input>.<key>": what a reviewer calls it} for the keys of its providers' secret inputs
    (`stdin.node-label` -> "node labels"): the review names a key whose digest changed (the plan's `secretDigests`)
    with it. A key not listed is named by its path. Default: none."""

    scale_down_settings: Mapping[str, Mapping[str, str]] = {}
    """Type token -> {input path prefix: what it decides} for the inputs of its providers' resources that decide when
    an autoscaler removes a GPU node (per node group scale-down options, a cluster's autoscaling profile): the review
    lists a change of them under Disruption changes, though it updates the resource in place (docs/upgrades.md).
    Default: none."""

    stateful: Mapping[str, str] = {}
    """Type token -> the data such a resource holds, which a delete or replacement can lose (listed first). Default:
    none."""

    def data_held(self, type_: str, inputs: dict) -> Optional[str]:
        """What a resource of a type not in `stateful` holds by what its inputs say (a k3s server install holds the
        cluster's datastore), or None. Default: None."""
        return None

    def node_rollout(self, type_: str, before: dict, after: dict) -> Optional[str]:
        """What an in-place update of a resource of its providers does to the nodes it runs, when it replaces them (a
        node image moved, with the driver it ships): the review lists the update as disruptive with this text. None when
        the update leaves the nodes alone. Default: None."""
        return None

    def kubernetes_parts(self, type_: str, inputs: dict) -> list[VersionedPart]:
        """The control plane or node pool a resource is, with the Kubernetes version its inputs set, for the move
        rules (VersionTraits.move_rules). A pool whose inputs set no version follows the control plane and is not
        listed. Default: none."""
        return []

    def versions(self, type_: str, inputs: dict) -> list[tuple[str, Any]]:
        """(component, version) pairs a resource's inputs name ("Kubernetes (EKS control plane)", "1.33"): what the
        review compares before and after. Empty values are skipped by the review. Default: none."""
        return []
