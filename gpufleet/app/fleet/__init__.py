"""Fleet operations through the real engine: `gpufleet preview` and `gpufleet up` over many stacks (docs/fleet.md).

`stacks.py` reads the project's stack files and picks a selection (names, --all, --shard); `changed.py` decides which
stacks a git change touches (--changed-since); `order.py` orders them by `gpufleet:dependsOn`; `schedule.py` runs them
(parallel, stop starting new ones after a failure); `automation.py` runs one stack through Pulumi's Automation API and
the real CLI; `summary.py` renders the table; `command.py` is the CLI command.
"""
