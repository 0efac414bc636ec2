"""Checks of gpufleet:gitops (gpufleet/base/spec/features/gitops.py; docs/gitops.md).

With `engine: argocd` or `flux`, that engine creates the team and serving namespaces when it syncs, after `pulumi
up`. Pulumi must
therefore create nothing inside them: a DRA claim template or a model cache in such a namespace would fail at
`pulumi up` (namespace not found), so it is refused here, with the way out. A model server routed through an
InferencePool is an inferencepool Helm release, which the export does not write yet (plain manifests only).
"""

from typing import Any

from gpufleet.base import gitops
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import routes_to_inference_pool

AT = "gpufleet:gitops"


def delegated_namespaces(spec: Any) -> dict[str, str]:
    """Namespace -> what makes it part of the delegated layer (a Kueue team, a serving model)."""
    out: dict[str, str] = {}
    if spec.addons.kueue.enabled:
        for team in spec.addons.kueue.teams:
            out.setdefault(team.namespace_name, f"the namespace of Kueue team {team.name}")
    if spec.serving.enabled:
        for m in spec.serving.models:
            out.setdefault(m.namespace, f"the namespace of model server {m.name}")
    return out


def check(stack: str, spec: Any) -> list[Problem]:
    if not gitops.delegates(spec):
        return []
    problems: list[Problem] = []
    engine = spec.gitops.engine
    if spec.gitops.repo_url is None:
        problems.append(Problem(stack, f"{AT}.repoUrl", f"required with engine {engine}: the git repository "
                                f"`gpufleet export {engine}` output is committed to and {engine} syncs (https://..., "
                                "ssh://... or git@host:org/repo.git)"))
    if engine == "flux" and spec.gitops.target_revision == "HEAD":
        problems.append(Problem(stack, f"{AT}.targetRevision", "name the branch, tag or commit Flux syncs: a Flux "
                                "GitRepository without one checks out `master` (fluxcd.io/flux/components/source/"
                                "gitrepositories/, Reference)", "HEAD"))
    owned = delegated_namespaces(spec)
    for i, ns in enumerate(spec.dra.namespaces):
        if ns in owned:
            problems.append(Problem(stack, f"gpufleet:dra.namespaces[{i}]", f"is {owned[ns]}, which the GitOps engine "
                                    "creates: Pulumi cannot put the DRA claim templates in it before "
                                    "it has synced; list a namespace the engine does not own, or use engine pulumi",
                                    ns))
    for i, domain in enumerate(spec.dra.compute_domains):
        if domain.namespace in owned:
            problems.append(Problem(stack, f"gpufleet:dra.computeDomains[{i}].namespace", f"is {owned[domain.namespace]}, "
                                    "which the GitOps engine creates: Pulumi cannot create the "
                                    "ComputeDomain in it before it has synced; use another namespace, or engine "
                                    "pulumi", domain.namespace))
    for i, cache in enumerate(spec.model_caches):
        if cache.namespace in owned:
            problems.append(Problem(stack, f"gpufleet:modelCaches[{i}].namespace", f"is {owned[cache.namespace]}, "
                                    "which the GitOps engine creates: Pulumi cannot create the cache's "
                                    "claim in it before it has synced; use another namespace, or engine pulumi",
                                    cache.namespace))
    if spec.serving.enabled and spec.serving.models and routes_to_inference_pool(spec):
        problems.append(Problem(stack, f"{AT}.engine", "model servers routed through an InferencePool are "
                                "inferencepool Helm releases, which `gpufleet export` does not write yet (plain "
                                "manifests only): use engine pulumi for this stack", engine))
    return problems
