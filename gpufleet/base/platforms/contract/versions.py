"""The Kubernetes versions a platform plans for and its support calendar (spec, lifecycle warnings)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Optional

CONTROL_PLANE = "control plane"
NODE_POOL = "node pool"


@dataclass(frozen=True)
class MoveRule:
    """A Kubernetes version move the platform refuses (gpufleet diff lists it as "will fail at `pulumi up`").

    `kind` is one of:
    - "no-downgrade": a part of role `part` never moves to a lower minor;
    - "step": a part of role `part` moves up at most `limit` minors in one change;
    - "skew": a part of role `part` runs no newer than the control plane and at most `limit` minors older.
    """

    part: str
    """The role it judges: CONTROL_PLANE or NODE_POOL (ReviewTraits.kubernetes_parts says which resource is which)."""
    kind: str
    source: str
    """The document that says the platform refuses the move, quoted where it matters."""
    limit: int = 0
    instead: str = ""
    """What works instead, when the generic advice does not fit (a downgrade that needs a datastore restore). Default:
    the review's own ("keep 1.N", "1.N → 1.N+1 first")."""


# kubernetes.io/releases/version-skew-policy ("Supported version skew", kubelet): "kubelet must not be newer than
# kube-apiserver" and "kubelet may be up to three minor versions older than kube-apiserver" (two for kubelets
# older than any minor gpufleet plans for). A platform with a stricter rule declares its own.
KUBELET_SKEW = MoveRule(
    NODE_POOL, "skew", limit=3,
    source="Kubernetes version skew policy (kubernetes.io/releases/version-skew-policy, kubelet): kubelet must not be "
           "newer than kube-apiserver and may be up to three minor versions older")


def minor(version: Any) -> Optional[tuple[int, int]]:
    """(major, minor) of a Kubernetes version as platforms write it ("1.N", "1.N.P-gke.B", "v1.N.P+k3sR"), or None
    when it is not one."""
    text = str(version or "").strip().lstrip("v")
    parts = text.split(".")
    if len(parts) < 2 or not parts[0].isdigit():
        return None
    digits = ""
    for ch in parts[1]:
        if not ch.isdigit():
            break
        digits += ch
    return (int(parts[0]), int(digits)) if digits else None


@dataclass(frozen=True)
class NodeDriver:
    """An NVIDIA driver a stack's GPU nodes run, as the lifecycle check judges its branch against NVIDIA's data
    center driver calendar (catalog lifecycle.yaml nvidia_driver_branches)."""

    at: str
    """The key path (under `gpufleet:`) where the fix goes: where the stack chooses the driver."""
    version: str
    """The driver version ("580.159.03"); its branch is the first number."""
    value: str
    """What the warning quotes as the value at `at` (the driver version, or the AMI release that ships it)."""
    fix: str
    """What to do when the branch is past, or near, the end of its support, naming what runs the driver."""


class VersionTraits:
    """Defaults: a platform that declares nothing here takes any Kubernetes minor, keeps no support calendar, and
    has the branch of the driver its GPU nodes run judged by NVIDIA's calendar at `driver_key`."""

    kubernetes_versions: tuple[str, ...] = ()
    """The Kubernetes minors gpufleet plans for on it (from gpufleet/base/versions.py). Default: empty, any minor."""

    unknown_version: str = "is not a Kubernetes version gpufleet plans for"
    """How a minor outside `kubernetes_versions` is refused, after the quoted version."""

    move_rules: tuple[MoveRule, ...] = ()
    """The version moves the platform refuses, each with its source (gpufleet/app/review/moves.py judges them between
    two plans, and between a stack's deployed outputs and its plan before `gpufleet preview|up`). Default: none."""

    def driver_key(self, spec: Any) -> str:
        """The key path (under `gpufleet:`) where this stack chooses the driver its GPU nodes run. Default: the GPU
        Operator's `gpuOperator.driver.version`."""
        return "gpuOperator.driver.version"

    def node_drivers(self, spec: Any, drivers: list[tuple[str, str]]) -> list[NodeDriver]:
        """The NVIDIA drivers the stack's GPU nodes run, each at the key where its fix goes, for the lifecycle check of
        their branches (gpufleet/base/spec/checks/lifecycle_checks.py). `drivers`: (what, driver version) as
        catalog_checks._drivers finds them (the GPU Operator's, or the platform's `catalog_drivers`). Default: the
        first of `drivers` on each branch, at `driver_key`, quoting its version."""
        at = self.driver_key(spec)
        out: list[NodeDriver] = []
        seen: set[str] = set()
        for what, version in drivers:
            branch = version.split(".")[0]
            if branch not in seen:
                seen.add(branch)
                out.append(NodeDriver(at, version, version, f"{what}: move to a supported driver branch"))
        return out

    def node_image_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """Warnings (gpufleet.base.spec.errors.Problem) for node images the stack pins that are old on `day` (EKS AMI
        releases), and for node images that move without a change of the stack (GKE node auto-upgrade, EKS Bottlerocket
        pools). Default: none (the platform pins no node image)."""
        return []

    def addon_needs(self, spec: Any, resources: list) -> list[tuple[str, str, Optional[bool], str]]:
        """What the stack's Kubernetes minor needs from the cloud's own add-ons (those the platform installs and those
        gpufleet installs through the cloud's add-on API), as (what, requires, ok, source) rows of the plan's
        "Kubernetes 1.N needs" (gpufleet/app/plan/kube_needs.py): ok True met, False not met, None not judged offline.
        `resources` are the plan's registrations (type, inputs). Default: none (the platform pins no cloud add-on)."""
        return []

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """Lifecycle warnings (gpufleet.base.spec.errors.Problem) for the stack's Kubernetes minor on `day`, from the
        platform's support calendar (gpufleet/base/spec/checks/lifecycle_checks.py). Default: none (no calendar)."""
        return []
