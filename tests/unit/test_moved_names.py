"""The 0.1 module names keep working for one release (gpufleet/_moved.py): each imports the very module at its
0.2 name, with a DeprecationWarning that names the new one; `python -m` under an old name runs the new module."""

from __future__ import annotations

import json
import subprocess
import sys

from gpufleet import _moved
from tests.helpers import ROOT

# Every 0.1 name, and a submodule of each old package (a user's `from gpufleet.spec.eks import EksSpec`).
OLD_NAMES = [*_moved.MOVED, *_moved.MOVED_IN_0_3, "gpufleet.spec.eks", "gpufleet.spec.cold_start", "gpufleet.catalog.aws", "gpufleet.plan.engine", "gpufleet.review.diff",
             "gpufleet.verify.targets", "gpufleet.catalog.refresh.aws"]

PROBE = """
import importlib, json, sys, warnings
out = {}
for old in sys.argv[1:]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    new = sys.modules[old].__name__
    out[old] = {"module": module.__name__, "same": sys.modules[old] is sys.modules[new],
                "spec": module.__spec__.name,
                "warnings": [(w.category.__name__, str(w.message)) for w in caught if old in str(w.message)]}
print(json.dumps(out))
"""


def test_every_old_name_is_the_new_module_with_a_deprecation_warning():
    run = subprocess.run([sys.executable, "-c", PROBE, *OLD_NAMES], capture_output=True, text=True, cwd=ROOT, check=True)
    found = json.loads(run.stdout)
    for old in OLD_NAMES:
        new = _moved.new_name(old)
        assert new.startswith(("gpufleet.base.", "gpufleet.app.")), old
        assert found[old]["module"] == new and found[old]["same"], (old, found[old])
        assert found[old]["spec"] == new, f"{new} lost its own __spec__ to the alias"
        assert found[old]["warnings"] == [
            ["DeprecationWarning", _moved.message(old)]], found[old]
    assert _moved.message("gpufleet.spec.eks") == ("gpufleet.spec.eks moved to gpufleet.base.spec.platforms.eks in "
                                                    "gpufleet 0.2; the old name goes in 0.3")
    assert _moved.message("gpufleet.base.spec.dra") == ("gpufleet.base.spec.dra moved to gpufleet.base.spec.features.dra "
                                                         "in gpufleet 0.3; the old name goes in 0.4")


def test_new_names_do_not_warn():
    run = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                          "import gpufleet.base.spec, gpufleet.app.plan.engine, gpufleet.app.cli, gpufleet.components"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr


def test_unrelated_names_are_not_taken():
    assert _moved.new_name("gpufleet.components.eks") is None
    assert _moved.new_name("gpufleet.specs") is None and _moved.new_name("gpufleet.base.spec") is None


def test_python_m_under_the_old_name_runs_the_new_module():
    old = subprocess.run([sys.executable, "-m", "gpufleet.nccl_test", "dev"], capture_output=True, text=True, cwd=ROOT)
    new = subprocess.run([sys.executable, "-m", "gpufleet.app.verify.nccl", "dev"], capture_output=True, text=True,
                         cwd=ROOT)
    assert old.returncode == new.returncode == 2
    assert new.stderr == "gpufleet.app.verify.nccl: stack 'dev': the stack has no RDMA pool\n"
    assert old.stderr.endswith(new.stderr)
    assert "FutureWarning: python -m gpufleet.nccl_test: the module moved to gpufleet.app.verify.nccl.allreduce" \
        in old.stderr
