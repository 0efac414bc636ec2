"""Stack values echoed in messages are escaped (issue 48): an `aws:region` (or a key, or the stack's name) holding a
newline, a terminal escape or a bidirectional override reaches the terminal and the CI log as its Python escape, on
the problem's own line, so no line starts with a GitHub Actions workflow command (`::error::`, `::set-output`) and no
escape sequence is sent to the terminal."""

from __future__ import annotations

import pytest

from gpufleet.app.cli import main
from gpufleet.base.spec import Problem, SpecError, load_spec
from gpufleet.base.spec.text import CONTROL
from tests.helpers import example_config

HOSTILE = "us-east-1\n::error::pwned \x1b[31m\u202e"


def _lines_are_safe(text: str) -> None:
    for line in text.splitlines():
        assert not CONTROL.search(line), line
        assert not line.lstrip().startswith("::"), line


def test_a_hostile_region_is_escaped_in_every_problem_that_echoes_it():
    config = example_config("prod-eks")
    config["aws:region"] = HOSTILE
    with pytest.raises(SpecError) as exc:
        load_spec("test", config)
    text = str(exc.value)
    _lines_are_safe(text)
    # The stack-file allow-list judges aws:region by its shape first and never echoes a value it refuses
    # (gpufleet/base/spec/checks/stack_keys.py); the escaping of an echoed value is the test below this one.
    assert "stack 'test': aws:region: must be an AWS region code" in text and "pwned" not in text
    assert text.count("\n") == len(exc.value.problems)


def test_the_stack_name_path_and_message_are_escaped():
    problem = Problem("st\x1b]0;title\x07ack", "gpufleet:cluster.eks\n::set-output name=x::y", "bad\r\nvalue", "v\n")
    assert str(problem) == ("stack 'st\\x1b]0;title\\x07ack': gpufleet:cluster.eks\\n::set-output name=x::y: "
                            "bad\\r\\nvalue (got 'v\\n')")


def test_the_plan_command_prints_the_escaped_problems(tmp_path, capsys):
    import yaml

    config = example_config("prod-eks")
    config["aws:region"] = HOSTILE
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    assert main(["plan", "x", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "aws:region: must be an AWS region code" in err and "pwned" not in err  # refused by shape, not echoed
    _lines_are_safe(err)
