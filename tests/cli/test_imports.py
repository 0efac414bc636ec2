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
print(json.dumps({"code": code, "modules": sorted(m.split(".")[0] for m in sys.modules)}))
"""


def imported_top_level_modules(stack: str) -> set[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, stack], capture_output=True, text=True, cwd=ROOT, check=True)
    doc = json.loads(run.stdout.splitlines()[-1])
    assert doc["code"] == 0
    return set(doc["modules"])


@pytest.mark.parametrize("stack", ["dev", "ha"])
def test_k3s_stack_imports_no_cloud_sdk(stack):
    modules = imported_top_level_modules(stack)
    assert "pulumi_command" in modules  # the probe really planned a k3s stack
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_azure"} & modules


def test_aks_stack_imports_only_the_azure_sdk():
    modules = imported_top_level_modules("aks-train")
    assert "pulumi_azure" in modules
    assert not {"pulumi_aws", "pulumi_gcp", "pulumi_command", "pulumi_azure_native"} & modules
