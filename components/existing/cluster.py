"""ExistingCluster: a Kubernetes cluster that already runs, reached through its kubeconfig. It creates nothing in the
cluster's cloud: its one child is the kubernetes provider every add-on uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess


@dataclass(frozen=True)
class ExistingClusterArgs:
    kubeconfig: pulumi.Input[str]
    """The cluster's kubeconfig (a secret: the stack's `gpufleet:kubeconfig`, set with `pulumi config set --secret`).
    It is kept secret in every output."""
    kubernetes_version: str
    """The cluster's Kubernetes minor version, e.g. "1.34": the add-ons' versions are checked against it."""
    context: Optional[str] = None
    """The kubeconfig context to use; default: the kubeconfig's current context."""


class ExistingCluster(pulumi.ComponentResource):
    """The cluster as the rest of gpufleet sees it (`access`): the kubeconfig, and the provider `<name>-k8s` on it."""

    access: ClusterAccess

    def __init__(self, name: str, args: ExistingClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:existing:ExistingCluster", name, None, opts)
        self.kubeconfig = pulumi.Output.secret(args.kubeconfig)
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig, context=args.context, opts=pulumi.ResourceOptions(parent=self)
        )
        # No platform facts: the cluster's containerd and driver are its provider's defaults, and what the GPU Operator
        # must leave alone (a preinstalled driver) the stack says in gpuOperator.driver.
        self.access = ClusterAccess(
            name=name, platform="existing", kubernetes_version=args.kubernetes_version, kubeconfig=self.kubeconfig,
            provider=self.provider, facts={}, ready=[],
        )
        self.register_outputs({"kubeconfig": self.kubeconfig})
