"""k3s: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.catalog import lifecycle
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, KUBELET_SKEW, MoveRule, VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import NAMESPACE, support_warnings


class K3sVersions(VersionTraits):
    kubernetes_versions = tuple(versions.K3S_RELEASES)
    unknown_version = "has no pinned k3s release"
    # The servers are the control plane (kube-apiserver runs in the k3s server process); agents are node pools.
    move_rules = (
        # docs.k3s.io/upgrades/roll-back ("Rolling Back K3s"): going back to an earlier minor needs a datastore snapshot
        # taken on that minor, restored with the old binary ("If you cannot restore the database, you cannot roll back to
        # a previous minor version"). The page says so for SQLite, external and embedded etcd alike, so the rule judges
        # every server (the issue named embedded etcd; the source is wider).
        MoveRule(CONTROL_PLANE, "no-downgrade",
                 source="k3s docs 'Rolling Back K3s' (docs.k3s.io/upgrades/roll-back): a previous minor needs the "
                        "datastore snapshot taken on it restored with the old binary; reinstalling the older k3s on the "
                        "servers is not a rollback",
                 instead="roll back outside gpufleet as docs.k3s.io/upgrades/roll-back says (restore the etcd snapshot "
                         "or SQLite copy taken on the lower minor, `gpufleet k3s restore-commands`), or keep the current minor"),
        MoveRule(CONTROL_PLANE, "step", limit=1,
                 source="k3s docs 'Upgrades' (docs.k3s.io/upgrades/automated, manual): the Kubernetes version skew "
                        "policy applies, do not skip intermediate minor versions; in HA the newest and oldest "
                        "kube-apiserver must be within one minor (kubernetes.io/releases/version-skew-policy)"),
        KUBELET_SKEW,
    )

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """A k3s minor ends with upstream Kubernetes' same minor (catalog lifecycle.yaml `k3s`)."""
        version = spec.cluster.kubernetes_version
        return support_warnings(stack, f"{NAMESPACE}:cluster.kubernetesVersion", lifecycle.k3s_minor(version), day, version,
                                "upgrade to a newer k3s minor")
