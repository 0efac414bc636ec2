"""The narrow view of a cluster that node pools and add-ons depend on (not the control-plane class)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s
import yaml


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


def exec_kubeconfig(name: str, server: str, ca_certificate: str, exec_user: dict) -> str:
    """A one-cluster kubeconfig whose user gets its credential from an exec plugin (`exec_user`: the
    client.authentication.k8s.io exec block), as the managed clouds hand out: no static credential in it."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority-data": ca_certificate}}],
            "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
            "current-context": name,
            "users": [{"name": name, "user": {"exec": exec_user}}],
        },
        sort_keys=False,
    )
