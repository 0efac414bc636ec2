"""aks: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL, MoveRule, VersionTraits
from gpufleet.base.spec.platforms import aks_checks


class AksVersions(VersionTraits):
    kubernetes_versions = versions.AKS_KUBERNETES_VERSIONS
    unknown_version = "is not an AKS version gpufleet plans for"
    move_rules = (
        MoveRule(CONTROL_PLANE, "no-downgrade",
                 source="AKS 'Supported Kubernetes versions' (learn.microsoft.com/azure/aks/supported-kubernetes-versions): "
                        "upgrading by alias minor version supports only a higher minor version; 'Upgrade an AKS cluster' "
                        "offers upgrades only (az aks get-upgrades lists newer versions)",
                 instead="a lower minor needs a new cluster (and a migration of the workloads)"),
        MoveRule(CONTROL_PLANE, "step", limit=1,
                 source="AKS 'Upgrade an AKS cluster' (learn.microsoft.com/azure/aks/upgrade-aks-cluster): when you "
                        "upgrade a supported AKS cluster, you can't skip Kubernetes minor versions (two minors at once "
                        "is not allowed); the API answers OperationNotAllowed"),
        # Stricter than the kubelet skew (three): AKS's own limit.
        MoveRule(NODE_POOL, "skew", limit=2,
                 source="AKS 'Upgrade an AKS cluster': the control plane can be at most two minor versions ahead of "
                        "node pools; AgentPool.orchestratorVersion (AKS REST API): the node pool version cannot be "
                        "greater than the control plane version"),
    )

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """AKS's community and long-term support calendar (catalog kubernetes.yaml `aks`)."""
        return aks_checks.kubernetes_warnings(stack, spec, day)
