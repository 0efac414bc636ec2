"""Unit tests: catalog lookups and CUDA/driver compatibility."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpufleet.base import catalog, versions

REQUIRED_GPUS = {"T4", "A10G", "L4", "L40S", "A100-40GB", "A100-80GB", "H100-80GB", "H200", "B200"}


def test_required_gpus_with_sources():
    models = catalog.gpu_models()
    assert REQUIRED_GPUS <= set(models)
    for model in models.values():
        assert model.sources, model.name
        assert model.memory_gb > 0
        if model.amd:  # AMD drivers are not NVIDIA branches: their floor is in gpufleet/base/catalog/amd_gpus.yaml
            from gpufleet.base.catalog import amd

            assert amd.driver_line(amd.amd_facts()[model.name].min_driver) in amd.driver_rocm(), model.name
        else:
            assert model.min_driver_branch is None or model.min_driver_branch >= 400, model.name


def test_mig_capability():
    assert {m.name for m in catalog.gpu_models().values() if m.mig_capable} == {"A100-40GB", "A100-80GB", "H100-80GB", "H100-NVL", "H200", "B200", "RTX-PRO-6000", "B300", "GB200", "GB300"}
    # A profile name alone does not fix the count: 1g.10gb is 7 per H100-80GB but 4 per A100-40GB.
    assert catalog.gpu("H100-80GB").mig.profiles["1g.10gb"] == 7
    assert catalog.gpu("A100-40GB").mig.profiles["1g.10gb"] == 4


def test_mig_profiles_match_upstream(reference):
    import yaml

    upstream = {g["name"]: g for g in yaml.safe_load((reference / "mig_profiles.yaml").read_text())["gpus"]}
    names = {"A100-40GB": "A100-40GB", "A100-80GB": "A100-80GB", "H100-80GB": "H100-80GB", "H200": "H200-141GB", "B200": "B200-180GB"}
    for ours, theirs in names.items():
        mig = catalog.gpu(ours).mig
        up = upstream[theirs]
        expected = {p["profile"]: p["max_instances"] for p in up["profiles"] if "+" not in p["profile"]}
        assert mig.profiles == expected, ours
        assert mig.all_balanced == up["all_balanced"], ours
        assert mig.max_instances == up["max_gpu_instances"], ours


def test_pinned_operator_release_is_in_the_catalog(reference):
    import yaml

    release = catalog.operator_release(versions.GPU_OPERATOR.version)
    values = yaml.safe_load((reference / "gpu-operator" / f"values-{versions.GPU_OPERATOR.version}.yaml").read_text())
    assert release.default_driver == values["driver"]["version"]
    assert catalog.driver_branch(release.default_driver) in release.driver_branches


@pytest.mark.parametrize(
    "driver, cuda, ok",
    [
        ("570.26", "12.8", True),  # exactly the toolkit minimum
        ("535.104.05", "12.8", True),  # R535 runs 12.x through minor-version compatibility
        ("520.61.05", "12.0", False),  # below the 12.x branch minimum
        ("580.95.05", "13.0", True),
        ("575.57.08", "13.0", False),  # CUDA 13 needs R580+
        ("595.91.07", "12.2", True),
    ],
)
def test_driver_runs_cuda(driver, cuda, ok):
    assert catalog.driver_runs_cuda(driver, cuda)[0] is ok


@given(st.tuples(st.integers(0, 999), st.integers(0, 999), st.integers(0, 99)), st.tuples(st.integers(0, 999), st.integers(0, 999), st.integers(0, 99)))
def test_version_order_is_numeric(a, b):
    fmt = lambda t: ".".join(map(str, t))
    assert (catalog.parse_version(fmt(a)) < catalog.parse_version(fmt(b))) == (a < b)


def test_gcp_offerings_fall_back_to_the_published_reading_and_n1_is_judged_by_its_accelerator(monkeypatch):
    from gpufleet.base.catalog import offerings

    assert offerings.gcp_offered_in_zone("a3-highgpu-8g", "us-central1-a", "nvidia-h100-80gb") is True
    assert offerings.gcp_offered_in_zone("a3-ultragpu-8g", "us-central1-a", "nvidia-h200-141gb") is False
    assert offerings.gcp_offered_in_zone("g2-standard-96", "us-central1-f", "nvidia-l4") is False  # by accelerator
    assert offerings.gcp_offered_in_zone("n1-standard-4", "us-central1-a", "nvidia-tesla-t4") is None  # T4 not recorded
    # A refreshed zone wins over the reading; it lists GPU-family machine types only, so N1 is judged by the accelerator.
    row = {"machine_types": ["g2-standard-8"], "accelerators": {"nvidia-tesla-t4": 4}, "source": "api", "as_of": "2026-12-01"}
    monkeypatch.setattr(offerings, "gcp_zones", lambda: {"us-central1-a": row})
    assert offerings.gcp_offered_in_zone("n1-standard-8", "us-central1-a", "nvidia-tesla-t4") is True
    assert offerings.gcp_offered_in_zone("a3-highgpu-8g", "us-central1-a", "nvidia-h100-80gb") is False
    assert offerings.provenance("gcp", "us-central1-a") == "api, 2026-12-01"
