"""The GCP side of `gpufleet catalog refresh` on the real Google client libraries, run in an interpreter of its own.

Pulumi's provider protos (`pulumi/runtime/proto/status_pb2.py`, loaded by `pulumi.provider.experimental`, which
the component package gpufleet/app/package.py and its tests import) register the message `google.rpc.Status`
themselves; googleapis-common-protos, which google-cloud-compute and google-cloud-billing load, registers it again
from `google/rpc/status.proto`, and protobuf refuses the duplicate. The refresh CLI never loads the provider protos,
so it is unaffected (checked below), but one pytest worker can hold both; the real-client checks
(tests/unit/gcp_clients_checks.py) therefore run in a fresh interpreter here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.helpers import ROOT

CHECKS = ROOT / "tests" / "unit" / "gcp_clients_checks.py"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_real_client_checks_pass_in_their_own_interpreter():
    command = [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", str(CHECKS)]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert re.search(r"\b3 passed\b", run.stdout), run.stdout[-2000:]


def test_the_refresh_cli_loads_the_google_clients_next_to_gpufleet():
    run = _python("import sys, gpufleet.app.cli\nimport google.cloud.billing_v1, google.cloud.compute_v1\n"
                  "assert 'pulumi.runtime.proto.status_pb2' not in sys.modules\nprint('ok')")
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_why_the_checks_need_their_own_interpreter():
    """If this starts passing (a Pulumi or googleapis-common-protos release that stops the clash), the checks can
    move back into the main run."""
    run = _python("from pulumi.runtime.proto import status_pb2\nimport google.cloud.compute_v1")
    assert run.returncode != 0 and "duplicate symbol 'google.rpc.Status'" in run.stderr, run.stderr[-2000:]
