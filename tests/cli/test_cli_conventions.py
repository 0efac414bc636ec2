"""The CLI's habits (issue 54): --version, shell completion, JSON for every outcome under --format json, the fleet
summary by default, grouped findings naming the stack key, human cost item names, no mock placeholder in anything a
user reads, the stack name from --config's file name, actionable errors outside a project and without the Pulumi CLI
or helm, progress on a terminal only."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tomllib

import pytest

from gpufleet.app import cli, completion, progress
from gpufleet.app.cli import main
from gpufleet.app.plan import fleet
from gpufleet.app.plan.render import render, to_json
from tests.helpers import ROOT, planned


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version_is_the_packages(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert exc.value.code == 0 and capsys.readouterr().out == f"gpufleet {version}\n"


def bash_complete(script: str, *words: str) -> list[str]:
    """What the bash completion offers after `gpufleet WORDS...` (the last word is the one being completed)."""
    words_array = " ".join(f"'{w}'" for w in ("gpufleet", *words))
    probe = (f"{script}\nCOMP_WORDS=({words_array}); COMP_CWORD={len(words)}; _gpufleet_complete; "
             "printf '%s\\n' \"${COMPREPLY[@]}\"")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True, cwd="/").stdout
    return sorted(line for line in out.splitlines() if line)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completion_offers_commands_options_and_choices(capsys):
    assert run(capsys, "completion", "bash")[0] == 0
    script = completion.script("bash", cli.parser())
    assert bash_complete(script, "pl") == ["plan"]
    assert bash_complete(script, "charts", "") == ["--help", "fetch"]
    assert bash_complete(script, "plan", "--fo") == ["--format"]
    assert bash_complete(script, "plan", "--format", "") == ["json", "markdown", "text"]
    assert "--program" in bash_complete(script, "plan", "--pro")


def test_zsh_and_fish_completion_from_the_same_tree():
    zsh = completion.script("zsh", cli.parser())
    assert zsh.startswith("#compdef gpufleet\n") and "bashcompinit" in zsh and "complete -o default -F _gpufleet_complete gpufleet" in zsh
    fish = completion.script("fish", cli.parser()).splitlines()
    assert "complete -c gpufleet -n __fish_use_subcommand -a plan -d 'plan a stack offline (no Pulumi CLI or credentials needed)'" in fish
    assert "complete -c gpufleet -n '__fish_seen_subcommand_from plan' -l format -xa 'text json markdown'" in fish
    assert ("complete -c gpufleet -n '__fish_seen_subcommand_from charts && not __fish_seen_subcommand_from fetch' "
            "-a fetch -d " in "\n".join(fish))
    if shutil.which("zsh"):
        subprocess.run(["zsh", "-n"], input=zsh, text=True, check=True)
    if shutil.which("fish"):
        subprocess.run(["fish", "--no-execute"], input="\n".join(fish), text=True, check=True)


def test_json_errors_are_json_on_stdout_with_the_exit_code(tmp_path, capsys):
    bad = tmp_path / "Pulumi.mine.yaml"
    bad.write_text("config:\n  gpufleet:cluster: {platform: k3s}\n  gpufleet:nodePool: []\n")
    code, out, err = run(capsys, "plan", "--config", str(bad), "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["error"]["exitCode"] == 2
    # the stack's name comes from the file's name (Pulumi.<stack>.yaml), never a silent `dev`
    assert doc["error"]["messages"][0].startswith("invalid gpufleet config for stack 'mine'")
    assert any("gpufleet:nodePool: unknown key" in m for m in doc["error"]["messages"])
    assert err.startswith("gpufleet: invalid gpufleet config for stack 'mine'")  # stderr still says it
    code, out, err = run(capsys, "plan", "--format=json", "--no-such-flag")
    assert code == 2 and json.loads(out) == {"error": {"exitCode": 2, "messages": ["unrecognized arguments: --no-such-flag"]}}
    code, out, _ = run(capsys, "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--format", "json")
    assert code == 2 and json.loads(out)["error"]["exitCode"] == 2


def test_a_config_file_not_named_after_a_stack_needs_the_stack_name(tmp_path, capsys):
    other = tmp_path / "prod.yaml"
    other.write_text("config: {}\n")
    code, out, err = run(capsys, "plan", "--config", str(other))
    assert (code, out) == (2, "")
    assert err == (f"gpufleet: --config '{other}': name the stack (`gpufleet plan STACK --config FILE`); the file is not "
                   "named Pulumi.<stack>.yaml, the name the stack could be read from\n")


def test_outside_a_project_the_error_says_where_to_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "CHECKOUT", tmp_path / "site-packages")  # an installed wheel: no stacks/ beside it
    for argv in (["plan", "prod"], ["plan", "--all"], ["images", "prod"], ["verify", "prod"]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert err == (f"gpufleet: no stacks/ folder in {tmp_path} or above it: run gpufleet in your infrastructure "
                       "repository (the folder with Pulumi.yaml and stacks/Pulumi.<stack>.yaml), or give a stack file "
                       "(--config FILE) or a program (--program DIR); `gpufleet init DIR` creates a repository\n"), argv


def test_without_the_pulumi_cli_fleet_commands_say_how_to_get_it(tmp_path, capsys, monkeypatch):
    from gpufleet.app.fleet import automation

    proj = tmp_path / "proj"
    (proj / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", proj / "Pulumi.yaml")
    (proj / "policies").symlink_to(ROOT / "policies")
    (proj / "stacks" / "Pulumi.a.yaml").write_text("config:\n  gpufleet:cluster: {platform: k3s}\n")

    def no_cli(*a, **k):
        raise FileNotFoundError("pulumi")

    monkeypatch.setattr(automation, "AutomationRunner", no_cli)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, out, err = run(capsys, "preview", "a", "--project-dir", str(proj))
    assert (code, out) == (2, "")
    assert err == ("gpufleet: gpufleet preview runs the Pulumi CLI, and there is no `pulumi` on PATH: install it "
                   "(`curl -fsSL https://get.pulumi.com | sh`, or `brew install pulumi`: pulumi.com/docs/install), "
                   "log in to your backend (`pulumi login`), and run again; `gpufleet plan` needs neither\n")


def _result(stack: str, rendered: str) -> fleet.StackResult:
    plan = {"stack": stack, "resources": [], "violations": [], "capacity": [], "outputs": {"platform": "k3s"},
            "cost": {"hourlyMin": 1.0, "hourlyMax": 2.0, "currency": "USD"}}
    return fleet.StackResult(stack, "ok", plan, rendered=rendered)


def test_the_fleet_plan_is_a_summary_unless_details_are_asked_for():
    results = [_result("a", "PLAN OF A\n"), _result("b", "PLAN OF B\n")]
    text = fleet.render(results, "text")
    assert "PLAN OF A" not in text and "PLAN OF B" not in text
    assert text.splitlines()[0] == "gpufleet fleet plan: 2 stacks, 0-0 GPUs, idle floor 2.00 USD/h, maximum 4.00 USD/h"
    assert text.splitlines()[-1] == "each stack's plan: `gpufleet plan STACK`, or this command with --details"
    assert "PLAN OF A" in fleet.render(results, "text", details=True)
    assert "PLAN OF B" not in fleet.render(results, "markdown") and "PLAN OF B" in fleet.render(results, "markdown", True)
    assert json.loads(fleet.render(results, "json"))["stacks"]["a"]["stack"] == "a"  # JSON keeps every plan
    assert "--details" in cli.parser()._subparsers._group_actions[0].choices["plan"].format_help()


def test_findings_are_grouped_one_line_each_naming_the_stack_key():
    text = render(planned("prod-eks", policies=True), "text")
    assert text.split("\npolicies:", 1)[1].splitlines() == [
        " 0 mandatory, 3 advisory",
        "  [advisory] gpu-observability: A stack with GPUs has a metrics pipeline (Prometheus, managed or its own) "
        "that can alert on GPU faults and waste.",
        "    - gpufleet:nodePools[0] (h100-train), gpufleet:nodePools[1] (l4-infer): GPU pool has no metrics pipeline "
        "in this stack: nothing alerts on XID errors, a GPU fallen off the bus or allocated GPUs left idle. Set "
        "gpufleet:observability.metrics.backend (kube-prometheus-stack; gke-managed on GKE) or install a Prometheus "
        "that scrapes the DCGM exporter",
        "  [advisory] spot-pool-diversified: Spot GPU node groups are diversified over at least 2 instance types.",
        "    - gpufleet:nodePools[0] (h100-train): spot GPU pool draws from 1 instance type (p5.48xlarge); list at "
        "least 2 with the same GPU",
    ]


def test_nothing_a_user_reads_carries_a_mock_placeholder():
    """An unpinned add-on's version is read from AWS at deploy: plan and review say so. The AL2023 AMI release is
    pinned (issue 50): the review names both releases."""
    from gpufleet.app.review import render as review_render, review_plans

    p = planned("prod-eks", policies=True)
    head = to_json(p)
    base = json.loads(json.dumps(head))  # the same stack, its node groups on an older AMI release
    for r in base["resources"]:
        if r["type"] == "aws:eks/nodeGroup:NodeGroup":
            r["inputs"]["releaseVersion"] = "1.35.0-20251101"
    review = review_plans(base, head)
    texts = [render(p, fmt) for fmt in ("text", "json", "markdown")]
    texts += [review_render(review, fmt) for fmt in ("markdown", "text", "json")]
    assert not [t for t in texts if "placeholder" in t]
    assert "  EKS AMI release: 1.35.0-20251101 -> 1.35.6-20260714\n" in texts[4]  # the text review
    assert "  EKS add-on aws-ebs-csi-driver: EKS's default for Kubernetes 1.35 at deploy\n" in texts[4]


def test_cost_items_have_human_names_not_chart_sources():
    items = [i.name for i in planned("existing-coreweave").cost.items]
    assert "Prometheus volume of kube-prometheus-stack" in items  # its release has the chart's name
    assert not [i for i in items if "://" in i or len(i) > 100]


def test_progress_only_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert progress.reporter("planned", io.StringIO()) is None
    tty = Terminal()
    report = progress.reporter("planned", tty)
    report(1, 26, "ai-on-eks")
    assert tty.getvalue() == "[1/26] ai-on-eks planned\n"


def test_charts_fetch_reports_each_chart_and_how_to_get_helm(tmp_path, monkeypatch):
    from gpufleet.app.charts_fetch import Pin, fetch
    from gpufleet.base import versions

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    seen = []
    [result] = fetch([Pin("KUEUE", versions.KUEUE)], tmp_path / "charts", progress=lambda *a: seen.append(a))
    assert seen == [(1, 1, f"kueue {versions.KUEUE.version}")]
    assert "no helm on PATH; install Helm 3 (helm.sh/docs/intro/install) and run again" in result.message


def test_fleet_runs_report_each_stack_on_a_terminal():
    from gpufleet.app.fleet.command import with_progress
    from gpufleet.app.fleet.outcome import SUCCEEDED, StackOutcome

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    def engine(stack):
        return StackOutcome(stack, SUCCEEDED)

    assert with_progress(engine, 2, io.StringIO()) is engine  # a pipe or a CI log: unchanged
    tty = Terminal()
    run_one = with_progress(engine, 2, tty)
    assert [run_one(s).result for s in ("net", "app")] == [SUCCEEDED, SUCCEEDED]
    assert tty.getvalue() == "[1/2] net (succeeded) finished\n[2/2] app (succeeded) finished\n"
