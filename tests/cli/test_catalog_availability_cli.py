"""CLI: availability and sale-option errors exit 2 with exact messages naming what exists (issue 12,
section 2); plans show the catalog date and warn on stale facts, CUDA minor-version-only passes and
Kubernetes versions past standard support."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml

from gpufleet.app import cli
from gpufleet.base.catalog import offerings
from gpufleet.base.spec import load_spec
from gpufleet.base.spec.checks.catalog_checks import catalog_warnings
from tests.helpers import example_config


def run(capsys, tmp_path, config: dict, *args: str) -> tuple[int, str, str]:
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    code = cli.main(["plan", "bad", "--config", str(path), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def gke_small_a3() -> dict:
    c = example_config("prod-gke")
    pool = c["gpufleet:nodePools"][0]
    pool["machineType"] = "a3-highgpu-2g"
    pool.pop("rdma", None)  # GPUDirect-TCPX is an a3-highgpu-8g feature
    pool["capacity"] = "on-demand"
    return c


def test_machine_not_sold_on_demand_exits_2_naming_the_options(capsys, tmp_path):
    code, out, err = run(capsys, tmp_path, gke_small_a3())
    assert code == 2 and out == "" and "Traceback" not in err
    assert (
        "stack 'bad': gpufleet:nodePools[0].capacity: a3-highgpu-2g is not sold on-demand (Compute Engine sells it as: "
        "spot, flex-start); use capacity: spot, or flex-start provisioning (got 'on-demand')"
    ) in err


def test_machine_not_sold_on_demand_plans_as_spot(capsys, tmp_path):
    c = gke_small_a3()
    c["gpufleet:nodePools"][0]["capacity"] = "spot"
    code, out, err = run(capsys, tmp_path, c, "--format", "json")
    assert code != 2, err  # the spec accepts it; policies judge the rest
    pool = next(p for p in json.loads(out)["capacity"] if p["pool"] == c["gpufleet:nodePools"][0]["name"])
    assert (pool["capacityType"], pool["gpusPerNode"], pool["pricePerNodeHour"]) == ("spot", 2, 5.05)  # a3-highgpu-2g spot, spot_2026 reading (issue 32)


GCP_ZONES = {
    "us-central1-a": {"machine_types": ["a3-highgpu-8g", "g2-standard-8"], "accelerators": {"nvidia-h100-80gb": 8, "nvidia-l4": 8},
                      "source": "compute.machineTypes.aggregatedList", "as_of": "2026-12-01"},
    "us-central1-b": {"machine_types": ["g2-standard-8"], "accelerators": {"nvidia-l4": 8},
                      "source": "compute.machineTypes.aggregatedList", "as_of": "2026-12-01"},
    "us-central1-c": {"machine_types": ["a3-highgpu-8g"], "accelerators": {"nvidia-h100-80gb": 8},
                      "source": "compute.machineTypes.aggregatedList", "as_of": "2026-12-01"},
}


def test_gke_zone_that_does_not_offer_the_machine_exits_2_naming_the_zones_that_do(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(offerings, "gcp_zones", lambda: GCP_ZONES)
    c = example_config("prod-gke")
    c["gpufleet:nodePools"][0]["gke"]["zones"] = ["us-central1-b"]
    code, out, err = run(capsys, tmp_path, c)
    assert code == 2 and out == ""
    assert (
        "stack 'bad': gpufleet:nodePools[0].gke.zones: a3-highgpu-8g with nvidia-h100-80gb is not offered in "
        "us-central1-b (compute.machineTypes.aggregatedList, 2026-12-01; zones in us-central1 that offer it: "
        "us-central1-a, us-central1-c) (got 'us-central1-b')"
    ) in err


def test_gke_zone_not_recorded_is_not_judged(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(offerings, "gcp_zones", lambda: GCP_ZONES)
    monkeypatch.setattr(offerings, "gcp_published", lambda: {})  # neither the refresh nor gcp_zones.yaml records it
    c = example_config("prod-gke")
    c["gpufleet:nodePools"][0]["gke"]["zones"] = ["us-central1-f"]
    code, _, err = run(capsys, tmp_path, c, "--format", "json")
    assert code != 2, err


def test_gke_zone_check_works_without_a_refresh_from_the_published_reading(capsys, tmp_path):
    """No gcp_offerings.yaml rows (no refresh run): gcp_zones.yaml still says where a3-highgpu-8g exists."""
    assert offerings.gcp_zones() == {}
    c = example_config("prod-gke")
    c["gpufleet:nodePools"][0]["gke"]["zones"] = ["us-central1-f"]
    code, out, err = run(capsys, tmp_path, c)
    assert code == 2 and out == ""
    assert (
        "stack 'bad': gpufleet:nodePools[0].gke.zones: a3-highgpu-8g with nvidia-h100-80gb is not offered in "
        "us-central1-f (gpufleet/base/catalog/gcp_zones.yaml, read 2026-12-02; zones in us-central1 that offer it: "
        "us-central1-a, us-central1-b, us-central1-c) (got 'us-central1-f')"
    ) in err


def test_a3_ultra_zone_names_the_one_zone_in_the_region(capsys, tmp_path):
    c = example_config("prod-gke")
    pool = c["gpufleet:nodePools"][0]
    pool.update(machineType="a3-ultragpu-8g", capacity="spot")
    pool["gke"]["zones"] = ["us-central1-a"]
    code, _, err = run(capsys, tmp_path, c)
    assert code == 2
    assert "a3-ultragpu-8g with nvidia-h200-141gb is not offered in us-central1-a (gpufleet/base/catalog/gcp_zones.yaml, read " \
           "2026-12-02; zones in us-central1 that offer it: us-central1-b)" in err


AWS_REGIONS = {
    "us-east-1": {"instance_types": ["p5.48xlarge", "g6.xlarge", "g6.2xlarge", "m7i.xlarge", "m6i.xlarge"],
                  "source": "ec2.DescribeInstanceTypeOfferings", "as_of": "2026-12-01"},
    "us-west-2": {"instance_types": ["p5.48xlarge", "p6-b200.48xlarge", "g6.xlarge"],
                  "source": "ec2.DescribeInstanceTypeOfferings", "as_of": "2026-12-01"},
}


def test_eks_region_that_does_not_offer_the_type_exits_2_naming_the_regions_that_do(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(offerings, "aws_regions", lambda: AWS_REGIONS)
    c = example_config("prod-eks")
    c["gpufleet:nodePools"][0]["instanceType"] = "p6-b200.48xlarge"
    code, out, err = run(capsys, tmp_path, c)
    assert code == 2 and out == ""
    assert (
        "stack 'bad': gpufleet:nodePools[0].instanceType: p6-b200.48xlarge is not offered in us-east-1 "
        "(ec2.DescribeInstanceTypeOfferings, 2026-12-01; regions that offer it: us-west-2) (got 'p6-b200.48xlarge')"
    ) in err


def test_plan_prints_catalog_date(capsys):
    assert cli.main(["plan", "prod-gke", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["catalogDate"] == "2026-12-02"
    assert cli.main(["plan", "prod-gke"]) == 0
    assert "catalog facts as of 2026-12-02" in capsys.readouterr().out


def _warnings(config: dict, today: dt.date) -> list[str]:
    return [f"{w.path}: {w.message}" for w in catalog_warnings("s", load_spec("s", config), today)]


def test_stale_catalog_warns_after_90_days():
    c = example_config("prod-gke")
    assert not [w for w in _warnings(c, dt.date(2027, 3, 2)) if w.startswith("catalog:")]  # 90 days
    (stale,) = [w for w in _warnings(c, dt.date(2027, 3, 3)) if w.startswith("catalog:")]
    assert "the catalog's facts are 91 days old (over 90" in stale and "gpufleet catalog refresh" in stale


def test_minor_version_only_cuda_pass_is_a_warning_naming_what_breaks():
    c = example_config("prod-gke")  # l4-infer: GKE DEFAULT on 1.34 = R535; workloads ask for CUDA 12.8
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.34"
    c["gpufleet:nodePools"][1]["gke"].pop("gpuDriverVersion")  # the example's l4-infer runs LATEST (issue 49)
    (w,) = [w for w in _warnings(c, dt.date(2026, 12, 2)) if "minor-version" in w]
    assert w.startswith("gpufleet:workloads.cudaVersions[0]: pool 'l4-infer': GKE's driver 535.274.02 (branch 535) passes for CUDA 12.8")
    assert "PTX JIT" in w and "NVRTC" in w and "newer than the driver" in w


def test_eks_extended_support_warns_with_the_price():
    c = example_config("prod-eks")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.34"
    (w,) = [w for w in _warnings(c, dt.date(2026, 12, 2)) if "kubernetesVersion" in w]
    assert w == (
        "gpufleet:cluster.kubernetesVersion: EKS 1.34 is past standard support since 2026-12-02 (extended support "
        "until 2027-12-02; in extended support the control plane costs USD 0.60 per cluster-hour instead of 0.10); "
        "upgrade to a version in standard support"
    )
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.35"
    assert not [w for w in _warnings(c, dt.date(2026, 12, 2)) if "kubernetesVersion" in w]


@pytest.mark.parametrize("machine", ["a3-ultragpu-8g", "a4-highgpu-8g"])
def test_reservation_only_machine_on_demand_without_reservation_warns(machine):
    c = example_config("prod-gke")
    pool = c["gpufleet:nodePools"][0]
    pool["machineType"] = machine
    pool.pop("rdma", None)
    pool["capacity"] = "on-demand"
    pool["gke"]["zones"] = ["us-central1-b"]  # the us-central1 zone with A3 Ultra and B200 (gcp_zones.yaml)
    (w,) = [w for w in _warnings(c, dt.date(2026, 12, 2)) if "reservation" in w]
    assert f"{machine} is normally sold through reservations, flex-start or spot (reservation, flex-start, spot)" in w


def test_catalog_show_prints_facts_with_sources(capsys):
    assert cli.main(["catalog", "show", "p5en.48xlarge"]) == 0
    out = capsys.readouterr().out
    assert "EC2 instance type p5en.48xlarge" in out
    assert "  GPU: 8 x H200" in out and "network cards: 16; EFA interfaces: 16 (secondary: efa-only)" in out
    assert "  [efa_p5en] Amazon EC2 User Guide" in out


def test_catalog_show_gpu_and_overview(capsys):
    assert cli.main(["catalog", "show", "B200"]) == 0
    out = capsys.readouterr().out
    assert "EC2 types: p6-b200.48xlarge; GCP machine types: a4-highgpu-8g" in out
    assert cli.main(["catalog", "show"]) == 0
    assert "aws_instances.yaml: facts as of 2025-11-15" in capsys.readouterr().out


def test_catalog_show_unknown_name_exits_2(capsys):
    assert cli.main(["catalog", "show", "p5.48xlarg"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpufleet: 'p5.48xlarg' is not an EC2 instance type, GCP machine type, Azure VM size or GPU model "
                          "in the catalog (known: ")


def test_catalog_show_azure_vm_size_says_its_prices_and_their_source(capsys):
    assert cli.main(["catalog", "show", "Standard_ND96isr_H100_v5"]) == 0
    out = capsys.readouterr().out
    assert "  GPU: 8 x H100-80GB; 96 vCPUs, 1900 GiB, x86_64; InfiniBand: 8 x 400 Gb/s" in out
    assert "  price (USD/h, undated snapshot): eastus on-demand 98.32, spot not sold / unpriced; eastus2 " in out
    assert "  [azure_retail_snapshot] skypilot-org/skypilot-catalog@098741e7" in out
    assert cli.main(["catalog", "show", "Standard_ND96isr_H200_v5"]) == 0
    assert ("  price (USD/h, undated snapshot): none found (gpufleet/base/catalog/azure_vms.yaml says why): the plan "
            "lists the pool as unpriced") in capsys.readouterr().out
    assert "  [nd_family] MicrosoftDocs/azure-docs" in out
    assert cli.main(["catalog", "show", "H100-80GB"]) == 0
    assert "Azure VM sizes: Standard_ND96isr_H100_v5" in capsys.readouterr().out


def test_gke_version_without_a_recorded_driver_branch_says_cuda_is_not_checked(monkeypatch):
    # Every minor gpufleet plans has a row since issue 49 (1.35 = 1.34's COS 125): drop 1.35's to reach the path.
    from gpufleet.base.catalog import gcp

    recorded = gcp.gke_driver_branch
    monkeypatch.setattr(gcp, "gke_driver_branch", lambda v, choice: None if v == "1.35" else recorded(v, choice))
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.35"
    ws = [w for w in _warnings(c, dt.date(2026, 12, 2)) if "does not record which driver branch" in w]
    assert ws and ws[0].startswith(
        "gpufleet:nodePools[0].gke.gpuDriverVersion: the catalog does not record which driver branch GKE 1.35 installs for LATEST"
    )


@pytest.mark.parametrize("stack, machine, gpus", [("prod-eks", "g7e.48xlarge", 8), ("prod-gke", "g4-standard-48", 1)])
def test_new_families_plan_with_their_gpus_and_unknown_prices_listed_as_unpriced(capsys, tmp_path, stack, machine, gpus):
    c = example_config(stack)
    pool = c["gpufleet:nodePools"][0]
    if stack == "prod-eks":
        pool["instanceType"] = machine
    else:
        pool.update(machineType=machine, capacity="spot")
        pool.pop("rdma", None)
    code, out, err = run(capsys, tmp_path, c, "--format", "json")
    assert code != 2, err
    doc = json.loads(out)
    row = next(p for p in doc["capacity"] if p["pool"] == pool["name"])
    assert row["gpusPerNode"] == gpus and row["pricePerNodeHour"] is None  # spot price not read: unpriced, not zero
