"""`gpufleet diff` reads plan files that may have been edited anywhere: every value of a plan, replaced by a value of
the wrong type, is one line naming the file and the key (exit 2) or is still reviewed, never a traceback
(gpufleet/app/review/plan_document.py)."""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest

from gpufleet.app import cli
from tests.review_plans import dev_plan

WRONG = ["x", None, [], {}, -1, 1.5, True]


def _paths(value, path=()):
    """Every key path of a plan, the first two items of each list only."""
    if path:
        yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):
            yield from _paths(item, (*path, i))


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("plans") / "base.json"
    plan = dev_plan()
    path.write_text(json.dumps(plan))
    return path, plan


def _diff(base_path, head: dict, tmp_path, fmt: str) -> tuple[int, str]:
    head_path = tmp_path / "head.json"
    head_path.write_text(json.dumps(head))
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(["diff", str(base_path), str(head_path), "--format", fmt])
    return code, err.getvalue()


def test_every_wrong_value_is_refused_or_reviewed_never_a_crash(base, tmp_path):
    base_path, plan = base
    assert _diff(base_path, plan, tmp_path, "markdown")[0] == 0  # the unchanged plan is reviewed
    refused = 0
    for path in _paths(plan):
        if path[0] == "resources" and len(path) > 3:
            continue  # resource inputs are free-form: their values are compared, not typed
        for bad in WRONG:
            head = copy.deepcopy(plan)
            node = head
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = bad
            code, err = _diff(base_path, head, tmp_path, "markdown")
            assert code in (0, 1, 2), (path, bad)
            assert "Traceback" not in err, (path, bad)
            if code == 2:
                refused += 1
                assert err.startswith("gpufleet: ") and err.count("\n") == 1, (path, bad, err)
    assert refused > 100


def test_the_refusal_names_the_file_the_key_and_the_type(base, tmp_path):
    base_path, plan = base
    head = copy.deepcopy(plan)
    head["capacity"][0]["pricePerNodeHour"] = "cheap"
    code, err = _diff(base_path, head, tmp_path, "text")
    assert code == 2
    assert "head.json" in err and "capacity[0].pricePerNodeHour: expected a number (got 'cheap')" in err
