"""A clean install is quiet: building gpufleet prints no deprecation warning (the license is an SPDX string, as
setuptools >= 77 wants), and the Makefile's install step silences setuptools' informational editable-install note."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.helpers import ROOT


def test_building_the_package_prints_no_warning(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(tmp_path), str(ROOT)],
        capture_output=True, text=True, check=True,
    )
    output = run.stdout + run.stderr
    assert not re.search(r"(?i)deprecat|BuildBackendWarning|SetuptoolsWarning", output), output


def test_the_makefile_install_drops_only_the_editable_install_note():
    recipe = (ROOT / "Makefile").read_text()
    line = next(l for l in recipe.splitlines() if "pip install -q -e" in l)
    assert line.strip().startswith('PYTHONWARNINGS="ignore:Editable installation" ')
