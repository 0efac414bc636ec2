"""Shell completion for bash, zsh and fish, generated from the CLI's own argparse parser: `gpufleet completion SHELL`.

Hand-written rather than a dependency (argcomplete, shtab): the tree is small (commands, their subcommands, their
options and the options' fixed choices) and read from the parser, so it cannot drift from the CLI. Positional
arguments other than subcommands complete as files (stack names are file names under stacks/, which the shells'
own file completion handles better). Install:

    gpufleet completion bash > ~/.local/share/bash-completion/completions/gpufleet
    gpufleet completion zsh  > "${fpath[1]}/_gpufleet"       # or: source <(gpufleet completion zsh)
    gpufleet completion fish > ~/.config/fish/completions/gpufleet.fish
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass, field

SHELLS = ("bash", "zsh", "fish")


@dataclass
class Command:
    """One command of the tree: its path (`plan`, `charts fetch`), subcommands, options, option choices, help."""

    path: tuple[str, ...]
    help: str = ""
    subcommands: dict[str, "Command"] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    choices: dict[str, list[str]] = field(default_factory=dict)


def tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = (), help_text: str = "") -> Command:
    """The command tree under `parser`, read from its actions."""
    node = Command(path, help_text)
    for action in parser._actions:  # argparse keeps no public list of its actions
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                node.subcommands[name] = tree(sub, (*path, name), helps.get(name, ""))
        elif action.option_strings:
            long = [o for o in action.option_strings if o.startswith("--")]
            node.options += long or action.option_strings
            if action.choices:
                for option in action.option_strings:
                    node.choices[option] = [str(c) for c in action.choices]
    return node


def _walk(node: Command):
    yield node
    for sub in node.subcommands.values():
        yield from _walk(sub)


def _pattern(path: tuple[str, ...]) -> str:
    """A bash `case` pattern matching the command path literally (the root: the empty string)."""
    return shlex.quote(" ".join(path)) if path else '""'


def bash(root: Command, prog: str = "gpufleet") -> str:
    """A bash completion function: the words typed so far (options skipped) pick the command, then its
    subcommands and options complete, or an option's choices after it."""
    cases = []
    for node in _walk(root):
        key = " ".join(node.path)
        words = " ".join([*node.subcommands, *node.options])
        choice_cases = "".join(f"            {shlex.quote(o)}) COMPREPLY=($(compgen -W {shlex.quote(' '.join(c))} -- \"$cur\")); return;;\n"
                               for o, c in node.choices.items())
        cases.append(f"        {_pattern(node.path)})\n"
                     f"          case \"$prev\" in\n{choice_cases}          esac\n"
                     f"          words={shlex.quote(words)};;\n")
    function = f"_{prog.replace('-', '_')}_complete"
    return (
        f"# bash completion for {prog} (`{prog} completion bash`)\n"
        f"{function}() {{\n"
        "    local cur prev path words i w\n"
        "    cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
        "    prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
        "    path=\"\"\n"
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        "        w=\"${COMP_WORDS[i]}\"\n"
        "        case \"$w\" in -*) continue;; esac\n"
        "        case \" $(_" + prog.replace('-', '_') + "_subcommands \"$path\") \" in\n"
        "            *\" $w \"*) path=\"${path:+$path }$w\";;\n"
        "        esac\n"
        "    done\n"
        "    case \"$path\" in\n"
        + "".join(cases)
        + "    esac\n"
        "    if [[ \"$cur\" == -* || -n \"$(_" + prog.replace('-', '_') + "_subcommands \"$path\")\" ]]; then\n"
        "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
        "    else\n"
        "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "    fi\n"
        "}\n"
        f"_{prog.replace('-', '_')}_subcommands() {{\n"
        "    case \"$1\" in\n"
        + "".join(f"        {_pattern(n.path)}) echo {shlex.quote(' '.join(n.subcommands))};;\n"
                  for n in _walk(root) if n.subcommands)
        + "    esac\n"
        "}\n"
        f"complete -o default -F {function} {prog}\n"
    )


def zsh(root: Command, prog: str = "gpufleet") -> str:
    """zsh runs the bash function through its bashcompinit layer (part of zsh since 4.2)."""
    return (f"#compdef {prog}\n# zsh completion for {prog} (`{prog} completion zsh`): the bash completion through "
            "zsh's bashcompinit\nautoload -U +X bashcompinit && bashcompinit\n" + bash(root, prog))


def fish(root: Command, prog: str = "gpufleet") -> str:
    """One `complete` line per subcommand and option, conditioned on the subcommands typed before it."""
    lines = [f"# fish completion for {prog} (`{prog} completion fish`)", f"complete -c {prog} -f"]

    def condition(path: tuple[str, ...], node: Command) -> str:
        if not path:
            return "__fish_use_subcommand"
        seen = " && ".join(f"__fish_seen_subcommand_from {shlex.quote(p)}" for p in path)
        if node.subcommands:
            subs = " ".join(shlex.quote(s) for s in node.subcommands)
            return f"{seen} && not __fish_seen_subcommand_from {subs}"
        return seen

    for node in _walk(root):
        when = shlex.quote(condition(node.path, node))
        for name, sub in node.subcommands.items():
            lines.append(f"complete -c {prog} -n {when} -a {shlex.quote(name)} -d {shlex.quote(sub.help[:80])}")
        seen_only = shlex.quote(condition(node.path, Command(node.path)))
        for option in node.options:
            flag = f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
            choices = node.choices.get(option)
            extra = f" -xa {shlex.quote(' '.join(choices))}" if choices else ""
            lines.append(f"complete -c {prog} -n {seen_only} {flag}{extra}")
    return "\n".join(lines) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    root = tree(parser)
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](root, parser.prog)
