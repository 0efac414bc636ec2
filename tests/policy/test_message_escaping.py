"""Policy violation messages reach a terminal or a CI log as inert text (issue 48).

A rule's message echoes resource inputs (a pool's name, a label value, a reason), and the pack judges any Pulumi
program, so those inputs are not limited to what gpufleet's spec accepts. Every message leaves the pack through one
reporter (policies/servicer.py `_create_report_violation`) that writes it as one printable line with no workflow
command: no newline to start a line of its own, no terminal escape, no `::` that a GitHub runner would act on after
leading whitespace, no legacy `##[` anywhere (actions/runner ActionCommand.cs TryParseV2 / TryParse)."""

from __future__ import annotations

from gpufleet.policies import inputs as I
from tests.policy.fixtures import NODE_GROUP_IN, messages, res, with_

P = "gpu-pool-scale-to-zero"
HOSTILE = "h100\n  ::error title=owned::pwned\x1b]0;title\x07\x1b[2J ##[warning]legacy \u202eevil"


def _commands(text: str) -> list[str]:
    """The lines of `text` a GitHub runner would run as workflow commands."""
    return [line for line in text.split("\n") if line.lstrip().startswith("::") or "##[" in line]


def test_a_hostile_pool_name_is_echoed_inert():
    stack = [res(I.EKS_NODE_GROUP, HOSTILE, with_({**NODE_GROUP_IN, "nodeGroupName": HOSTILE}, "scalingConfig.minSize", 1.0))]
    found = messages(stack, P)
    assert len(found) == 2  # minSize 1, and no autoscaler in this stack
    for message in found:
        description, _, echoed = message.partition("\n")  # upstream joins the rule's description and the message
        assert "\n" not in echoed and "\x1b" not in message and "\x07" not in message and "\u202e" not in message
        assert _commands(message) == []
        # The value is still there for the reader, escaped: nothing of it is dropped.
        assert echoed.startswith("GPU pool 'h100\\n  ::error title=owned::pwned\\x1b]0;title\\x07\\x1b[2J "
                                 "#\\#[warning]legacy \\u202eevil': ")


def test_a_hostile_label_value_at_the_start_of_a_message_is_not_a_command():
    """A message that would start with `::` (after whitespace) is written with a backslash in front."""
    from gpufleet.base.spec.errors import inert, printable

    assert printable("  ::set-output name=x::y") == "  \\::set-output name=x::y"
    assert inert("\u00a0::add-mask::x") == "\u00a0\\::add-mask::x"  # non-breaking space: the runner trims it too
    assert printable("pool a::b ###[group]") == "pool a::b ##\\#[group]"
