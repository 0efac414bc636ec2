"""A stack imports only its own platform's SDK (import cost is seconds: DESIGN.md §1)."""

import json
import subprocess
import sys

import pytest

from tests.helpers import ROOT

PROBE = """
import json, sys
from gpufleet.app import cli
from contextlib import redirect_stdout
import io
with redirect_stdout(io.StringIO()):
    code = cli.main(["plan", sys.argv[1], "--format", "json"])
# A module the SDKs register lazily (pulumi._utils.lazy_import) is not loaded until first used: not counted.
print(json.dumps({"code": code, "modules": sorted(n for n, m in sys.modules.items() if type(m).__name__ != "_LazyModule")}))
"""


def imported_modules(stack: str) -> set[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, stack], capture_output=True, text=True, cwd=ROOT, check=True)
    doc = json.loads(run.stdout.splitlines()[-1])
    assert doc["code"] == 0
    return set(doc["modules"])


def imported_top_level_modules(stack: str) -> set[str]:
    return {m.split(".")[0] for m in imported_modules(stack)}


@pytest.mark.parametrize("stack", ["dev", "ha"])
def test_k3s_stack_imports_no_cloud_sdk(stack):
    modules = imported_top_level_modules(stack)
    assert "pulumi_command" in modules  # the probe really planned a k3s stack
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_azure", "pulumi_azure_native"} & modules


def test_aks_stack_imports_only_the_azure_native_sdk():
    """Azure Native's package holds every Azure service (about 6,000 files): an AKS plan loads only the services its
    components use (the package's own __init__ loads the others lazily, docs/aks.md)."""
    full = imported_modules("aks-train")
    modules = {m.split(".")[0] for m in full}
    assert "pulumi_azure_native" in modules
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_command", "pulumi_azure"} & modules
    services = {m.split(".")[1] for m in full if m.startswith("pulumi_azure_native.") and not m.split(".")[1].startswith("_")}
    assert services == {"authorization", "containerservice", "network", "provider", "resources"}
