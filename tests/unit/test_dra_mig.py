"""MIG on DRA pools (issue 34): NVIDIA's DRA driver v0.4.1 serves MIG devices (DeviceClass mig.nvidia.com, the
`gpu.nvidia.com/profile` attribute: ../shared/reference/dra-driver-nvidia-gpu), so a DRA pool may be cut into MIG.
gpufleet counts its devices per profile: one DeviceClass per profile, one Kueue resource per profile
(dra.gpufleet.io/mig-<profile>) with the pool's per-profile quota, and a capacity line per profile."""

from __future__ import annotations

import yaml

from gpufleet.app.plan.engine import plan
from gpufleet.base.capacity import capacity_notes
from tests.helpers import by_type, example_config, stack_file


def _config(sharing: dict) -> dict:
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"].append({
        "name": "h100-mig", "gpu": "H100-80GB", "gpusPerNode": 8, "allocation": "dra", "pricePerNodeHour": 20.0,
        "sharing": sharing, "hosts": [{"name": "h100-1", "address": "198.51.100.201"},
                                      {"name": "h100-2", "address": "198.51.100.202"}]})
    config["gpufleet:addons"]["kueue"]["teams"][0]["queues"].append({"pool": "h100-mig"})
    return config


def _plan(sharing: dict):
    return plan(stack_file(_config(sharing), "mig"))


def test_each_profile_gets_a_device_class_a_kueue_resource_and_its_quota():
    result = _plan({"mode": "mig", "layout": "all-balanced"})
    classes = {r.inputs["metadata"]["name"] for r in by_type(result, "kubernetes:resource.k8s.io/v1:DeviceClass")}
    assert classes == {"mig-1g-10gb.gpufleet.io", "mig-2g-20gb.gpufleet.io", "mig-3g-40gb.gpufleet.io"}
    kueue = next(r for r in by_type(result, "kubernetes:helm.sh/v3:Release") if r.inputs["name"] == "kueue")
    mappings = yaml.safe_load(kueue.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])["resources"]["deviceClassMappings"]
    assert {m["name"]: m["deviceClassNames"] for m in mappings} == {
        "dra.gpufleet.io/gpu": ["gpu.nvidia.com"],
        "dra.gpufleet.io/mig-1g.10gb": ["mig-1g-10gb.gpufleet.io"],
        "dra.gpufleet.io/mig-2g.20gb": ["mig-2g-20gb.gpufleet.io"],
        "dra.gpufleet.io/mig-3g.40gb": ["mig-3g-40gb.gpufleet.io"],
        "dra.gpufleet.io/imex-channel": ["compute-domain-default-channel.nvidia.com"],
    }
    cq = next(r for r in by_type(result, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
              if r.inputs["metadata"]["name"].endswith("h100-mig"))
    quota = {e["name"]: float(e["nominalQuota"]) for e in cq.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
             if e["name"].startswith("dra.gpufleet.io/mig")}
    # H100 all-balanced (mig-parted config-default): 2 x 1g.10gb, 1 x 2g.20gb, 1 x 3g.40gb per GPU; 8 GPUs x 2 hosts.
    assert quota == {"dra.gpufleet.io/mig-1g.10gb": 32, "dra.gpufleet.io/mig-2g.20gb": 16, "dra.gpufleet.io/mig-3g.40gb": 16}
    templates = {r.inputs["metadata"]["name"]: r.inputs["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"]
                 for r in by_type(result, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate") if "-mig-mig-" in r.inputs["metadata"]["name"]}
    assert templates == {"h100-mig-mig-1g-10gb": "mig-1g-10gb.gpufleet.io", "h100-mig-mig-2g-20gb": "mig-2g-20gb.gpufleet.io",
                         "h100-mig-mig-3g-40gb": "mig-3g-40gb.gpufleet.io"}


def test_the_capacity_line_counts_mig_devices_per_profile():
    result = _plan({"mode": "mig", "layout": "all-balanced"})
    (line,) = [n for n in capacity_notes(result.capacity) if n.startswith("h100-mig: DRA")]
    assert "MIG devices per node: 16 x 1g.10gb (claim template h100-mig-mig-1g-10gb, device class mig-1g-10gb.gpufleet.io)" in line
    assert "8 x 3g.40gb (claim template h100-mig-mig-3g-40gb" in line


def test_single_strategy_on_dra_still_counts_the_profile_not_whole_gpus():
    # The device plugin's single strategy would advertise MIG devices as nvidia.com/gpu; DRA claims them by profile.
    result = _plan({"mode": "mig", "profile": "1g.10gb", "strategy": "single"})
    cq = next(r for r in by_type(result, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")
              if r.inputs["metadata"]["name"].endswith("h100-mig"))
    names = {e["name"]: e["nominalQuota"] for e in cq.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert names.get("dra.gpufleet.io/mig-1g.10gb") == 8 * 7 * 2 and "dra.gpufleet.io/gpu" not in names


def test_stacks_without_mig_dra_pools_create_no_mig_device_class():
    result = plan(stack_file(example_config("nvl72-k3s"), "nvl72-k3s"))
    assert not by_type(result, "kubernetes:resource.k8s.io/v1:DeviceClass")
