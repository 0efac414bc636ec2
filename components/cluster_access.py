"""The narrow view of a cluster that node pools and add-ons depend on (not the control-plane class)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class ClusterAccess:
    """What the rest of the cluster needs from a control plane."""

    name: str
    """Cluster name (prefix of child resource names)."""
    platform: str
    """eks | gke | aks | k3s."""
    kubernetes_version: str
    """Kubernetes minor version, e.g. "1.34"."""
    kubeconfig: pulumi.Output
    """Kubeconfig for the cluster (a secret output)."""
    provider: k8s.Provider
    """Kubernetes provider built once from the kubeconfig; every add-on uses it."""
    facts: dict = field(default_factory=dict)
    """Platform facts add-ons need (e.g. containerd paths on k3s)."""
    ready: Optional[list[pulumi.Resource]] = None
    """Resources add-ons must wait for (e.g. the nodes having joined)."""
