"""Shared test helpers: plan a config under Pulumi's mocks and look up what it registered."""

from __future__ import annotations

import copy
import functools
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import yaml

from gpufleet import testing
from gpufleet.app.plan.engine import Plan, plan
from gpufleet.app.plan.mocks import Registration
from gpufleet.app.plan.stackfile import StackFile, read_stack_file, stack_path
from gpufleet.base.spec import SpecError, load_spec

ROOT = Path(__file__).resolve().parent.parent
# GPUFLEET_REFERENCE points elsewhere (e.g. from a git worktree, where shared/ is not beside the checkout).
REFERENCE = Path(os.environ.get("GPUFLEET_REFERENCE", ROOT.parent / "shared" / "reference"))
# The pinned chart archives (../shared/reference/charts/SOURCES.md): where every plan under test reads the CRDs of the
# custom resources it validates (tests/conftest.py points GPUFLEET_CHARTS_DIR here).
CHARTS = REFERENCE / "charts"
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
SECRET = {"secure": "v1:placeholder"}
# libyaml's parser under PyYAML's safe constructor: the same documents, about 8x faster than the pure-Python parser
# (the reference CRDs alone are 7.8 MB of YAML). Only for upstream files and helm output, never for what the
# product itself reads. PyYAML built without libyaml falls back to the pure-Python loader.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str | bytes) -> Any:
    return yaml.load(text, Loader=YAML_LOADER)


def load_yaml_all(text: str | bytes) -> list:
    return list(yaml.load_all(text, Loader=YAML_LOADER))


def example(stack: str) -> StackFile:
    """An example stack from stacks/."""
    return read_stack_file(stack, stack_path(ROOT, stack))


def example_config(stack: str) -> dict:
    """The raw `config:` mapping of an example stack (a deep copy to mutate in a test)."""
    return copy.deepcopy(_example_document(stack)["config"])


@functools.cache
def _example_document(stack: str) -> dict:
    """An example stack file, parsed once per test process (example_config hands out copies)."""
    return yaml.safe_load(stack_path(ROOT, stack).read_text())


def stack_file(config: dict, stack: str = "test") -> StackFile:
    """A StackFile from a config mapping, as the CLI would read it (secure values become secrets)."""
    secrets = {k for k, v in config.items() if isinstance(v, dict) and set(v) == {"secure"}}
    plain = {k: ("[secret]" if k in secrets else v) for k, v in config.items()}
    return StackFile(stack, Path(f"Pulumi.{stack}.yaml"), plain, frozenset(secrets))


def load_config(config: dict, stack: str = "test"):
    """The spec a config mapping loads into (raises SpecError as the CLI would)."""
    sf = stack_file(config, stack)
    return load_spec(sf.stack, sf.config, sf.secret_keys)


def spec_problems(config: dict, stack: str = "test") -> list[str]:
    """The exact messages a config mapping is refused with (fails the test when it loads)."""
    import pytest

    with pytest.raises(SpecError) as exc:
        load_config(config, stack)
    return [str(p) for p in exc.value.problems]


# Each example stack's plan, computed once per test process and read by every test that needs it (see `planned`).
_SHARED_PLANS: dict[tuple[str, bool], tuple[Plan, bytes]] = {}


def planned(stack: str, policies: bool = False) -> Plan:
    """An example stack's plan (with the policy verdicts when `policies`), computed once per test process and shared
    by every test that reads it. A shared plan is read-only: a test that wants to change part of it copies that part
    first (copy.deepcopy); tests/conftest.py fails the run if a shared plan changed."""
    key = (stack, policies)
    if key not in _SHARED_PLANS:
        result = plan(example(stack), evaluate_policies=policies)
        _SHARED_PLANS[key] = (result, pickle.dumps(result))
    return _SHARED_PLANS[key][0]


# A fresh interpreter plans one example stack and prints every module it ended with: what a user's `gpufleet plan STACK`
# loads (which cloud SDKs, whether the catalog refresh came along). One run per stack and test run, shared by the
# workers through tests/run_cache (four files ask about dev and prod-gke).
_IMPORT_PROBE = """
import contextlib, io, json, sys
from gpufleet.app import cli
with contextlib.redirect_stdout(io.StringIO()):
    code = cli.main(["plan", sys.argv[1], "--format", "json"])
# A module the SDKs register lazily (pulumi._utils.lazy_import) is not loaded until first used: not counted.
print(json.dumps({"code": code, "modules": sorted(n for n, m in sys.modules.items()
                                                 if type(m).__name__ != "_LazyModule")}))
"""


def modules_a_plan_imports(stack: str) -> set[str]:
    """Every module (dotted names) a fresh `gpufleet plan STACK --format json` process has loaded when it ends; the
    plan must exit 0."""
    from tests import run_cache

    key = f"imports-{stack}.json"
    text = run_cache.read(key)
    if text is None:
        run = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, stack], capture_output=True, text=True, cwd=ROOT,
                             timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        text = run.stdout.splitlines()[-1]
        run_cache.write(key, text)
    doc = json.loads(text)
    assert doc["code"] == 0, f"gpufleet plan {stack} exited {doc['code']}"
    return set(doc["modules"])


def top_level_modules_a_plan_imports(stack: str) -> set[str]:
    return {m.split(".")[0] for m in modules_a_plan_imports(stack)}


def changed_shared_plans() -> list[str]:
    """The shared plans that no longer equal what was planned (a test changed one in place)."""
    return [f"{stack} (policies={policies})" for (stack, policies), (result, planned_bytes) in _SHARED_PLANS.items()
            if pickle.dumps(result) != planned_bytes]


def plan_config(config: dict, stack: str = "test", policies: bool = True) -> Plan:
    return plan(stack_file(config, stack), evaluate_policies=policies)


def by_type(p: Plan, type_: str) -> list[Registration]:
    return testing.by_type(p.resources, type_)


def one(p: Plan, type_: str, name: Optional[str] = None) -> Registration:
    return testing.one(p.resources, type_, name)


def parent_of(p: Plan, r: Registration) -> Registration:
    return next(x for x in p.resources if x.urn == r.parent)


def dig(value: Any, path: str) -> Any:
    """dig(values, 'driver.version')."""
    for part in path.split("."):
        value = value[part]
    return value


def small_operator_stack(operator_version: Optional[str] = None) -> dict:
    """A one-host k3s stack with the GPU Operator (at `operator_version`, default the pin), Kueue and JobSet: the
    smallest stack whose charts keep CRDs (tests of CRDs applied with their charts and of a chart bump's review)."""
    from gpufleet.base import versions

    operator_version = operator_version or versions.GPU_OPERATOR.version
    return {
        "gpufleet:cluster": {"platform": "k3s", "name": "up", "kubernetesVersion": "1.35",
                             "k3s": {"sshUser": "ubuntu", "servers": [{"name": "cp-1", "address": "203.0.113.10"}]}},
        "gpufleet:nodePools": [{"name": "h100", "gpu": "H100-80GB", "gpusPerNode": 8, "pricePerNodeHour": 24.0,
                                "hosts": [{"name": "h-1", "address": "203.0.113.41"}]}],
        "gpufleet:gpuOperator": {"version": operator_version, "driver": {"source": "operator"}},
        "gpufleet:addons": {"kueue": {"enabled": True}, "jobset": {"enabled": True}},
        "gpufleet:sshPrivateKey": {"secure": "v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="},
    }
