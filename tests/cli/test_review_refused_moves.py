"""`gpufleet diff` on a Kubernetes version move the cloud refuses: listed first as "will fail at `pulumi up`", with
the move that works instead, and exit 1 (CI fails), for one stack and for a fleet. The rules themselves:
tests/unit/test_review_moves.py."""

from __future__ import annotations

import json

from gpufleet.app.cli import EXIT_OK, EXIT_POLICY, main
from gpufleet.app.plan.render import to_json
from tests.helpers import planned
from tests.review_plans import dev_plan, eks_plan

CLUSTER = "aws:eks/cluster:Cluster"


def eks_at(version: str) -> dict:
    plan = eks_plan()
    for r in plan["resources"]:
        if r["type"] == CLUSTER:
            r["inputs"]["version"] = version
    return plan


def diff(capsys, tmp_path, base: dict, head: dict, *fmt: str) -> tuple[int, str, str]:
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    code = main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), *fmt])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_two_minors_at_once_on_eks_fails_the_review_first_with_the_move_that_works(capsys, tmp_path):
    code, out, err = diff(capsys, tmp_path, eks_at("1.34"), eks_at("1.36"))
    assert (code, err) == (EXIT_POLICY, "")
    lines = out.splitlines()
    assert lines[4] == (":x: **1 version move(s) the cloud refuses: will fail at `pulumi up`** (after the cluster has "
                        "started changing): see below.")
    first_section = next(line for line in lines if line.startswith("#### "))
    assert first_section == "#### :x: Will fail at `pulumi up`"
    item = next(line for line in lines if line.startswith("- **control plane"))
    assert item.startswith("- **control plane `prod-eks`** (`gpufleet:cluster.kubernetesVersion`): 1.34 → 1.36 moves 2 "
                           "minors at once; eks moves 1 at a time. **Instead:** 1.34 → 1.35 first: set "
                           'cluster.kubernetesVersion: "1.35"')
    assert "Source: EKS User Guide, 'Update existing cluster to new Kubernetes version'" in item


def test_one_minor_up_passes_and_the_json_lists_no_refused_move(capsys, tmp_path):
    code, out, _ = diff(capsys, tmp_path, eks_at("1.34"), eks_at("1.35"), "--format", "json")
    assert code == EXIT_OK
    assert json.loads(out)["refusedMoves"] == []


def test_the_json_names_the_refused_move(capsys, tmp_path):
    code, out, _ = diff(capsys, tmp_path, eks_at("1.35"), eks_at("1.34"), "--format", "json")
    assert code == EXIT_POLICY
    [move] = json.loads(out)["refusedMoves"]
    assert {k: move[k] for k in ("platform", "part", "name", "key", "before", "after", "why")} == {
        "platform": "eks", "part": "control plane", "name": "prod-eks", "key": "gpufleet:cluster.kubernetesVersion",
        "before": "1.35", "after": "1.34", "why": "is a downgrade, which eks refuses"}


def test_a_fleet_with_a_refused_move_exits_1_and_counts_it_in_the_summary(capsys, tmp_path):
    def fleet(plan: dict) -> dict:
        return {"fleet": {"summary": []}, "stacks": {"prod": plan}}

    code, out, _ = diff(capsys, tmp_path, fleet(eks_at("1.35")), fleet(eks_at("1.33")))
    assert code == EXIT_POLICY
    assert "| `prod` | 1 update | 0 + 1 refused move(s) |" in out


def test_a_k3s_server_downgrade_in_the_real_program_is_refused(capsys, tmp_path):
    """The dev example (k3s 1.36) planned by the real program, moved down to 1.35: each server's install script names
    its release, and the servers are the control plane."""
    def to_135(c):
        c["gpufleet:cluster"]["kubernetesVersion"] = "1.35"

    code, out, _ = diff(capsys, tmp_path, to_json(planned("dev", policies=True)), dev_plan(to_135),
                          "--format", "text")
    assert code == EXIT_POLICY
    refused = [line for line in out.splitlines() if line.startswith("  x ")]
    assert len(refused) == 1
    assert refused[0].startswith("  x control plane dev-k3s-server-cp-1: 1.36 → 1.35 is a downgrade, which k3s refuses; "
                                 'instead: keep cluster.kubernetesVersion: "1.36"; roll back outside gpufleet')
