"""Its stack keys and their checks (gpufleet/base/spec).

The shared spec asks these instead of naming a platform: which of the spec's keys are the platform's own (its
`cluster.<name>` block, the pool fields only it reads), which secret config keys its program reads, and the checks
that need the whole stack (`checks`, run by gpufleet/base/spec/__init__.py `_cross_checks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

@dataclass(frozen=True)
class CapacityEnd:
    """A pool's capacity that ends on a known day (KeyTraits.capacity_ends)."""

    pool: int
    """The pool's index in gpufleet:nodePools."""
    key: str
    """The key under `nodePools[i].` that records it (`gke.runStartDate`), named by the warning and the refusal."""
    value: str
    """That key's value, as the stack wrote it."""
    last_day: Any
    """The last day (datetime.date, UTC) the capacity may still be there; from the next day on it is gone."""
    what: str
    """What ends, for the messages ("its flex-start nodes (started 2026-12-01, at most 1 day each)")."""
    then: str
    """What the cloud does at the end ("GKE deletes DWS nodes at their maximum run duration, ...")."""
    warning_days: int
    """Warn from this many days before `last_day`."""


MUST_BE_SECRET = "must be a secret, not plain text: set it with `pulumi config set --secret`"


def _always(cluster: Mapping[str, Any]) -> bool:
    return True


@dataclass(frozen=True)
class SecretKey:
    """A secret config key `gpufleet:<key>` a platform's program reads: never part of the spec, never printed.

    The spec judges it on the `gpufleet:cluster` mapping as the stack file gives it (before the spec validates, so a
    missing secret is reported together with every other problem); the program hands its value to GpuClusterArgs."""

    key: str
    """The config key under `gpufleet:`, e.g. `sshPrivateKey`."""
    description: str
    """What it holds, for `gpufleet schema` and the list of allowed keys."""
    argument: str
    """The GpuClusterArgs field the program hands it to (components/gpu_cluster.py)."""
    required: str = ""
    """The problem when the stack needs it and does not set it; "": another check decides (e.g. the registry's)."""
    needed: Callable[[Mapping[str, Any]], bool] = _always
    """Whether the stack needs it, from the `gpufleet:cluster` mapping; default: always."""
    unused: str = ""
    """The problem when it is set but not needed; "": not judged."""
    plain: str = MUST_BE_SECRET
    """The problem when it is set in plain text instead of with `pulumi config set --secret`."""
    elsewhere: str = ""
    """The problem when a stack of another platform sets it (`{platform}` is that platform); "": not judged there."""
    plain_elsewhere: bool = False
    """Whether a stack of another platform that sets it in plain text is told `plain` too (a password that must never
    sit in a stack file, whatever the stack). Default: False."""


class KeyTraits:
    """Defaults: a platform that declares nothing here has no block of its own, reads no secret and no pool field of
    its own, and gets no checks beyond the shared ones."""

    block: Optional[str] = None
    """What its `cluster.<name>` block (a ClusterSpec field of that name) must at least say, as the problem words it
    when the block is missing ("a `k3s:` block with at least one server"). Default None: no block is required."""

    pool_fields: tuple[str, ...] = ()
    """NodePoolSpec fields only this platform reads: another platform's stack that sets one is told to remove it
    (gpufleet/base/spec/__init__.py). Default: none."""

    storage: Optional[str] = None
    """Where a stack configures this platform's storage when not in gpufleet:storage's `nfs` and `checkpoints` blocks
    (which only k3s reads): a stack that sets those blocks here is pointed to it (spec/checks/platform_keys.py).
    Default None: the platform reads those blocks (nothing is refused)."""

    exemptions: bool = False
    """Whether the policy pack judges its pools as cloud resources, so a pool's `exemptions` (tags or node labels)
    mean something; when False a pool that sets them is refused (spec/checks/platform_keys.py). Default: False."""

    kubelet_labels: bool = False
    """Whether its nodes register a pool's labels through the kubelet's --node-labels, which refuses kubernetes.io /
    k8s.io keys outside its allowed set: such a label is then refused (spec/checks/value_checks.py). Default: False."""

    reserved_label_prefixes: tuple[str, ...] = ()
    """Node label prefixes the platform's API refuses on a pool (spec/checks/value_checks.py). Default: none."""

    long_labels_reported: bool = False
    """Whether its own checks already report pool label and taint keys and values over 63 characters (the shared
    Kubernetes syntax check then skips those, so one problem is not reported twice). Default: False."""

    secrets: tuple[SecretKey, ...] = ()
    """The secret config keys its program reads, in the order `gpufleet schema` and messages list them (the spec
    judges them, gpufleet/app/program.py reads them). Default: none."""

    catalog_files: tuple[str, ...] = ()
    """Prefixes of the catalog data files (gpufleet/base/catalog/<prefix>*) whose facts only its stacks read: a change
    to one touches only this platform's stacks (`gpufleet fleet --changed-since`, gpufleet/app/fleet/changed.py).
    Default: none (a change to any catalog file touches every stack)."""

    def outputs(self, cluster: Any) -> dict[str, Any]:
        """Stack outputs beyond the ones every stack exports (clusterName, platform, kubernetesVersion, kubeconfig,
        nodePools), from the built GpuCluster (gpufleet/app/program.py). Default: none."""
        return {}

    def capacity_ends(self, spec: Any) -> list[CapacityEnd]:
        """Capacity of its own kinds that ends on a day the stack records, beyond `nodePools[*].reservation.endDate`
        (which every platform shares): the plan warns before and refuses after, as for reservations
        (gpufleet/base/spec/features/reservation_end.py). Default: none."""
        return []

    def checks(self, stack: str, spec: Any, config: dict) -> list:
        """Problems (gpufleet.base.spec.errors.Problem) of a stack on this platform that need the whole stack: its pools
        against its catalog, its limits, regions, networks and names. Run once every block is valid on its own, at the
        platform's place in gpufleet/base/spec/__init__.py's order. Default: none."""
        return []
