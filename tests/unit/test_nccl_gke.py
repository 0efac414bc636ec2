"""Unit tests: the NCCL all-reduce `gpufleet verify --level full` runs on GKE GPUDirect-TCPX/TCPXO/RDMA pools
(gpufleet/app/verify/nccl/gke.py). The pods name the pool's networks exactly as components/gke creates them (checked against
the plan, so the two cannot drift) and carry Google's annotations, volumes, images and commands per kind."""

from __future__ import annotations

import copy
import json

import pytest

from gpufleet.app import verify
from gpufleet.base import versions
from gpufleet.app.verify.nccl import gke as nccl_gke
from gpufleet.app.verify.nccl import allreduce
from gpufleet.base.catalog import gcp
from gpufleet.base.spec import load_spec
from tests.helpers import by_type, example, example_config, load_config, planned

POOLS = {"prod-gke": ("h100-train", "TCPX"), "dws-gke": ("a3mega-queued", "TCPXO")}


def _target(stack: str, pool: str):
    sf = example(stack)
    return next(p for p in verify.targets(stack, load_spec(sf.stack, sf.config, sf.secret_keys)).pools if p.name == pool)


def _pods(objs: list[dict]) -> list[dict]:
    return [o for o in objs if o["kind"] == "Pod"]


@pytest.mark.parametrize("stack", sorted(POOLS))
def test_pods_attach_the_networks_the_plan_creates_for_the_pool_in_nic_order(stack):
    pool, kind = POOLS[stack]
    target = _target(stack, pool)
    assert target.nccl_note == "" and [o["kind"] for o in target.rdma_manifests] == ["Service", "Pod", "Pod"]
    plan = planned(stack)
    params = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in
              by_type(plan, "kubernetes:networking.gke.io/v1:GKENetworkParamSet")}
    networks = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in by_type(plan, "kubernetes:networking.gke.io/v1:Network")}
    node_pool = next(r for r in by_type(plan, "gcp:container/nodePool:NodePool") if r.name == f"{stack}-pool-{pool}-pool")
    nics = node_pool.inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    assert len(nics) == gcp.machine(target.instance_type).gpudirect.networks
    for pod in _pods(target.rdma_manifests):
        ifaces = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
        assert ifaces[0] == {"interfaceName": "eth0", "network": "default"}
        assert pod["metadata"]["annotations"]["networking.gke.io/default-interface"] == "eth0"
        # eth<i+1> is the Network whose GKENetworkParamSet is the node pool's i-th additional NIC.
        for i, iface in enumerate(ifaces[1:]):
            assert iface["interfaceName"] == f"eth{i + 1}"
            network = networks[iface["network"]]
            assert network["type"] == "Device"
            param = params[network["parametersRef"]["name"]]
            assert (param["vpc"], param["vpcSubnet"], param["deviceMode"]) == (
                nics[i]["network"], nics[i]["subnetwork"], "NetDevice")
        assert len(ifaces) == len(nics) + 1
        # Every pool-prefixed Network of the plan is attached.
        assert {i["network"] for i in ifaces[1:]} == {n for n in networks if n.startswith(f"{pool}-")}


@pytest.mark.parametrize("stack", sorted(POOLS))
def test_pods_carry_google_images_devices_and_the_pools_scheduling(stack):
    pool, kind = POOLS[stack]
    target = _target(stack, pool)
    images = versions.GKE_GPUDIRECT_TEST_IMAGES[kind]
    for rank, pod in enumerate(_pods(target.rdma_manifests)):
        spec, ann = pod["spec"], pod["metadata"]["annotations"]
        daemon, test = spec["initContainers"][0], spec["containers"][0]
        assert daemon["name"] == {"TCPX": "tcpx-daemon", "TCPXO": "tcpxo-daemon"}[kind]
        devices = ann[f"devices.gke.io/container.{daemon['name']}"].splitlines()
        assert devices[:10] == [f"- path: /dev/nvidia{i}" for i in range(8)] + ["- path: /dev/nvidiactl", "- path: /dev/nvidia-uvm"]
        assert devices[10:] == (["- path: /dev/dmabuf_import_helper"] if kind == "TCPXO" else [])
        assert (daemon["image"], test["image"]) == (images["rxdm"], images["nccl-test"])
        assert test["resources"]["limits"] == {"nvidia.com/gpu": str(target.gpus_per_node)} == {"nvidia.com/gpu": "8"}
        assert spec["nodeSelector"] == target.node_selector and spec["tolerations"] == target.tolerations
        mounted = {m["name"] for c in (daemon, test) for m in c["volumeMounts"]}
        assert mounted == {v["name"] for v in spec["volumes"]}
        assert pod["metadata"]["name"] == f"nccl-allreduce-{rank}"
    if kind == "TCPX":
        # TCPX's run-nccl.sh comes from the nccl-configmap gpufleet applies with the plugin installer.
        assert "nccl-config" in versions.GKE_GPUDIRECT_MANIFESTS["TCPX"]
        vols = {v["name"]: v for v in _pods(target.rdma_manifests)[0]["spec"]["volumes"]}
        assert vols["config-volume"]["configMap"]["name"] == "nccl-configmap"


def test_images_share_the_plugin_release_of_the_installers_commit():
    # The NCCL test image must carry the plugin version the installer puts on the nodes (gpudirect-tcpxo/README.md).
    assert versions.GKE_GPUDIRECT_TEST_IMAGES["TCPX"]["nccl-test"].endswith("/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9")
    assert "fee883360a660f71ba07478db95d5c1325322f77" in versions.GKE_GPUDIRECT_MANIFESTS["TCPX"]["nccl-installer"]
    assert versions.GKE_GPUDIRECT_TEST_IMAGES["TCPXO"]["nccl-test"].endswith("/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.14")
    assert "bd4a7491672b48dfec28f3679b679a614f6cbbc7" in versions.GKE_GPUDIRECT_MANIFESTS["TCPXO"]["nccl-installer"]


@pytest.mark.parametrize("kind, fragment", [
    ("TCPX", '/scripts/run-nccl.sh all_reduce_perf "${LD_LIBRARY_PATH}" 8 eth1,eth2,eth3,eth4 "$SIZE" "$SIZE" 2'),
    ("TCPXO", 'DATA_MIN="$SIZE" DATA_MAX="$SIZE" GPU_PER_NODE=8 BENCHMARK=all_reduce_perf NHOSTS=2'),
])
def test_rank0_runs_all_reduce_perf_at_the_checks_size_after_googles_setup(kind, fragment):
    objs = nccl_gke.manifests("nccl-allreduce", kind, "p", 8, 4 if kind == "TCPX" else 8, {"a": "b"}, [])
    script = objs[1]["spec"]["containers"][0]["command"][2]
    hosts = "nccl-allreduce-0.nccl-allreduce.default.svc.cluster.local nccl-allreduce-1.nccl-allreduce.default.svc.cluster.local"
    lines = script.splitlines()
    assert lines.index(f"/scripts/init_ssh.sh {hosts}") < lines.index(
        f"cd /scripts && /scripts/gen_hostfiles.sh {hosts} && cd /") < len(lines) - 1
    assert 'SIZE="${NCCL_TEST_BYTES:-1073741824}"' in lines and fragment in script
    assert lines[-1].startswith(fragment.split(" ")[0])
    assert objs[2]["spec"]["containers"][0]["command"][2] == "service ssh restart\nsleep infinity\n"
    # The Service publishes a rank's hostname.subdomain once its sshd runs (Ready), and rank 0 waits for rank 1's.
    assert objs[0]["spec"] == {"clusterIP": "None", "selector": {"app.kubernetes.io/name": "nccl-allreduce"}}
    assert lines.index("until getent hosts nccl-allreduce-1.nccl-allreduce.default.svc.cluster.local >/dev/null; "
                       "do sleep 5; done") < lines.index(f"/scripts/init_ssh.sh {hosts}")
    for pod in objs[1:]:
        assert pod["spec"]["containers"][0]["readinessProbe"] == {"exec": {"command": ["service", "ssh", "status"]},
                                                                   "periodSeconds": 5}


def rdma_config() -> dict:
    """prod-gke with one a3-ultragpu-8g GPUDirect-RDMA pool (Hyperdisk-only machines: the disk settings they need)."""
    config = copy.deepcopy(example_config("prod-gke"))
    gke = config["gpufleet:cluster"]["gke"]
    gke["storage"] = {**gke.get("storage", {}), "defaultDiskType": "hyperdisk-balanced"}
    gke["systemPool"] = {**gke.get("systemPool", {}), "machineType": "c3-standard-4"}
    config["gpufleet:nodePools"] = [{"name": "ultra", "machineType": "a3-ultragpu-8g", "rdma": True, "maxNodes": 2,
                                     "gke": {"zones": ["us-central1-b"]}}]
    return config


def test_gpudirect_rdma_pods_attach_the_roce_networks_the_plan_creates_in_nic_order():
    from tests.helpers import plan_config
    from tests.k8s_validate import validate_strict

    from gpufleet.base.spec.shape import shaped_pools

    spec = load_config(rdma_config())
    objs, why = allreduce.for_pool(spec, shaped_pools(spec)[0])  # as verify: GPUs per node from the catalog
    assert why == "" and [o["kind"] for o in objs] == ["Service", "Pod", "Pod"]
    plan = plan_config(rdma_config(), policies=False)
    params = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in
              by_type(plan, "kubernetes:networking.gke.io/v1:GKENetworkParamSet")}
    networks = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in by_type(plan, "kubernetes:networking.gke.io/v1:Network")}
    nics = next(r for r in by_type(plan, "gcp:container/nodePool:NodePool") if r.name == "prod-gke-pool-ultra-pool"
                ).inputs["networkConfig"]["additionalNodeNetworkConfigs"]
    # NIC 0 is the second gVNIC (not attached to pods, as in Google's tests); NICs 1..8 the RoCE subnets.
    assert len(nics) == 9 and params["ultra-gvnic"]["deviceMode"] == "NetDevice"
    for pod in _pods(objs):
        ifaces = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
        assert ifaces[0] == {"interfaceName": "eth0", "network": "default"}
        for i, iface in enumerate(ifaces[1:]):
            assert iface["interfaceName"] == f"eth{i + 2}"
            param = params[networks[iface["network"]]["parametersRef"]["name"]]
            assert (param["vpc"], param["vpcSubnet"], param["deviceMode"]) == (
                nics[i + 1]["network"], nics[i + 1]["subnetwork"], "RDMA")
        assert {x["network"] for x in ifaces[1:]} == {n for n in networks if n.startswith("ultra-rdma-")}
        assert len(ifaces) == 9
        c = pod["spec"]["containers"][0]
        assert c["image"] == versions.GKE_GPUDIRECT_TEST_IMAGES["RDMA"]["nccl-test"]
        assert c["image"].endswith("/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.0.6")
        # The test image's gIB release is the installer's (v1.0.6 at 2c776f7e).
        assert "2c776f7e9656a2b6476f19938b738b4186000ce3" in versions.GKE_GPUDIRECT_MANIFESTS["RDMA"]["nccl-installer"]
        assert c["resources"]["limits"] == {"nvidia.com/gpu": "8"}
        assert {m["mountPath"] for m in c["volumeMounts"]} == {"/usr/local/nvidia", "/usr/local/gib", "/dev/shm"}
        assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in pod["spec"]["tolerations"]
    for obj in objs:
        validate_strict(obj, "1.34")
    script = objs[1]["spec"]["containers"][0]["command"][2]
    hosts = ["nccl-allreduce-0.nccl-allreduce.default.svc.cluster.local", "nccl-allreduce-1.nccl-allreduce.default.svc.cluster.local"]
    for h in hosts:
        assert f"until ssh -p 222 -o StrictHostKeyChecking=no {h} hostname; do" in script
        assert f"echo {h} port=222 slots=8 | tee -a /tmp/hostfile" in script
    assert script.index("source /usr/local/gib/scripts/set_nccl_env.sh") < script.index("mpirun")
    assert script.rstrip().endswith('/third_party/nccl-tests/build/all_reduce_perf -b "$SIZE" -e "$SIZE" -f 2 -g 1 '
                                    '-w 5 --iters 100 -c 1')
    assert objs[2]["spec"]["containers"][0]["command"][2].endswith("/scripts/container_entry.sh daemon &\nsleep infinity\n")


def test_the_generator_writes_the_tcpx_pair_for_prod_gke(capsys):
    sf = example("prod-gke")
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert allreduce.for_stack(spec) == _target("prod-gke", "h100-train").rdma_manifests
    assert allreduce.main(["prod-gke"]) == 0
    out = capsys.readouterr().out
    assert "devices.gke.io/container.tcpx-daemon" in out and "h100-train-vpc-3" in out


def test_the_generator_refuses_a_stack_without_an_rdma_pool(capsys):
    assert allreduce.main(["dev"]) == 2
    assert capsys.readouterr().err == "gpufleet.app.verify.nccl: stack 'dev': the stack has no RDMA pool\n"


def test_a4x_rdma_pools_get_googles_arm64_gib_installer_and_refuse_the_x86_one_beside_them():
    """Issue 49: the x86 gIB installer selects H200 and B200 nodes only, so an A4X RDMA pool gets Google's A4X
    installer (nccl-plugin-gib-arm64, container-engine-accelerators @503e4b7b); both are the DaemonSet
    kube-system/nccl-rdma-installer, so a stack with RDMA pools of both is refused."""
    from gpufleet.base.catalog import gcp
    from gpufleet.components.gke.gpudirect_wiring import GpuDirectPool, installer_manifests
    from tests.helpers import example_config, load_config, spec_problems

    a4x, a4 = gcp.machine("a4x-highgpu-4g").gpudirect, gcp.machine("a4-highgpu-8g").gpudirect
    assert (a4x.kind, a4x.manifests_key, a4.manifests_key) == ("RDMA", "RDMA-a4x", "RDMA")
    assert installer_manifests([GpuDirectPool("gb200", a4x.kind, [], a4x.manifests_key)]) == [(
        "RDMA-a4x", "nccl-installer", "https://raw.githubusercontent.com/GoogleCloudPlatform/container-engine-accelerators/"
        "503e4b7bd381a5a18acfc17b6f4fc5343f35380d/gpudirect-rdma/nccl-rdma-installer-a4x.yaml")]
    config = example_config("nvl72-gke")
    config["gpufleet:nodePools"][0]["rdma"] = True
    load_config(config)
    config["gpufleet:nodePools"].append({"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2, "rdma": True,
                                         "capacity": "spot", "gke": {"zones": ["us-central1-b"]}})
    assert spec_problems(config) == [
        "stack 'test': gpufleet:nodePools[1].rdma: pools gb200, b200 need different RDMA NCCL plugin installers (x86 and "
        "A4X's arm64 one), and Google ships both as the DaemonSet kube-system/nccl-rdma-installer: one stack can apply "
        "only one; put the A4X pools in a stack of their own, or set rdma: false on one side (got True)"]
