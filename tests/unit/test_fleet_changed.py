"""`--changed-since`: which stacks a change touches, on a throwaway git history (docs/fleet.md, the rule in
gpufleet/app/fleet/changed.py)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest

from gpufleet.app.fleet import changed
from gpufleet.app.fleet.command import select
from gpufleet.app.fleet.stacks import SelectionError, discover

STACKS = {  # name -> (platform, dependsOn)
    "eks-a": ("eks", []),
    "gke-a": ("gke", []),
    "k3s-a": ("k3s", []),
    "k3s-b": ("k3s", []),
    "reader": ("eks", ["k3s-b"]),  # reads k3s-b's outputs
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def write(repo: Path, path: str, text: str = "x\n") -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    write(r, "Pulumi.yaml", "name: p\nruntime: python\nstackConfigDir: stacks\n")
    for name, (platform, deps) in STACKS.items():
        dep = f"  gpufleet:dependsOn: {deps}\n" if deps else ""
        write(r, f"stacks/Pulumi.{name}.yaml", f"config:\n  gpufleet:cluster:\n    platform: {platform}\n{dep}")
    for path in ("components/eks/platform.py", "components/eks/nodegroup.py", "components/gke/platform.py",
                 "components/k3s/platform.py", "components/gpu_stack/operator.py", "components/gpu_cluster.py",
                 "gpufleet/base/catalog/aws_instances.yaml", "gpufleet/base/catalog/gcp_machines.yaml",
                 "gpufleet/base/catalog/amd_gpus.yaml", "gpufleet/base/catalog/gpus.yaml", "gpufleet/app/program.py",
                 "gpufleet/app/plan/render.py", "gpufleet/app/fleet/command.py", "policies/rules/taint.py",
                 "docs/x.md", "tests/unit/test_x.py", "README.md", ".github/workflows/pr.yml", "pyproject.toml"):
        write(r, path)
    base = commit(r, "base")
    git(r, "branch", "base", base)
    return r


def selected(repo: Path, ref: str = "base", names: tuple[str, ...] = ()) -> list[str]:
    args = argparse.Namespace(stacks=list(names), all=False, changed_since=ref, shard=None)
    return select(args, discover(repo), repo)[0]


def change(repo: Path, *paths: str) -> None:
    git(repo, "checkout", "-q", "-B", "work", "base")
    for p in paths:
        write(repo, p, "changed\n")
    commit(repo, "change " + " ".join(paths))


@pytest.mark.parametrize("paths, expected", [
    (["stacks/Pulumi.gke-a.yaml"], ["gke-a"]),
    (["stacks/Pulumi.k3s-b.yaml"], ["k3s-b", "reader"]),  # reader depends on k3s-b, after it
    (["components/eks/nodegroup.py"], ["eks-a", "reader"]),  # a platform plug-in: its platform's stacks only
    (["components/gke/platform.py"], ["gke-a"]),
    (["components/gpu_stack/operator.py"], ["eks-a", "gke-a", "k3s-a", "k3s-b", "reader"]),  # shared
    (["components/gpu_cluster.py"], ["eks-a", "gke-a", "k3s-a", "k3s-b", "reader"]),
    (["gpufleet/base/catalog/aws_instances.yaml"], ["eks-a", "reader"]),  # the AWS catalog: EKS stacks read it
    (["gpufleet/base/catalog/gcp_machines.yaml"], ["gke-a"]),
    (["gpufleet/base/catalog/amd_gpus.yaml"], ["k3s-a", "k3s-b", "reader"]),
    (["gpufleet/base/catalog/gpus.yaml"], ["eks-a", "gke-a", "k3s-a", "k3s-b", "reader"]),  # every platform's
    (["policies/rules/taint.py"], ["eks-a", "gke-a", "k3s-a", "k3s-b", "reader"]),  # the pack judges every stack
    (["gpufleet/app/program.py"], ["eks-a", "gke-a", "k3s-a", "k3s-b", "reader"]),  # the program itself
    (["pyproject.toml"], ["eks-a", "gke-a", "k3s-a", "k3s-b", "reader"]),  # unknown to the rule: all, on purpose
    (["gpufleet/app/plan/render.py", "gpufleet/app/fleet/command.py"], []),  # CLI code `pulumi up` never runs
    (["docs/x.md", "tests/unit/test_x.py", "README.md", ".github/workflows/pr.yml"], []),
    (["stacks/Pulumi.gke-a.yaml", "components/k3s/platform.py"], ["gke-a", "k3s-a", "k3s-b", "reader"]),
])
def test_changed_since_selects_the_stacks_a_change_touches(repo, paths, expected):
    change(repo, *paths)
    assert selected(repo) == expected


def test_the_reasons_name_the_files_and_the_dependency(repo):
    change(repo, "stacks/Pulumi.k3s-b.yaml", "components/eks/nodegroup.py")
    files = changed.changed_files(repo, "base")
    assert files == ["components/eks/nodegroup.py", "stacks/Pulumi.k3s-b.yaml"]
    why = changed.affected(discover(repo), files, repo, "stacks")
    assert why == {"eks-a": ["components/eks/nodegroup.py"], "k3s-b": ["stacks/Pulumi.k3s-b.yaml"],
                   "reader": ["components/eks/nodegroup.py"]}


def test_changes_since_the_merge_base_only_and_uncommitted_ones_count(repo):
    # main moves on after the branch point: its own changes are not the branch's
    git(repo, "checkout", "-q", "-B", "work", "base")
    write(repo, "stacks/Pulumi.gke-a.yaml", "config: {gpufleet:cluster: {platform: gke}}\n")
    commit(repo, "branch change")
    git(repo, "checkout", "-q", "main")
    write(repo, "stacks/Pulumi.eks-a.yaml", "config: {gpufleet:cluster: {platform: eks}}\n")
    commit(repo, "main moves")
    git(repo, "checkout", "-q", "work")
    assert selected(repo, "main") == ["gke-a"]
    write(repo, "components/k3s/platform.py", "uncommitted\n")  # the working tree counts too
    assert selected(repo, "main") == ["gke-a", "k3s-a", "k3s-b", "reader"]


def test_a_renamed_stack_file_counts_under_its_new_name_and_a_deleted_one_runs_nothing(repo):
    git(repo, "checkout", "-q", "-B", "work", "base")
    git(repo, "mv", "stacks/Pulumi.k3s-a.yaml", "stacks/Pulumi.k3s-c.yaml")
    git(repo, "rm", "-q", "stacks/Pulumi.gke-a.yaml")
    commit(repo, "rename and delete")
    assert selected(repo) == ["k3s-c"]


def test_names_and_changed_since_intersect(repo):
    change(repo, "components/gpu_stack/operator.py")
    assert selected(repo, names=("gke-a", "reader")) == ["gke-a", "reader"]


def test_an_unknown_ref_is_a_clear_error(repo):
    with pytest.raises(SelectionError, match=r"--changed-since 'no-such-ref': git cannot compare .* allowed: a revision"):
        selected(repo, "no-such-ref")
    with pytest.raises(SelectionError, match=r"--changed-since '--output=x': not allowed"):
        selected(repo, "--output=x")


def test_stacks_an_earlier_run_left_behind_are_selected_again_and_named(repo):
    """issue 48: `up` selects what changed since the last deployed commit (the CI marker), not since the previous push;
    --pushed-since names the stacks selected only because an earlier run (cancelled, or stopped at a failure) left
    them behind."""
    from gpufleet.app.fleet.command import carried_over

    change(repo, "stacks/Pulumi.gke-a.yaml")  # a push whose `up` was cancelled: gke-a never deployed
    before = git(repo, "rev-parse", "HEAD").strip()
    write(repo, "stacks/Pulumi.k3s-a.yaml", "config:\n  gpufleet:cluster:\n    platform: k3s\n# next\n")
    commit(repo, "the next push")
    args = argparse.Namespace(stacks=[], all=False, changed_since="base", shard=None, pushed_since=before)
    names, _ = select(args, discover(repo), repo)
    assert names == ["gke-a", "k3s-a"]  # since the last deployed commit: the cancelled push's stack too
    assert carried_over(args, discover(repo), repo, names) == ["gke-a"]
    args.changed_since = None
    with pytest.raises(SelectionError, match="--pushed-since without --changed-since"):
        carried_over(args, discover(repo), repo, names)
