"""The metric names KEDA and the endpoint picker read, against the vLLM release gpufleet pins (issue 52).

The names are recorded in gpufleet/base/spec/features/serving.py with their sources (the vLLM wheel of
versions.VLLM_VERSION, file and lines; llm-d-router's metric extractor at versions.ENDPOINT_PICKER). The unit checks
keep the three tables consistent; the wheel check reads the release itself when a copy is at hand
(`pip download vllm==<VLLM_VERSION> --no-deps --only-binary :all: -d DIR`, then GPUFLEET_VLLM_WHEEL=DIR/<wheel>): the
wheel is 336 MB, too large for the reference folder or a test run to fetch.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import pytest

from gpufleet.base import versions
from gpufleet.base.spec.features.serving import EXPORTED_METRICS, PICKER_READS, SIGNALS


def test_what_the_picker_and_keda_read_is_what_vllm_exports():
    assert set(PICKER_READS["vllm"]) <= set(EXPORTED_METRICS["vllm"])
    assert set(SIGNALS.values()) <= set(EXPORTED_METRICS["vllm"])
    # The KV-cache gauge under its current name: vLLM dropped vllm:gpu_cache_usage_perc, the picker reads the new one.
    assert SIGNALS["kvCache"] == "vllm:kv_cache_usage_perc" and "vllm:gpu_cache_usage_perc" not in EXPORTED_METRICS["vllm"]


def test_the_image_is_the_pinned_release():
    assert versions.VLLM_IMAGE == f"docker.io/vllm/vllm-openai:v{versions.VLLM_VERSION}"


def test_the_pinned_wheel_exports_every_name():
    wheel = os.environ.get("GPUFLEET_VLLM_WHEEL")
    if not wheel or not Path(wheel).is_file():
        pytest.skip("no vLLM wheel at GPUFLEET_VLLM_WHEEL (see the module docstring to fetch one)")
    assert Path(wheel).name.startswith(f"vllm-{versions.VLLM_VERSION}-"), wheel
    with zipfile.ZipFile(wheel) as z:
        text = z.read("vllm/v1/metrics/loggers.py").decode("utf-8")
    declared = set(re.findall(r'name="(vllm:[a-z_]+)"', text))
    assert set(EXPORTED_METRICS["vllm"]) <= declared
    assert "vllm:gpu_cache_usage_perc" not in declared
