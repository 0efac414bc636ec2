"""`gpufleet preview|up` before the engine: selection, shards, order, refusals (exit 2, one clear line each), the
offline plan gate, the confirmation, and the summary formats. The engine itself: tests/e2e/test_fleet.py."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from gpufleet.app.cli import main
from gpufleet.app.fleet import automation, order, summary
from gpufleet.app.fleet.command import confirm
from gpufleet.app.fleet.outcome import FAILED, NOT_STARTED, SUCCEEDED, StackOutcome
from gpufleet.app.fleet.stacks import SelectionError, discover, shard
from tests.helpers import ROOT


def project(tmp_path: Path, stacks: dict[str, str]) -> Path:
    p = tmp_path / "proj"
    (p / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", p / "Pulumi.yaml")
    (p / "policies").symlink_to(ROOT / "policies")
    for name, text in stacks.items():
        (p / "stacks" / f"Pulumi.{name}.yaml").write_text(text)
    return p


def k3s_stack(deps: list[str] | None = None) -> str:
    return (f"config:\n  gpufleet:cluster: {{platform: k3s}}\n" + (f"  gpufleet:dependsOn: {json.dumps(deps)}\n" if deps else ""))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv, message", [
    (["up", "nope", "--yes"], "gpufleet: stack 'nope': no stack file "),
    (["preview"], "gpufleet: no stack named (allowed: STACK ..., --all, or --changed-since REF)"),
    (["preview", "a", "--all"], "gpufleet: --all with STACK names: give one or the other"),
    (["preview", "--all", "--shard", "3/2"], "gpufleet: --shard '3/2': not allowed (allowed: I/N with 1 <= I <= N, e.g. 1/4)"),
    (["preview", "--all", "--shard", "0/2"], "gpufleet: --shard '0/2': not allowed"),
    (["preview", "--all", "--parallel", "0"], "gpufleet: --parallel 0: not allowed (allowed: 1 or more stacks at a time)"),
    (["preview", "--all", "--policy-pack", "nowhere"], "gpufleet: --policy-pack 'nowhere': no PulumiPolicy.yaml there"),
])
def test_bad_input_exits_2_with_one_clear_message(tmp_path, capsys, argv, message):
    p = project(tmp_path, {"a": k3s_stack(), "b": k3s_stack()})
    code, out, err = run(capsys, *argv, "--project-dir", str(p))
    assert code == 2 and out == ""
    assert err.startswith(message), err
    assert "Traceback" not in err


def test_a_dependency_on_no_stack_or_a_cycle_is_refused(tmp_path, capsys):
    p = project(tmp_path, {"a": k3s_stack(["ghost"]), "b": k3s_stack()})
    code, _, err = run(capsys, "preview", "--all", "--project-dir", str(p))
    assert code == 2
    assert err == "gpufleet: stack 'a': gpufleet:dependsOn: 'ghost' is not a stack of this project (allowed: a, b)\n"
    p = project(tmp_path / "2", {"a": k3s_stack(["c"]), "b": k3s_stack(["a"]), "c": k3s_stack(["b"]), "d": k3s_stack()})
    code, _, err = run(capsys, "preview", "--all", "--project-dir", str(p))
    assert code == 2
    assert err == "gpufleet: stacks 'a', 'b', 'c': gpufleet:dependsOn forms a cycle (allowed: dependencies without cycles)\n"
    p = project(tmp_path / "3", {"a": "config:\n  gpufleet:dependsOn: b\n"})
    code, _, err = run(capsys, "preview", "--all", "--project-dir", str(p))
    assert code == 2 and err.startswith("gpufleet: stack 'a': gpufleet:dependsOn: 'b' is not allowed (allowed: a list")


def test_a_stack_file_whose_name_pulumi_refuses_is_an_error_not_a_skip(tmp_path, capsys):
    p = project(tmp_path, {"a": k3s_stack(), "a b": k3s_stack()})
    code, out, err = run(capsys, "preview", "--all", "--project-dir", str(p))
    assert code == 2 and out == ""
    assert err == (f"gpufleet: stack file {p / 'stacks' / 'Pulumi.a b.yaml'}: the stack name 'a b' is not allowed "
                   "(allowed: [A-Za-z0-9._-]{1,100}, Pulumi's stack name rule)\n")


def test_up_refuses_without_a_terminal_and_without_yes(tmp_path, capsys):
    p = project(tmp_path, {"a": k3s_stack()})
    code, out, err = run(capsys, "up", "a", "--project-dir", str(p))  # pytest's stdin is not a terminal
    assert code == 2 and out == ""
    assert err == ("gpufleet: up of 1 stack(s) (a) needs a confirmation and stdin is not a terminal: "
                   "pass --yes to update without asking\n")


def test_confirmation_on_a_terminal():
    asked = []
    assert confirm("up", ["a", "b"], False, ask=lambda q: asked.append(q) or "y", tty=True) is None
    assert asked == ["Update 2 stack(s): a, b? [y/N] "]
    assert confirm("up", ["a"], False, ask=lambda q: "", tty=True) == "not confirmed: nothing was updated"
    assert confirm("up", ["a"], True, ask=lambda q: pytest.fail("asked despite --yes"), tty=False) is None
    assert confirm("preview", ["a"], False, ask=lambda q: pytest.fail("a preview asks nothing"), tty=False) is None


def test_up_never_starts_the_engine_when_an_offline_plan_fails(tmp_path, capsys, monkeypatch):
    dev = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    p = project(tmp_path, {"dev": dev, "typo": dev.replace("gpufleet:nodePools:", "gpufleet:nodePool:")})

    def engine(*a, **k):
        pytest.fail("the engine was started")

    monkeypatch.setattr(automation, "AutomationRunner", engine)
    code, out, err = run(capsys, "up", "dev", "typo", "--yes", "--project-dir", str(p))
    assert code == 2 and out == ""
    assert err.startswith("gpufleet: the offline plan fails, nothing was updated:\n  - ")
    assert "stack 'typo'" in err and "gpufleet:nodePool: unknown key" in err and "stack 'dev'" not in err


def test_no_stack_selected_is_an_empty_summary(tmp_path, capsys, monkeypatch):
    p = project(tmp_path, {"a": k3s_stack()})
    monkeypatch.setattr("gpufleet.app.fleet.command.changed.changed_files", lambda project, ref: ["docs/x.md"])
    code, out, err = run(capsys, "preview", "--changed-since", "main", "--format", "json", "--project-dir", str(p))
    assert code == 0 and err == "gpufleet preview: no stack selected\n"
    assert json.loads(out)["stacks"] == []


def test_shards_split_the_selection_deterministically_and_keep_dependencies_together(tmp_path):
    p = project(tmp_path, {**{f"s{i:02}": k3s_stack() for i in range(10)}, "app": k3s_stack(["s03"]),
                           "db": k3s_stack(["app"])})
    stacks = discover(p)
    names = sorted(stacks)
    shards = [shard(names, stacks, i, 3) for i in (1, 2, 3)]
    assert sorted(n for s in shards for n in s) == names  # each stack in exactly one shard
    assert shards == [shard(list(reversed(names)), stacks, i, 3) for i in (1, 2, 3)]  # input order does not matter
    (together,) = [s for s in shards if "s03" in s]
    assert {"app", "db"} <= set(together)
    assert order.order(stacks, together).index("s03") < order.order(stacks, together).index("app") < \
        order.order(stacks, together).index("db")
    assert max(map(len, shards)) - min(map(len, shards)) <= 3


def test_the_automation_calls_pass_nothing_that_lifts_protection():
    # Only these keyword arguments reach Stack.preview / Stack.up: no target, replace, skip-preview or state edits.
    runner = automation.AutomationRunner.__new__(automation.AutomationRunner)
    runner.policy_pack, runner.refresh, runner.operation = Path("/p"), True, "up"
    kwargs = runner.kwargs(automation.Events())
    assert set(kwargs) == set(automation.ARGS) == {"policy_packs", "refresh", "on_event", "color", "message"}
    assert kwargs["policy_packs"] == ["/p"] and kwargs["refresh"] is True


def test_the_lock_holder_is_named():
    diy = ("error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete "
           "the lock file with `pulumi cancel`.\n  file:///b/.pulumi/locks/organization/gpufleet/dev/0f.json: "
           "created by ann@ci-7 (pid 4242) at 2026-12-04T12:00:00Z\n")
    assert automation.lock_holder("dev", diy) == (
        "stack 'dev' is locked by another update: file:///b/.pulumi/locks/organization/gpufleet/dev/0f.json: created by "
        "ann@ci-7 (pid 4242) at 2026-12-04T12:00:00Z (nothing was run on it)")
    cloud = "error: [409] Conflict: Another update is currently in progress.\n"
    assert "another update is in progress (Pulumi Cloud" in automation.lock_holder("dev", cloud)


OUTCOMES = [
    StackOutcome("dev", SUCCEEDED, {"create": 13}, [{"policy": "gpu-observability", "level": "advisory", "urn": "u",
                                                      "message": "m"}], 5.2),
    StackOutcome("ha", FAILED, {"create": 9}, [], 1.6, "stack 'ha': <b>refused</b> | [x](http://e) @team"),
    StackOutcome("teams", NOT_STARTED, {}, [], 0.0, "not started: stack 'ha' failed first"),
]


def test_summary_in_json_text_and_markdown():
    doc = summary.to_json("up", OUTCOMES, {"dev": ["stacks/Pulumi.dev.yaml"]})
    assert (doc["changed"], doc["succeeded"], doc["failed"], doc["notStarted"], doc["exitCode"]) == \
        (["dev", "ha"], ["dev"], ["ha"], ["teams"], 1)
    assert doc["stacks"][0] == {"stack": "dev", "result": "succeeded", "changed": True, "changes": {"create": 13},
                                "mandatory": 0, "advisory": 1, "policies": OUTCOMES[0].policies, "seconds": 5.2,
                                "message": "", "selectedBecause": ["stacks/Pulumi.dev.yaml"]}
    text = summary.to_text("up", OUTCOMES)
    assert "dev    succeeded    create 13  0 mandatory, 1 advisory: gpu-observability (advisory)  5.2" in text
    assert "changed: dev, ha; failed: ha; not started: teams\n" in text
    # issue 48: an `up` that stops says which stacks it left behind, and a run that catches up says which it carries
    assert text.endswith("so the next run selects them again: ha, teams\n")
    assert doc["leftBehind"] == ["ha", "teams"] and doc["carriedOver"] == []
    carried = summary.to_text("up", OUTCOMES[:1], ["dev"])
    assert carried.endswith("left behind by an earlier run (cancelled, or stopped at a failure), deployed by this "
                            "one: dev\n")
    assert "left behind: not deployed" not in carried
    assert summary.to_json("preview", OUTCOMES)["leftBehind"] == []  # a preview deploys nothing
    assert "**Left behind: not deployed" in summary.to_markdown("up", OUTCOMES)
    md = summary.to_markdown("up", OUTCOMES)
    assert "| `dev` | succeeded | create 13 | 0 mandatory, 1 advisory: gpu-observability (advisory) | 5.2 |" in md
    # a message is literal text: no HTML, link, table cell or mention
    assert "- `ha`: stack 'ha': &lt;b&gt;refused&lt;/b&gt; &#124; \\[x\\](http://e) @&#8203;team\n" in md
    assert summary.exit_code(OUTCOMES[:1]) == 0
    assert summary.exit_code([StackOutcome("p", SUCCEEDED, {}, [{"policy": "x", "level": "mandatory", "urn": "",
                                                                  "message": ""}])]) == 1



def test_list_prints_the_selection_in_run_order_without_the_engine(tmp_path, capsys, monkeypatch):
    p = project(tmp_path, {"app": k3s_stack(["net"]), "net": k3s_stack(), "other": k3s_stack()})
    monkeypatch.setattr(automation, "AutomationRunner", lambda *a, **k: pytest.fail("the engine was started"))
    code, out, err = run(capsys, "up", "--all", "--list", "--format", "json", "--project-dir", str(p))
    assert (code, err) == (0, "")
    assert json.loads(out) == {"stacks": ["net", "app", "other"], "selectedBecause": {}}
    monkeypatch.setattr("gpufleet.app.fleet.command.changed.changed_files",
                        lambda project, ref: ["stacks/Pulumi.net.yaml"])
    code, out, err = run(capsys, "preview", "--changed-since", "main", "--list", "--project-dir", str(p))
    assert (code, out) == (0, "net  (stacks/Pulumi.net.yaml)\napp  (depends on net)\n")


class DeployedAt:
    """A stand-in for the Automation API runner: the stack's outputs as its last `up` left them, and an engine that
    must never start."""

    def __init__(self, outputs: dict):
        self.outputs = outputs

    def __call__(self, *a, **k):
        return self

    def deployed_outputs(self, stack: str) -> dict:
        return self.outputs

    def run_one(self, stack: str):
        pytest.fail("the engine was started")


@pytest.mark.parametrize("operation", ["preview", "up"])
def test_a_version_move_the_cloud_refuses_stops_the_run_before_the_engine(tmp_path, capsys, monkeypatch, operation):
    dev = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    assert 'kubernetesVersion: "1.36"' in dev
    p = project(tmp_path, {"dev": dev.replace('kubernetesVersion: "1.36"', 'kubernetesVersion: "1.35"')})
    monkeypatch.setattr(automation, "AutomationRunner", DeployedAt({"platform": "k3s", "kubernetesVersion": "1.36"}))
    monkeypatch.setattr("gpufleet.app.fleet.command.schedule.run", lambda *a, **k: pytest.fail("the engine was started"))
    yes = ["--yes"] if operation == "up" else []
    code, out, err = run(capsys, operation, "dev", *yes, "--project-dir", str(p))
    assert (code, out) == (2, "")
    lines = err.splitlines()
    assert lines[0] == f"gpufleet: a Kubernetes version move the cloud refuses, nothing was run ({operation}):"
    assert lines[1].startswith("  - stack 'dev': will fail at `pulumi up`: control plane dev-k3s-server-cp-1: 1.36 → 1.35 "
                               "is a downgrade, which k3s refuses; instead: keep cluster.kubernetesVersion: \"1.36\"")
    assert len(lines) == 2
