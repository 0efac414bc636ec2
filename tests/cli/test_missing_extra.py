"""`gpufleet plan` on a stack whose platform's extra is not installed: exit 2, the problem line names the extra, no
traceback, nothing registered (issue 47). The SDK is hidden from a fresh interpreter (`sys.modules[name] = None`:
`find_spec` finds nothing and an import fails, as in a venv without the extra); tests/e2e/test_extras.py does the same
in a real venv with only the core installed.
"""

from __future__ import annotations

import json
import subprocess
import sys

from gpufleet.base import platforms
from tests.helpers import ROOT

SCRIPT = """
import json, sys
for name in {hidden!r}:
    sys.modules[name] = None
from gpufleet.app import cli
try:
    code = cli.main(["plan", {stack!r}])
except ImportError as exc:
    code = f"{{type(exc).__name__}}: {{exc}}"
print(json.dumps({{"code": code, "checked": "gpufleet.base.spec.checks.install_checks" in sys.modules}}))
"""


def test_plan_without_the_platforms_extra_exits_2_naming_it():
    hidden = platforms.get("k3s").program.sdk_modules
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(hidden=hidden, stack="dev")], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["checked"], "load_spec discovers gpufleet/base/spec/checks/install_checks.py"
    assert result["code"] == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert ("  - stack 'dev': gpufleet:cluster.platform: platform k3s needs pulumi_command, pulumi_random: "
            "pip install 'gpufleet[k3s]'") in run.stderr.splitlines()
    assert "(1 problem)" in run.stderr
