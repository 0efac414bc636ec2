"""The GitOps side of a stack (gpufleet:gitops, docs/gitops.md): the cluster's registration with Argo CD."""

from gpufleet.components.gitops.argocd import ArgoCdCluster, ArgoCdClusterArgs

__all__ = ["ArgoCdCluster", "ArgoCdClusterArgs"]
