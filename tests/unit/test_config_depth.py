"""Config values nested deeper than any stack needs, as `pulumi up` hands them to the program (JSON strings: the
Pulumi CLI parsed the stack file itself): a SpecError naming the stack and the key, never a RecursionError
(gpufleet/base/spec/checks/depth_checks.py, docs/security.md ("Inputs gpufleet reads"))."""

from __future__ import annotations

import json

import pytest

from gpufleet.base import limits
from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import example


def nested(levels: int, leaf="x"):
    value = leaf
    for _ in range(levels - 1):
        value = [value]
    return [value] if levels else value


@pytest.mark.parametrize("value", [
    "[" * 5000 + "]" * 5000,  # json's decoder itself would raise RecursionError
    json.dumps({"platform": "k3s", "k3s": nested(limits.CONFIG_VALUE_MAX_DEPTH)}),  # decodes: 31 levels
    {"platform": "k3s", "k3s": nested(3000)},  # an object, as `gpufleet plan` passes a file's values
], ids=["json-5000", "json-31", "object-3001"])
def test_a_value_nested_too_deep_is_one_problem_naming_the_key(value):
    config = dict(example("dev").config)
    config["gpufleet:cluster"] = value
    with pytest.raises(SpecError) as caught:
        load_spec("deep", config)
    assert str(caught.value).splitlines() == [
        "invalid gpufleet config for stack 'deep' (1 problem):",
        "  - stack 'deep': gpufleet:cluster: maps and lists nest deeper than allowed (at most 30 levels in a config "
        "value, 32 in the stack file)",
    ]


def test_the_limit_itself_is_allowed_and_other_namespaces_and_secrets_are_not_read():
    config = dict(example("dev").config)
    config["gpufleet:workloads"] = json.dumps({"cudaVersions": ["12.8"], "x": nested(limits.CONFIG_VALUE_MAX_DEPTH - 1)})
    with pytest.raises(SpecError) as caught:
        load_spec("dev", config)
    assert "nest deeper" not in str(caught.value) and "gpufleet:workloads.x: unknown key" in str(caught.value)
    config = dict(example("dev").config)
    config["gpufleet:sshPrivateKey"] = "[" * 5000 + "]" * 5000
    assert load_spec("dev", config, {"gpufleet:sshPrivateKey"}).cluster.platform == "k3s"
    # Another namespace's deep value is not walked either: its key is refused by name (issue 48, stack_keys.py).
    config["aws:deep"] = "[" * 5000 + "]" * 5000
    with pytest.raises(SpecError) as caught:
        load_spec("dev", config, {"gpufleet:sshPrivateKey"})
    assert [p.path for p in caught.value.problems] == ["aws:deep"] and "nest deeper" not in str(caught.value)


def test_under_pulumi_up_it_is_a_run_error(monkeypatch):
    import pulumi

    from gpufleet.app import program

    config = {k: v if isinstance(v, str) else json.dumps(v) for k, v in example("dev").config.items()}
    config["gpufleet:nodePools"] = "[" * 5000 + "]" * 5000
    monkeypatch.setattr(program, "stack_config", lambda: (config, {"gpufleet:sshPrivateKey"}))
    with pytest.raises(pulumi.RunError, match=r"gpufleet:nodePools: maps and lists nest deeper than allowed"):
        program.load_stack_spec()
