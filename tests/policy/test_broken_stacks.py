"""The broken-stack corpus: each file holds one misconfiguration and names, in its `# expect:` header,
the rule that must catch it. `gpufleet plan --config FILE` exits 1 with exactly that mandatory rule;
every example stack in stacks/ exits 0."""

from __future__ import annotations

import json
import re

import pytest

from gpufleet.app import cli
from gpufleet.policies.pack import POLICIES
from tests.helpers import ROOT, STACKS

BROKEN = sorted((ROOT / "tests" / "fixtures" / "broken_stacks").glob("*.yaml"))
EXPECT = re.compile(r"^# expect: (\S+)$", re.M)


def plan(capsys, *args: str) -> tuple[int, dict]:
    code = cli.main(["plan", *args, "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def test_corpus_is_there():
    assert len(BROKEN) >= 20
    rules = {EXPECT.search(p.read_text()).group(1) for p in BROKEN}
    assert rules <= {p.name for p in POLICIES}


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_stack_exits_1_naming_its_rule(capsys, path):
    expected = EXPECT.search(path.read_text()).group(1)
    code, result = plan(capsys, "broken", "--config", str(path))
    assert code == 1
    assert {v["policy"] for v in result["violations"] if v["level"] == "mandatory"} == {expected}


@pytest.mark.parametrize("stack", STACKS)
def test_example_stack_exits_0(capsys, stack):
    code, result = plan(capsys, stack)
    assert code == 0
    assert [v for v in result["violations"] if v["level"] == "mandatory"] == []


VALID = sorted((ROOT / "tests" / "fixtures" / "valid_stacks").glob("*.yaml"))


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_formerly_broken_stack_now_plans_clean(capsys, path):
    """Stacks an old catalog fact refused (issue 12): they must plan with no mandatory violation."""
    code, result = plan(capsys, "valid", "--config", str(path))
    assert code == 0
    assert [v for v in result["violations"] if v["level"] == "mandatory"] == []
