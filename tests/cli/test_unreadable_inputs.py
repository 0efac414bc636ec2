"""Files the command cannot read (issue 31): not UTF-8, nested deeper than any stack needs, YAML aliases that
expand to millions of values, a malformed kubeconfig. Each gets exit 2 and one line on stderr naming the file
and the reason, never a traceback, and nothing is planned (docs/security.md ("Inputs gpufleet reads")).

Run as the user runs it (`python -m gpufleet.app.cli` in a fresh process, with 1 GiB of address space), so a
RecursionError, a MemoryError or a crash shows as what it is.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpufleet.base import limits
from tests.helpers import ROOT

DEV = ROOT / "stacks" / "Pulumi.dev.yaml"
MEMORY = 1 << 30


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def gpufleet(*argv: str, cwd: Path = ROOT) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "gpufleet.app.cli", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120, preexec_fn=_limit_memory)
    return done.returncode, done.stdout, done.stderr


def assert_refused(result: tuple[int, str, str], *fragments: str) -> None:
    code, out, err = result
    assert "Traceback" not in err, err[-3000:]
    assert (code, out) == (2, ""), err[-3000:]
    assert len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


def deep_flow(levels: int) -> str:
    return "[" * levels + "]" * levels


def alias_bomb(indent: str = "  ") -> str:
    """Nine levels of nine aliases each: 9**9 (387 million) strings once expanded, in ten short lines."""
    lines = [f'{indent}a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{indent}{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def dev_with(extra: str) -> str:
    return DEV.read_text().rstrip("\n") + "\n" + extra


STACK_FILES = {
    "not-utf8": (DEV.read_bytes().replace(b"gpu-a100-1", b"gpu-\xff\xfe-1"), ["is not UTF-8 text: byte 0xff"]),
    "latin-1": ("config:\n  gpufleet:cluster: {name: 'caf\xe9'}\n".encode("latin-1"), ["is not UTF-8 text: byte 0xe9"]),
    "deep-flow": (dev_with(f"  other:deep: {deep_flow(5000)}\n"),
                  [f"maps and lists nest deeper than {limits.STACK_FILE_MAX_DEPTH} levels at line"]),
    "deep-block": (dev_with("".join("  " * (i + 1) + f"k{i}:\n" for i in range(1, 40)) + "  " * 41 + "x: 1\n"),
                   [f"nest deeper than {limits.STACK_FILE_MAX_DEPTH} levels"]),
    # in another namespace than gpufleet's, the spec never looks at it: the plan would hand it, expanded, to the
    # program's config (9**9 strings: a MemoryError after a long time)
    "alias-bomb": (dev_with("  other:lol:\n" + alias_bomb("    ")), ["more than 100,000 values once its aliases are expanded"]),
    "alias-bomb-in-spec": (dev_with("  gpufleet:workloads:\n    cudaVersions: *i\n").replace("config:\n", "x-bomb:\n" + alias_bomb() + "config:\n", 1)
                           .replace('  gpufleet:workloads:\n    cudaVersions: ["12.8"]\n', ""),
                           ["more than 100,000 values"]),
    "recursive-alias": (dev_with("  other:loop: &loop [1, *loop]\n"), ["refers to a map or list that contains it"]),
    "not-yaml": ("config: [1, 2\n", ["is not valid YAML at line 2, column 1"]),
    "nul": ("config:\n  gpufleet:cluster: {name: \"a\x00b\"}\n", ["is not valid YAML: character #x0000 at offset 37 (control characters are not allowed)"]),
}


@pytest.mark.parametrize("case", sorted(STACK_FILES))
def test_plan_refuses_an_unreadable_stack_file(tmp_path, case):
    content, fragments = STACK_FILES[case]
    path = tmp_path / "Pulumi.x.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert_refused(gpufleet("plan", "x", "--config", str(path)), f"gpufleet: stack 'x': stack file {path}", *fragments)


def test_the_limits_leave_room_for_every_example_stack():
    """Nesting 32 deep is allowed, 33 is not; every stack in stacks/ nests 9 at most and expands to ~160 values."""
    from gpufleet.app.input_files import InputFileError, parse_yaml

    assert parse_yaml(deep_flow(limits.STACK_FILE_MAX_DEPTH), "x") is not None
    with pytest.raises(InputFileError, match="deeper than 32 levels at line 1, column 33"):
        parse_yaml(deep_flow(limits.STACK_FILE_MAX_DEPTH + 1), "x")
    for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        assert parse_yaml(path.read_text(), str(path)) == yaml.safe_load(path.read_text())
        assert limits.depth(yaml.safe_load(path.read_text())) <= 10
    ok = "a: &a [" + ", ".join(["x"] * 99) + "]\nb: [" + ", ".join(["*a"] * 500) + "]\n"  # about 50,000 values expanded
    assert len(parse_yaml(ok, "x")["b"]) == 500


def test_plan_all_reports_an_unreadable_stack_file_and_plans_nothing(tmp_path):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_bytes(b"config:\n  gpufleet:cluster: {name: \"\xff\"}\n")
    (tmp_path / "stacks" / "Pulumi.deep.yaml").write_text(f"config:\n  other:x: {deep_flow(3000)}\n")
    code, out, err = gpufleet("plan", "--all", "--format", "json", cwd=tmp_path)
    assert code == 2 and "Traceback" not in err, err[-3000:]
    assert sorted(err.splitlines()) == [
        f"gpufleet: stack 'bad': stack file {tmp_path / 'stacks' / 'Pulumi.bad.yaml'} is not UTF-8 text: byte 0xff at offset 36 (line 2)",
        f"gpufleet: stack 'deep': stack file {tmp_path / 'stacks' / 'Pulumi.deep.yaml'}: maps and lists nest deeper than 32 "
        "levels at line 2, column 42",
    ]
    assert {s: p.get("resources") for s, p in json.loads(out)["stacks"].items()} == {"bad": None, "deep": None}


def _kubeconfig(**overrides) -> dict:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1"}}],
           "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
           "users": [{"name": "u", "user": {"token": "t"}}]}
    doc.update(overrides)
    return doc


KUBECONFIGS = {
    "not-yaml": ("apiVersion: v1\nclusters: [\n", "is not valid YAML at line 3, column 1: expected the node content"),
    "not-utf8": (b"apiVersion: v1\ncurrent-context: \xff\n", "is not UTF-8 text: byte 0xff at offset 32 (line 2)"),
    "deep": (f"apiVersion: v1\npreferences: {deep_flow(3000)}\n", "maps and lists nest deeper than 32 levels"),
    "alias-bomb": ("apiVersion: v1\npreferences:\n" + alias_bomb(), "more than 100,000 values"),
    "a-list": ("- apiVersion: v1\n", "must be a map (kind: Config), not a list"),
    "context-a-number": (json.dumps(_kubeconfig(contexts=[{"name": "c", "context": 5}])),
                         "contexts[0].context must be a map, not a number"),
    "clusters-a-number": (json.dumps(_kubeconfig(clusters=5)), "clusters must be a list of named clusters, not a number"),
    "user-a-string": (json.dumps(_kubeconfig(users=["u"])), "users[0] must be a map with `name` and `user`, not a string"),
    "current-context-a-list": (json.dumps(_kubeconfig(**{"current-context": ["c"]})),
                               "current-context must be a string, not a list"),
}


@pytest.mark.parametrize("case", sorted(KUBECONFIGS))
def test_verify_refuses_a_malformed_kubeconfig(tmp_path, case):
    content, reason = KUBECONFIGS[case]
    path = tmp_path / "kubeconfig"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert_refused(gpufleet("verify", "dev", "--kubeconfig", str(path), "--timeout", "1"), f"gpufleet: kubeconfig {path}", reason)


def test_verify_checks_every_file_of_the_kubeconfig_path_list(tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.write_text(json.dumps(_kubeconfig()))
    bad.write_text("- not a kubeconfig\n")
    assert_refused(gpufleet("verify", "dev", "--kubeconfig", f"{good}:{tmp_path / 'missing'}:{bad}", "--timeout", "1"),
                   f"gpufleet: kubeconfig {bad}: must be a map")


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "dev.json"
    path.write_text(json.dumps({"stack": "dev", "resources": []}))
    return path


def deep_plan(levels: int) -> str:
    return json.dumps({"stack": "dev", "resources": [{"urn": "u", "type": "t", "inputs": "@"}]}).replace(
        '"@"', deep_flow(levels))


@pytest.mark.parametrize("levels", [200, 5000])
def test_diff_refuses_a_plan_nested_too_deep(tmp_path, plan_file, levels):
    """200 levels still decode, and the review's own walk (flatten) would recurse; 5000 no longer decode."""
    head = tmp_path / "head.json"
    head.write_text(deep_plan(levels))
    assert_refused(gpufleet("diff", str(plan_file), str(head)),
                   f"gpufleet: plan {head}: maps and lists nest deeper than {limits.JSON_MAX_DEPTH} levels")


def test_diff_refuses_a_plan_that_is_not_utf8(tmp_path, plan_file):
    head = tmp_path / "head.json"
    head.write_bytes(b'{"stack": "d\xe9v", "resources": []}')
    assert_refused(gpufleet("diff", str(plan_file), str(head)), f"gpufleet: plan {head} is not UTF-8 text: byte 0xe9 at offset 12")


def test_report_refuses_deep_or_binary_preview_and_event_log(tmp_path):
    preview, events = tmp_path / "preview.json", tmp_path / "events.jsonl"
    preview.write_text('{"steps": [{"op": "same", "urn": "u", "newState": ' + deep_flow(5000) + "}]}")
    assert_refused(gpufleet("report", "--preview-json", str(preview)),
                   f"gpufleet: preview JSON {preview}: maps and lists nest deeper than {limits.JSON_MAX_DEPTH} levels")
    good = ROOT / "tests" / "fixtures" / "review" / "preview-eks.json"
    events.write_text('Installing policy pack\n{"policyEvent": ' + '{"a": ' * 5000 + "1" + "}" * 5001 + "\n")
    assert_refused(gpufleet("report", "--preview-json", str(good), "--event-log", str(events)),
                   f"gpufleet: event log {events} line 2: maps and lists nest deeper than {limits.JSON_MAX_DEPTH} levels")
    events.write_bytes(b'{"policyEvent": {"message": "\xff"}}\n')
    assert_refused(gpufleet("report", "--preview-json", str(good), "--event-log", str(events)),
                   f"gpufleet: event log {events} is not UTF-8 text")
