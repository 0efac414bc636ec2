"""Unit tests: the NCCL all-reduce `gpufleet verify --level full` runs on EKS EFA pools (gpufleet/nccl_test.py
efa_manifests): which pools get it, with how many EFA interfaces, which environment, and which image."""

from __future__ import annotations

import pytest

from gpufleet import catalog, labels, nccl_test, verify, versions
from gpufleet.catalog import aws
from gpufleet.spec import load_spec
from gpufleet.verify.busbw import ExpectedBusbw
from tests.helpers import STACKS, example


def _targets(stack: str):
    sf = example(stack)
    return verify.targets(stack, load_spec(sf.stack, sf.config, sf.secret_keys))


def _pods(objs: list[dict]) -> list[dict]:
    return [o for o in objs if o["kind"] == "Pod"]


def test_p5_efa_stack_targets_carry_the_nccl_check_and_the_p5_figure():
    t = _targets("p5-efa")
    p5 = next(p for p in t.pools if p.name == "p5")
    assert p5.instance_type == "p5.48xlarge" and p5.rdma and p5.nccl_note == ""
    assert [o["kind"] for o in p5.rdma_manifests] == ["ConfigMap", "Service", "Pod", "Pod"]
    # The figure verify compares this pool with: 487.09 GB/s at 16 GiB (gpufleet/catalog/nccl_busbw.yaml).
    assert verify.expected_busbw()[p5.instance_type] == ExpectedBusbw(487.09, 17179869184)
    for pod in _pods(p5.rdma_manifests):
        c = pod["spec"]["containers"][0]
        assert c["image"] == versions.efa_nccl_test_image()
        assert c["resources"]["limits"][labels.EFA_RESOURCE] == "32"
        assert pod["spec"]["nodeSelector"] == p5.node_selector and pod["spec"]["tolerations"] == p5.tolerations


def _eks_rdma_pools():
    for stack in STACKS:
        t = _targets(stack)
        if t.platform == "eks":
            yield from ((stack, p) for p in t.pools if p.rdma)


@pytest.mark.parametrize("stack, pool", list(_eks_rdma_pools()), ids=lambda v: getattr(v, "name", v))
def test_every_eks_rdma_pool_requests_every_efa_interface_of_its_type(stack, pool):
    want = aws.instance_type(pool.instance_type).efa_interfaces
    assert want > 0
    pods = _pods(pool.rdma_manifests)
    assert len(pods) == 2, f"{stack}/{pool.name}: {pool.nccl_note}"
    for pod in pods:
        c = pod["spec"]["containers"][0]
        assert c["resources"]["limits"] == {labels.GPU_RESOURCE: str(pool.gpus_per_node), labels.EFA_RESOURCE: str(want),
                                            "hugepages-2Mi": "5120Mi"}
        env = {e["name"]: e["value"] for e in c["env"]}
        assert env["FI_PROVIDER"] == "efa"
        assert ("FI_EFA_USE_DEVICE_RDMA" in env) == (pool.instance_type in {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge"})


def test_device_rdma_is_set_only_on_the_types_the_source_names():
    def env(itype):
        pod = _pods(nccl_test.efa_manifests("x", 8, 16, itype, {labels.POOL_LABEL: "x"}, []))[0]
        return {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}

    assert env("p5.48xlarge")["FI_EFA_USE_DEVICE_RDMA"] == "1"
    assert env("p4de.24xlarge")["FI_EFA_USE_DEVICE_RDMA"] == "1"
    # Not named by the DLC EFA test: left to libfabric's default rather than guessed.
    assert "FI_EFA_USE_DEVICE_RDMA" not in env("p5en.48xlarge")
    assert "FI_EFA_USE_DEVICE_RDMA" not in env(None)


@pytest.mark.parametrize("ami", ["al2023-nvidia", "bottlerocket-nvidia"])
def test_efa_image_cuda_runs_on_the_eks_gpu_amis_driver(ami):
    support = catalog.cuda_support(aws.ami(ami).driver_floor, versions.EFA_NCCL_TEST_IMAGE_CUDA)
    assert support.ok and support.mode == "full", support.why
    assert f"cu{versions.EFA_NCCL_TEST_IMAGE_CUDA.replace('.', '')[:3]}" in versions.EFA_NCCL_TEST_IMAGE_TAG


def test_gke_gpudirect_pool_has_no_manifests_and_says_why():
    pool = next(p for p in _targets("prod-gke").pools if p.name == "h100-train")
    assert pool.rdma and pool.rdma_manifests == []
    assert pool.nccl_note == ("no NCCL check for GPUDirect pools on gke yet (gpufleet/nccl_test.py covers k3s RDMA and "
                              "EKS EFA pools)")
