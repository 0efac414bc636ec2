"""Kueue's controller configuration gpufleet writes back (components/workloads/kueue.py DEFAULT_MANAGER_CONFIG) is the
pinned chart's own default, key for key (issue 56: a changed concurrency or webhook port in it survived mutation,
since setting managerConfig.controllerManagerConfigYaml replaces the chart's whole file)."""

from __future__ import annotations

import tarfile

import pytest
import yaml

from gpufleet.base import versions
from gpufleet.components.workloads.kueue import DEFAULT_MANAGER_CONFIG


def test_the_default_manager_config_is_the_pinned_chart_s(reference):
    archive = reference / "charts" / f"{versions.KUEUE.name}-{versions.KUEUE.version}.tgz"
    if not archive.is_file():
        pytest.skip(f"Kueue chart not found at {archive}")
    with tarfile.open(archive) as tar:
        values = yaml.safe_load(tar.extractfile(f"{versions.KUEUE.name}/values.yaml").read())
    # The chart's file with its commented-out keys left out, as YAML reads it.
    assert yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"]) == DEFAULT_MANAGER_CONFIG
