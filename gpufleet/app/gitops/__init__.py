"""The delegated layer outside Pulumi (gpufleet:gitops, docs/gitops.md): what it holds (`layer`), its Argo CD export
(`argocd`), its Flux export (`flux`), and the check of what Argo CD synced against it (`verify`)."""
