"""DRA pools and NVLink sizing (issue 34): the spec refuses what cannot run, naming stack, key, value and what is
allowed; the example NVL72 stacks load; the scale-to-zero rule flags a DRA pool at minimum 0."""

from __future__ import annotations

from gpufleet.base import versions
from gpufleet.base.spec.features import dra_checks
from tests.helpers import example_config, load_config, planned, spec_problems, stack_file
from gpufleet.app.plan.engine import plan


def test_examples_load():
    for stack in ("nvl72-k3s", "nvl72-gke", "nvl72-eks"):
        assert [p.allocation for p in load_config(example_config(stack)).node_pools] == ["dra"]


def test_dra_refused_before_kubernetes_1_34():
    config = example_config("nvl72-eks")
    config["gpufleet:cluster"]["kubernetesVersion"] = "1.33"
    problems = [p for p in spec_problems(config) if "kubernetesVersion" in p and "resource.k8s.io/v1" in p]
    assert len(problems) == 1
    assert "allowed: 1.34 or newer" in problems[0] and "(got '1.33')" in problems[0]


def test_partial_nvlink_domain_is_an_error_on_gke():
    config = example_config("nvl72-gke")
    pool = config["gpufleet:nodePools"][0]
    pool["minNodes"] = pool["maxNodes"] = pool["reservation"]["instanceCount"] = 10
    problems = [p for p in spec_problems(config) if "partial NVLink domain" in p]
    assert {p.split(": ")[1] for p in problems} == {
        "gpufleet:nodePools[0].minNodes", "gpufleet:nodePools[0].maxNodes", "gpufleet:nodePools[0].reservation.instanceCount"}
    assert all("e.g. 18" in p for p in problems)


def test_partial_rack_on_k3s_is_a_warning():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["hosts"] = config["gpufleet:nodePools"][0]["hosts"][:17]
    spec = load_config(config)
    assert [p.path for p in dra_checks.warnings("test", spec)] == ["gpufleet:nodePools[0].hosts"]


def test_compute_domain_needs_a_dra_nvlink_pool_and_new_enough_driver():
    config = example_config("nvl72-k3s")
    config["gpufleet:gpuOperator"]["driver"]["version"] = "570.86.15"
    config["gpufleet:dra"]["computeDomains"].append({"name": "x", "pool": "nope"})
    problems = spec_problems(config)
    assert any("dra.computeDomains[0].pool" in p and "570.158.01" in p for p in problems)
    assert any("dra.computeDomains[1].pool" in p and "no such pool" in p for p in problems)


def test_dra_pool_sharing_and_amd_refused():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["sharing"] = {"mode": "time-slicing", "replicas": 2}
    assert any("sharing.mode" in p and "allowed: none, mig" in p for p in spec_problems(config))


def test_device_plugin_nvlink_pool_warns():
    config = example_config("nvl72-k3s")
    config["gpufleet:nodePools"][0]["allocation"] = "device-plugin"
    del config["gpufleet:dra"]
    spec = load_config(config)
    assert any(p.path.endswith(".allocation") for p in dra_checks.warnings("test", spec))


def test_dra_pool_nodes_turn_the_device_plugin_off():
    ng = next(r for r in planned("nvl72-eks").resources if r.type == "aws:eks/nodeGroup:NodeGroup" and "gb200" in r.name)
    assert ng.inputs["labels"]["nvidia.com/gpu.deploy.device-plugin"] == "false"
    assert ng.inputs["labels"]["gpufleet.io/gpu-allocation"] == "dra"
    assert ng.inputs["amiType"] == "AL2023_ARM_64_NVIDIA"


def _violations(config, stack):
    return [v for v in plan(stack_file(config, stack), evaluate_policies=True).violations if v.policy == "gpu-pool-scale-to-zero"]


def test_scale_to_zero_flags_a_dra_pool_at_zero_on_eks():
    assert _violations(example_config("nvl72-eks"), "nvl72-eks") == []
    config = example_config("nvl72-eks")
    config["gpufleet:nodePools"][0]["minNodes"] = 0
    found = [v.message for v in _violations(config, "nvl72-eks")]
    assert len([m for m in found if "would be stranded" in m]) == 1, found
    assert any("set minNodes to at least 1" in m for m in found)


def test_gke_dra_pool_scales_from_zero_with_gkes_dra_label():
    """GKE's cluster autoscaler scales a DRA pool up from 0 when it carries cloud.google.com/gke-nvidia-gpu-dra-driver
    (Google's DRA tutorial, catalog gke_dra_zero): gpufleet's pools do, so a minimum of 0 passes; without it, stranded."""
    config = example_config("nvl72-gke")
    config["gpufleet:nodePools"][0]["minNodes"] = 0
    assert _violations(config, "nvl72-gke") == []
    from gpufleet.policies import inputs as I
    from tests.policy.fixtures import NODE_POOL_IN, messages, res, with_

    dra = with_(NODE_POOL_IN, "nodeConfig.labels", {"gpufleet.io/gpu-allocation": "dra",
                                                    "cloud.google.com/gke-nvidia-gpu-dra-driver": "true"})
    assert messages([res(I.GKE_NODE_POOL, "h100", dra)], "gpu-pool-scale-to-zero") == []
    unlabelled = with_(dra, "nodeConfig.labels", {"gpufleet.io/gpu-allocation": "dra"})
    [message] = messages([res(I.GKE_NODE_POOL, "h100", unlabelled)], "gpu-pool-scale-to-zero")
    assert "would be stranded" in message and "cloud.google.com/gke-nvidia-gpu-dra-driver=true" in message


def _gke_pool(config, name="gb200"):
    plan_ = planned("nvl72-gke") if config is None else plan(stack_file(config, "nvl72-gke"), evaluate_policies=False)
    return next(r for r in plan_.resources if r.type == "gcp:container/nodePool:NodePool" and name in r.name)


def test_gke_dra_pool_turns_gkes_driver_and_device_plugin_off():
    """GKE set-up-dra / Google's DRA tutorial: gpu-driver-version disabled, GKE's device plugin off, GKE's DRA labels;
    COS's driver installer (pinned) comes with the DRA driver, whose namespace admits its critical pods on GKE."""
    pool = _gke_pool(None)
    config = pool.inputs["nodeConfig"]
    assert config["guestAccelerators"][0]["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert {k: config["labels"][k] for k in ("gke-no-default-nvidia-gpu-device-plugin", "nvidia.com/gpu.present",
                                             "cloud.google.com/gke-nvidia-gpu-dra-driver", "gpufleet.io/gpu-allocation")} == {
        "gke-no-default-nvidia-gpu-device-plugin": "true", "nvidia.com/gpu.present": "true",
        "cloud.google.com/gke-nvidia-gpu-dra-driver": "true", "gpufleet.io/gpu-allocation": "dra"}
    assert config["imageType"] == "COS_CONTAINERD"
    resources = planned("nvl72-gke").resources
    installers = [r for r in resources if r.type == "kubernetes:yaml/v2:ConfigFile" and "nvidia-driver" in r.name]
    assert [r.inputs["file"] for r in installers] == [versions.GKE_COS_DRIVER_INSTALLERS["a4x"]]
    quota = next(r for r in resources if r.type == "kubernetes:core/v1:ResourceQuota" and "dra" in r.name)
    assert quota.inputs["metadata"]["namespace"] == "dra-driver-nvidia-gpu"
    release = next(r for r in resources if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs.get("name") == "dra-driver-nvidia-gpu")
    assert release.inputs["values"]["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"


def test_gke_dra_pool_with_the_operator_uses_the_operators_driver_root():
    config = example_config("nvl72-gke")
    config["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    config["gpufleet:gpuOperator"] = {"driver": {"source": "operator", "version": "580.95.05"}}
    resources = plan(stack_file(config, "nvl72-gke"), evaluate_policies=False).resources
    release = next(r for r in resources if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs.get("name") == "dra-driver-nvidia-gpu")
    assert release.inputs["values"]["nvidiaDriverRoot"] == "/run/nvidia/driver"
    assert not [r for r in resources if r.type == "kubernetes:yaml/v2:ConfigFile" and "nvidia-driver" in r.name]


def test_gke_dra_pool_refuses_gkes_driver_sharing_and_mig_settings():
    config = example_config("nvl72-gke")
    config["gpufleet:nodePools"][0]["gke"].update(
        {"gpuDriverVersion": "LATEST", "gpuSharing": {"strategy": "time-sharing", "maxSharedClientsPerGpu": 2}})
    problems = [p for p in spec_problems(config) if ".gke.gpu" in p]
    assert any("nodePools[0].gke.gpuDriverVersion" in p and "(got 'LATEST')" in p and "Allowed: unset" in p for p in problems)
    assert any("nodePools[0].gke.gpuSharing" in p and "(got 'time-sharing')" in p for p in problems)


def test_gke_dra_pools_needing_two_driver_installers_are_refused():
    config = example_config("nvl72-gke")
    config["gpufleet:nodePools"].append({"name": "h100", "machineType": "a3-highgpu-8g", "allocation": "dra",
                                         "minNodes": 0, "maxNodes": 2})
    problems = [p for p in spec_problems(config) if "nvidia-driver-installer" in p]
    assert len(problems) == 1 and "nodePools[0].machineType" in problems[0] and "(h100)" in problems[0]
