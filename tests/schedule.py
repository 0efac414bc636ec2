"""How `make test` hands the test files to its two workers (`-n 2 --dist loadfile`).

A file is one unit of work, so its module fixtures (a fleet plan, a wheel, shared plans) run once. xdist hands out
the units in a queue; whatever is handed out last decides how long one worker waits for the other at the end. So the
queue is: the heaviest files first, in the order below, then every other file as collected, and last the files whose
tests share nothing (SPREAD), one test per unit: short units that fill in whichever worker runs dry first.

Both lists are hints measured with `--durations` (bench/README.md, "Test suite time"): a file missing from them, or a
name that is stale, costs balance, never a test.
"""

from __future__ import annotations

# Most seconds first (2026-12-04, tests phase 176 s on 2 cores): each is 15 s or more of one worker's time.
HEAVIEST_FIRST = (
    "tests/cli/test_fleet.py",
    "tests/upstream/test_registry_mirror_render.py",
    "tests/cli/test_refresh_changes_plan.py",
    "tests/component/test_component_package.py",
    "tests/unit/test_catalog_refresh_gcp_clients.py",
    "tests/cli/test_plan_cli.py",
    "tests/upstream/test_chart_renders.py",
    "tests/cli/test_gke_cli.py",
    "tests/cli/test_review_plan_shape.py",
    "tests/cli/test_unreadable_inputs.py",
    "tests/cli/test_imports.py",
    "tests/policy/test_servicer.py",
    "tests/cli/test_eks_cli.py",
    "tests/policy/test_grpc_harness.py",
)
# Files whose tests use no module or session fixture of their own: each test may run on either worker. The sweep is
# the suite's largest file (26 stacks, about a sixth of the tests phase); as one unit it kept one worker busy alone.
SPREAD = (
    "tests/cli/test_no_traceback_sweep.py",
)
# The spread units that take longest, first among them (the sweep's stacks with most leaves that still plan, measured
# 2026-12-05: 6 to 10 s each on a quiet VM, the others 1 to 4 s): the last units handed out are then the short ones.
SPREAD_HEAVIEST_FIRST = ("[gitops-k3s]", "[nvl72-k3s]", "[inference-k3s]", "[teams]", "[airgap-k3s]", "[lab]",
                         "[existing-coreweave]", "[amd-lab]", "[teams-eks]", "[dws-gke]")


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def rank(nodeid: str) -> tuple[int, int]:
    """Where a test's unit goes in the queue: the heaviest files by their place in HEAVIEST_FIRST, then the others,
    then the spread files' tests, the heaviest of them first."""
    path = file_of(nodeid)
    if path in HEAVIEST_FIRST:
        return HEAVIEST_FIRST.index(path), 0
    if path not in SPREAD:
        return len(HEAVIEST_FIRST), 0
    heavy = [i for i, suffix in enumerate(SPREAD_HEAVIEST_FIRST) if nodeid.endswith(suffix)]
    return len(HEAVIEST_FIRST) + 1, heavy[0] if heavy else len(SPREAD_HEAVIEST_FIRST)


def scheduler(config, log):
    """xdist's loadfile scheduling with the units above, handed out in collection order (tests/conftest.py sorts the
    items by `rank`; xdist would otherwise reorder the units by their number of tests)."""
    from xdist.scheduler import LoadFileScheduling

    class HeaviestFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if file_of(nodeid) in SPREAD else super()._split_scope(nodeid)

    config.option.loadscopereorder = False
    return HeaviestFirst(config, log)
