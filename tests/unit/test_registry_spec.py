"""gpufleet:registry and cluster.k3s.airgap checks (issue 37): each refusal names its key."""

from __future__ import annotations

from tests.helpers import example_config, load_config, spec_problems


def _paths(problems):
    return sorted({p.split(": ", 2)[1] for p in problems})


def test_the_airgap_examples_load():
    assert load_config(example_config("airgap-k3s"), "airgap-k3s").registry.mirror
    assert load_config(example_config("airgap-eks"), "airgap-eks").registry.mirror


def test_an_unverified_k3s_file_is_refused_naming_its_key():
    # arm64 at v1.36.2+k3s1: gpufleet records install.sh only (the arm64 binary and tarball values are doubtful), so
    # the two others need the stack's sums; an empty sum is refused by its shape.
    config = example_config("airgap-k3s")
    config["gpufleet:cluster"]["k3s"]["airgap"].update(arch="arm64", sha256={"images": "2" * 64})
    assert _paths(spec_problems(config)) == ["gpufleet:cluster.k3s.airgap.sha256.k3s"]
    config["gpufleet:cluster"]["k3s"]["airgap"]["sha256"] = {"k3s": "", "images": "2" * 64}
    assert _paths(spec_problems(config)) == ["gpufleet:cluster.k3s.airgap.sha256.k3s"]


def test_a_k3s_sum_that_contradicts_gpufleets_recorded_one_is_refused():
    config = example_config("airgap-k3s")  # amd64 v1.36.2+k3s1: all three recorded, the example gives none
    assert load_config(config, "airgap-k3s").cluster.k3s.airgap.sha256.images is None
    config["gpufleet:cluster"]["k3s"]["airgap"]["sha256"] = {"images": "2" * 64}
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:cluster.k3s.airgap.sha256.images"] and "differs from" in problems[0]


def test_airgap_without_a_mirror_has_no_path_to_its_images():
    config = example_config("airgap-k3s")
    del config["gpufleet:registry"]
    del config["gpufleet:registryPassword"]
    assert _paths(spec_problems(config)) == ["gpufleet:registry.mirror"]


def test_a_chart_that_would_bypass_the_mirror_is_refused():
    """Volcano has no reference archive to prove a mirror with: refused, the reason named."""
    config = example_config("airgap-k3s")
    config["gpufleet:addons"]["volcano"] = {"enabled": True}
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:registry.mirror"]
    assert "Volcano" in problems[0] and "../shared/reference/charts" in problems[0]


def test_the_amd_driver_build_is_refused_with_a_mirror():
    config = example_config("amd-lab")  # driver source: operator (KMM builds it from AMD's package repository)
    config["gpufleet:registry"] = {"mirror": "registry.example.internal/gpufleet"}
    # The NVIDIA pools' operator-built driver needs a package repository with a mirror too (issue 49): give it one,
    # so only the AMD refusal is left.
    config["gpufleet:gpuOperator"]["driver"] = {"source": "operator", "repoConfig": "local-packages"}
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:registry.mirror"] and len(problems) == 1
    assert "driver build" in problems[0] and "source: inbox" in problems[0]
    config["gpufleet:amdGpuOperator"]["driver"] = {"source": "inbox"}
    assert load_config(config, "amd-lab").registry.mirror


def test_charts_gpufleet_can_redirect_are_accepted_with_a_mirror():
    """The trainer, kube-prometheus-stack, the Network Operator (k3s RDMA) and the DRA driver: redirected now
    (tests/upstream/test_registry_mirror_render.py proves each against the real chart)."""
    config = example_config("airgap-k3s")
    config["gpufleet:addons"]["trainer"] = {"enabled": True}
    config["gpufleet:observability"] = {"metrics": {"backend": "kube-prometheus-stack"}}
    assert load_config(config, "airgap-k3s").addons.trainer.enabled
    eks = example_config("airgap-eks")
    eks["gpufleet:observability"] = {"metrics": {"backend": "amp"}}
    assert load_config(eks, "airgap-eks").registry.mirror
    for stack in ("lab", "nvl72-k3s"):
        config = example_config(stack)
        config["gpufleet:registry"] = {"mirror": "registry.example.internal/gpufleet"}
        if config["gpufleet:gpuOperator"]["driver"]["source"] == "operator":  # lab: a driver built from a repository
            config["gpufleet:gpuOperator"]["driver"]["repoConfig"] = "local-packages"
        assert load_config(config, stack).registry.mirror, stack


def test_an_eks_mirror_outside_ecr_is_refused():
    config = example_config("airgap-eks")
    config["gpufleet:registry"]["mirror"] = "registry.example.internal/gpufleet"
    assert _paths(spec_problems(config)) == ["gpufleet:registry.mirror"]


def test_the_password_is_secret_and_needed():
    config = example_config("airgap-k3s")
    config["gpufleet:registryPassword"] = "plain"
    assert _paths(spec_problems(config)) == ["gpufleet:registryPassword"]
    del config["gpufleet:registryPassword"]
    assert _paths(spec_problems(config)) == ["gpufleet:registryPassword"]


def test_a_vpc_without_nat_and_without_a_mirror_has_no_path_to_the_registry():
    config = example_config("airgap-eks")
    del config["gpufleet:registry"]
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:cluster.eks.network.egress"]
    assert "reach no public registry" in problems[0] and "(got 'endpoints')" in problems[0]


def test_a_mirror_in_another_region_is_out_of_reach_of_the_endpoints():
    config = example_config("airgap-eks")
    config["gpufleet:registry"]["mirror"] = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/gpufleet"
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:registry.mirror"] and "those of us-east-1" in problems[0]


def test_karpenter_without_nat_is_refused_naming_the_autoscaler():
    config = example_config("airgap-eks")
    config["gpufleet:cluster"]["eks"]["autoscaler"] = {"kind": "karpenter"}
    paths = _paths(spec_problems(config))
    assert "gpufleet:cluster.eks.autoscaler.kind" in paths


def test_endpoints_need_a_new_vpc_and_no_nat_setting():
    config = example_config("airgap-eks")
    config["gpufleet:cluster"]["eks"]["network"]["singleNatGateway"] = True
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:cluster.eks.network"] and "singleNatGateway" in problems[0]
    config["gpufleet:cluster"]["eks"]["network"] = {
        "vpcId": "vpc-0123456789abcdef0", "egress": "endpoints",
        "subnets": [{"id": "subnet-0123456789abcdef0", "availabilityZone": "us-east-1a"},
                    {"id": "subnet-0123456789abcdef1", "availabilityZone": "us-east-1b"}]}
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:cluster.eks.network"] and "existing network" in problems[0]


def test_egress_unset_is_nat():
    assert load_config(example_config("prod-eks"), "prod-eks").cluster.eks.network.egress == "nat"


def test_a_pre_pull_image_outside_the_mirror_bypasses_it():
    config = example_config("cold-start-k3s")
    config["gpufleet:registry"] = {"mirror": "registry.example.internal/gpufleet"}
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:nodePools[0].coldStart.images[0]", "gpufleet:nodePools[0].coldStart.images[1]"]
    assert "registry.example.internal/gpufleet/nvcr.io/nvidia/pytorch:25.01-py3" in problems[0]
    for pool in config["gpufleet:nodePools"]:
        if pool.get("coldStart"):
            pool["coldStart"]["images"] = [f"registry.example.internal/gpufleet/{i}" for i in pool["coldStart"]["images"]]
    assert load_config(config, "cold-start-k3s").registry.mirror


def test_a_model_cache_on_hosts_without_internet_has_no_path_to_its_source():
    config = example_config("airgap-k3s")
    config["gpufleet:modelCaches"] = example_config("cold-start-k3s")["gpufleet:modelCaches"]
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:modelCaches[0].source"] and "airgap" in problems[0]


def test_gke_mirrors_are_artifact_registry_and_private_nodes_without_nat_need_one():
    config = example_config("airgap-gke")
    assert load_config(config, "airgap-gke").registry.mirror
    config["gpufleet:registry"]["mirror"] = "registry.example.internal/gpufleet"
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:registry.mirror"] and "Artifact Registry" in problems[0]
    del config["gpufleet:registry"]["mirror"]
    problems = spec_problems(config)
    assert _paths(problems) == ["gpufleet:cluster.gke.network.cloudNat"] and "Private Google Access" in problems[0]
    config["gpufleet:cluster"]["gke"]["network"]["cloudNat"] = True  # a NAT: the public registries are reachable
    assert load_config(config, "airgap-gke").registry.mirror is None
    config["gpufleet:cluster"]["gke"]["network"]["cloudNat"] = False
    config["gpufleet:cluster"]["gke"].update(privateNodes=False, privateEndpoint=False)  # nodes with external addresses
    assert load_config(config, "airgap-gke").registry.mirror is None
