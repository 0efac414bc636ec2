"""gpufleet:gitops (gpufleet/base/spec/features/gitops.py, its checks, gpufleet/base/gitops.py): the engine choice,
its keys, the refusals across the split, and the checks that hold whoever applies the delegated layer."""

import pytest

from gpufleet.app.gitops.flux import ref
from gpufleet.base import gitops
from gpufleet.base.capacity import addons_warnings
from tests.helpers import example_config, load_config, spec_problems

STACK = "gitops-k3s"


def config(engine: str = "argocd") -> dict:
    c = example_config(STACK)
    c["gpufleet:gitops"]["engine"] = engine
    return c


def test_the_default_engine_is_pulumi_and_pulumi_applies_every_part():
    c = config()
    del c["gpufleet:gitops"]
    spec = load_config(c)
    assert spec.gitops.engine == "pulumi"
    assert not gitops.delegates(spec) and not gitops.registers_with_argocd(spec)
    assert all(gitops.pulumi_applies(spec, part) for part in gitops.DELEGATED)


def test_argocd_delegates_exactly_the_delegated_parts():
    spec = load_config(config())
    assert gitops.registers_with_argocd(spec)
    assert [p.name for p in gitops.DELEGATED if not gitops.pulumi_applies(spec, p)] == [
        "alerts", "dashboards", "priorities", "teams", "models"]
    assert gitops.pulumi_applies(spec, gitops.Part("flavors", "ResourceFlavors", ("ResourceFlavor",), "workloads"))


def test_flux_delegates_without_an_argocd_registration():
    spec = load_config(config("flux"))
    assert gitops.delegates(spec) and not gitops.registers_with_argocd(spec)


def test_an_engine_needs_a_repository():
    c = config()
    del c["gpufleet:gitops"]["repoUrl"]
    assert spec_problems(c) == [
        "stack 'test': gpufleet:gitops.repoUrl: required with engine argocd: the git repository `gpufleet export "
        "argocd` output is committed to and argocd syncs (https://..., ssh://... or git@host:org/repo.git)"]


def test_an_unknown_engine_names_the_allowed_ones():
    c = config("spinnaker")
    [problem] = spec_problems(c)
    assert problem.startswith("stack 'test': gpufleet:gitops.engine: ")
    assert "'pulumi', 'argocd' or 'flux'" in problem and "spinnaker" in problem


@pytest.mark.parametrize("key, value", [
    ("path", "../escape"), ("path", "/abs"), ("path", ".hidden/x"), ("targetRevision", "a..b"),
    ("targetRevision", "main.lock"), ("targetRevision", "main branch"), ("repoUrl", "file:///etc"),
    ("repoUrl", "https://git.example.com/a b"),
])
def test_repository_keys_refuse_what_leaves_the_repository_or_needs_quoting(key, value):
    c = config()
    c["gpufleet:gitops"][key] = value
    [problem] = spec_problems(c)
    assert problem.startswith(f"stack 'test': gpufleet:gitops.{key}: ")


@pytest.mark.parametrize("url", ["https://git.example.com/platform/gitops.git", "git@github.com:org/repo.git",
                                 "ssh://git@git.example.com:2222/org/repo.git"])
def test_repository_urls_argo_cd_clones_are_accepted(url):
    c = config()
    c["gpufleet:gitops"]["repoUrl"] = url
    assert load_config(c).gitops.repo_url == url


def test_flux_needs_a_named_revision():
    c = config("flux")
    c["gpufleet:gitops"]["targetRevision"] = "HEAD"
    assert spec_problems(c) == [
        "stack 'test': gpufleet:gitops.targetRevision: name the branch, tag or commit Flux syncs: a Flux GitRepository "
        "without one checks out `master` (fluxcd.io/flux/components/source/gitrepositories/, Reference) (got 'HEAD')"]


def test_pulumi_never_creates_inside_a_namespace_the_engine_owns():
    c = config()
    c["gpufleet:dra"] = {"namespaces": ["research", "default"]}
    c["gpufleet:modelCaches"] = [{"name": "weights", "namespace": "serving", "source": "hf://Qwen/Qwen3-8B",
                                  "size": "100Gi"}]
    problems = [p for p in spec_problems(c) if "GitOps engine" in p]
    assert problems == [
        "stack 'test': gpufleet:dra.namespaces[0]: is the namespace of Kueue team research, which the GitOps engine "
        "creates: Pulumi cannot put the DRA claim templates in it before it has synced; list a namespace the engine "
        "does not own, or use engine pulumi (got 'research')",
        "stack 'test': gpufleet:modelCaches[0].namespace: is the namespace of model server qwen3-8b, which the GitOps "
        "engine creates: Pulumi cannot create the cache's claim in it before it has synced; use another namespace, "
        "or engine pulumi (got 'serving')",
    ]


@pytest.mark.parametrize("mutate, path", [
    (lambda c: c["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0].update(pool="h100-none"),
     "gpufleet:addons.kueue.teams[0].queues[0].pool"),
    (lambda c: c["gpufleet:serving"]["models"][0].update(pool="h100-none"), "gpufleet:serving.models[0].pool"),
])
def test_the_checks_of_the_delegated_layer_do_not_depend_on_the_engine(mutate, path):
    refused = {}
    for engine in ("pulumi", "argocd"):
        c = config(engine)
        mutate(c)
        refused[engine] = spec_problems(c)
    assert refused["argocd"] == refused["pulumi"]
    assert [p for p in refused["argocd"] if f": {path}: " in p]


def test_a_quota_over_the_pool_stays_a_plan_finding_with_argocd():
    c = config()
    c["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]["nominalQuota"] = 100
    assert [str(w) for w in addons_warnings("s", load_config(c, "s"))] == [
        "stack 's': gpufleet:addons.kueue.teams[1].queues[0].nominalQuota: nominal quotas on pool 'a100-train' add up "
        "to 108 nvidia.com/gpu, more than the pool can ever provide (16 = 8 per node x 2 nodes at max size); queues: "
        "gpufleet:addons.kueue.teams[0].queues[0].nominalQuota, gpufleet:addons.kueue.teams[1].queues[0].nominalQuota "
        "(got 108)"]


@pytest.mark.parametrize("revision, expected", [
    ("main", {"branch": "main"}), ("release/2026-12", {"branch": "release/2026-12"}), ("v1.4.0", {"tag": "v1.4.0"}),
    ("0123456789abcdef0123456789abcdef01234567", {"commit": "0123456789abcdef0123456789abcdef01234567"}),
])
def test_flux_reference_kinds(revision, expected):
    assert ref(revision) == expected
