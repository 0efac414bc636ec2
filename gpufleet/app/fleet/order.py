"""The order stacks run in: a stack after every stack its `gpufleet:dependsOn` names (it reads their outputs through
a StackReference), otherwise by name. No stack file of this project derives a dependency from another key (no config
key names another stack), so `dependsOn` is the one source; docs/fleet.md."""

from __future__ import annotations

from gpufleet.app.fleet.stacks import DEPENDS_ON, FleetStack, SelectionError


def check(stacks: dict[str, FleetStack]) -> None:
    """Every `dependsOn` names a stack of the project, and no stack depends on itself through others."""
    problems = []
    for s in stacks.values():
        for d in s.depends_on:
            if d not in stacks:
                problems.append(f"stack '{s.name}': {DEPENDS_ON}: '{d}' is not a stack of this project "
                                f"(allowed: {', '.join(sorted(stacks))})")
    if problems:
        raise SelectionError("\n".join(problems))
    order(stacks, sorted(stacks))


def within(stacks: dict[str, FleetStack], selected: list[str]) -> dict[str, set[str]]:
    """Each selected stack's dependencies that are selected too (the others are not part of this run)."""
    chosen = set(selected)
    return {n: {d for d in stacks[n].depends_on if d in chosen} for n in selected}


def order(stacks: dict[str, FleetStack], selected: list[str]) -> list[str]:
    """Dependencies first, ties by name; a cycle is a SelectionError naming its stacks."""
    deps = within(stacks, selected)
    done: list[str] = []
    left = sorted(selected)
    while left:
        ready = [n for n in left if deps[n] <= set(done)]
        if not ready:
            raise SelectionError(f"stacks {', '.join(repr(n) for n in left)}: {DEPENDS_ON} forms a cycle "
                                 "(allowed: dependencies without cycles)")
        done.append(ready[0])
        left.remove(ready[0])
    return done
