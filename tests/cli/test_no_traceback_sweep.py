"""Bad input never gives a traceback: every leaf of every example stack, replaced by a wrong value,
either still plans (exit 0/1) or is rejected with a message (exit 2)."""

import contextlib
import copy
import io

import pytest
import yaml

from gpufleet.app import cli
from tests.helpers import ROOT, STACKS

# libyaml's emitter: the same YAML text as yaml.safe_dump, 4x faster over the sweep's ~1,750 files.
YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

BAD_VALUES = [None, "bogus", -1, {}]


def _leaf_paths(obj, path=()):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield from _leaf_paths(value, path + (key,))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _leaf_paths(value, path + (i,))
    else:
        yield path


@pytest.mark.parametrize("stack", STACKS)
def test_every_wrong_leaf_exits_cleanly(stack, tmp_path):
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    paths = [p for p in _leaf_paths(doc["config"]) if str(p[0]).startswith("gpufleet:")]
    assert paths
    target = tmp_path / "Pulumi.sweep.yaml"
    exits = set()
    for path in paths:
        for bad in BAD_VALUES:
            mutated = copy.deepcopy(doc)
            node = mutated["config"]
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = bad
            target.write_text(yaml.dump(mutated, Dumper=YAML_DUMPER))
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                code = cli.main(["plan", "sweep", "--config", str(target), "--format", "json"])
            assert code in (0, 1, 2), (path, bad)
            if code == 2:
                assert err.getvalue().startswith("gpufleet: invalid gpufleet config for stack 'sweep'"), (path, bad)
            exits.add(code)
    assert 2 in exits  # the sweep really produced invalid files
