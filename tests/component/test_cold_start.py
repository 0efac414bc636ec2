"""Component tests (layer 2) of issue 36's cold-start paths, on the example stacks that use them: the real provider inputs
each path writes, the pre-pull DaemonSet and the model cache's claim and Job (strictly valid Kubernetes objects), the
precompiled driver values, and the plan's capacity lines. Pools without `coldStart` keep their inputs."""

from __future__ import annotations

import base64
import tomllib

from gpufleet.app.plan.render import to_json, to_text
from gpufleet.components.cold_start.model_cache import MARKER, script
from tests.helpers import by_type, dig, one, planned
from tests.k8s_validate import as_object, validate_strict

NODE_POOL = "gcp:container/nodePool:NodePool"
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def test_gke_pool_streams_images_from_a_secondary_boot_disk_cache():
    p = planned("cold-start-gke")
    node = one(p, NODE_POOL, "cold-gke-pool-l4-infer-pool").inputs["nodeConfig"]
    assert node["gcfsConfig"] == {"enabled": True}
    assert node["secondaryBootDisks"] == [{"diskImage": "global/images/vllm-openai-cache", "mode": "CONTAINER_IMAGE_CACHE"}]
    assert node["kubeletConfig"] == {"maxParallelImagePulls": 3}
    # Image streaming needs Container-Optimized OS (GKE's image streaming requirements).
    assert node["imageType"] == "COS_CONTAINERD"
    # A pool without coldStart keeps its inputs.
    other = one(planned("prod-gke"), NODE_POOL, "prod-gke-pool-l4-infer-pool").inputs["nodeConfig"]
    assert not {"gcfsConfig", "secondaryBootDisks", "kubeletConfig"} & set(other)


def _user_data(p, name: str) -> str:
    return base64.b64decode(one(p, LT, name).inputs["userData"]).decode()


def test_eks_bottlerocket_data_volume_starts_from_the_snapshot():
    p = planned("cold-start-eks")
    lt = one(p, LT, "cold-eks-pool-l4-burst-lt").inputs
    (mapping,) = lt["blockDeviceMappings"]
    assert mapping["deviceName"] == "/dev/xvdb"  # Bottlerocket's data volume, where containerd keeps images
    assert mapping["ebs"]["snapshotId"] == "snap-0123456789abcdef0"
    # No encryption value beside a snapshot: EC2 refuses one (LaunchTemplateEbsBlockDeviceRequest.Encrypted); the
    # volume is encrypted as its snapshot is.
    assert "encrypted" not in mapping["ebs"]
    settings = tomllib.loads(_user_data(p, "cold-eks-pool-l4-burst-lt"))["settings"]
    assert settings == {"kubernetes": {"max-parallel-image-pulls": 4}}  # no RAID0 bootstrap command: localStorage none


def test_eks_al2023_bounds_parallel_pulls_in_a_nodeadm_part():
    p = planned("cold-start-eks")
    text = _user_data(p, "cold-eks-pool-l4-infer-lt")
    assert "Content-Type: application/node.eks.aws" in text
    assert "      serializeImagePulls: false\n      maxParallelImagePulls: 4\n" in text
    assert "snapshotId" not in one(p, LT, "cold-eks-pool-l4-infer-lt").inputs["blockDeviceMappings"][0]["ebs"]
    # A pool without coldStart: its user data is the RAID0 NodeConfig alone, as before.
    assert "maxParallelImagePulls" not in _user_data(planned("prod-eks"), "prod-gpu-pool-h100-train-lt")


NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def test_karpenter_bottlerocket_node_class_maps_the_snapshot_onto_the_data_volume():
    p = planned("karpenter-eks")
    spec = one(p, NODECLASS, "karpenter-gpu-pool-l4-burst-nodeclass").inputs["spec"]
    (mapping,) = spec["blockDeviceMappings"]
    assert mapping["deviceName"] == "/dev/xvdb"
    assert mapping["ebs"]["snapshotID"] == "snap-0123456789abcdef0"
    # The CRD: no encryption value on a volume made from a snapshot (it is encrypted as the snapshot is).
    assert "encrypted" not in mapping["ebs"] and mapping["ebs"]["volumeSize"] == "100Gi"
    assert "userData" not in spec
    # A pool without the snapshot keeps its encrypted empty volume.
    other = one(p, NODECLASS, "karpenter-gpu-pool-h100-block-nodeclass").inputs["spec"]["blockDeviceMappings"][0]["ebs"]
    assert other["encrypted"] is True and "snapshotID" not in other and "userData" not in other


def test_karpenter_al2023_node_class_bounds_parallel_pulls_in_its_user_data():
    p = planned("karpenter-eks")
    spec = one(p, NODECLASS, "karpenter-gpu-pool-l4-spot-nodeclass").inputs["spec"]
    assert spec["userData"].startswith("MIME-Version: 1.0\n")
    assert "Content-Type: application/node.eks.aws" in spec["userData"]
    assert "      serializeImagePulls: false\n      maxParallelImagePulls: 4\n" in spec["userData"]
    assert spec["blockDeviceMappings"][0]["ebs"]["encrypted"] is True


def test_k3s_prepull_daemonset_runs_every_listed_image_on_the_pool():
    p = planned("cold-start-k3s")
    ds = one(p, "kubernetes:apps/v1:DaemonSet", "cold-k3s-prepull-l4-ds")
    obj = as_object(ds)
    validate_strict(obj, f"{p.spec.cluster.kubernetes_version}.0")
    pod = obj["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpufleet.io/pool": "l4"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    images = [c["image"] for c in pod["initContainers"][1:]]
    assert images == ["nvcr.io/nvidia/pytorch:25.01-py3", "docker.io/vllm/vllm-openai:v0.8.5"]
    # The image is pulled and run without needing anything inside it: the static busybox copied in first.
    assert all(c["command"] == ["/gpufleet-prepull/busybox", "true"] for c in pod["initContainers"][1:])
    assert len(by_type(p, "kubernetes:apps/v1:DaemonSet")) >= 1
    assert not [r for r in by_type(planned("dev"), "kubernetes:apps/v1:DaemonSet") if "prepull" in r.name]


def test_model_cache_claim_and_prefetch_job():
    p = planned("cold-start-eks")
    version = f"{p.spec.cluster.kubernetes_version}.0"
    pvc = as_object(one(p, "kubernetes:core/v1:PersistentVolumeClaim", "cold-eks-model-cache-default-llama-3-1-70b-pvc"))
    job = as_object(one(p, "kubernetes:batch/v1:Job", "cold-eks-model-cache-default-llama-3-1-70b-prefetch"))
    for obj in (pvc, job):
        validate_strict(obj, version)
    assert pvc["spec"]["storageClassName"] == "fsx-lustre" and pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1200Gi"
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["envFrom"] == [{"secretRef": {"name": "model-reader"}}]
    assert {"name": "SOURCE", "value": "s3://example-models/llama-3.1-70b-instruct/"} in container["env"]
    # The source never appears in the script: only the quoted variable does.
    assert "example-models" not in container["command"][2] and '"$SOURCE"' in container["command"][2]
    assert job["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    claim = one(p, "kubernetes:core/v1:PersistentVolumeClaim", "cold-eks-model-cache-default-llama-3-1-70b-pvc")
    assert claim.protect


def test_prefetch_script_skips_a_cache_already_filled_from_the_same_source(tmp_path):
    """The idempotence marker, run for real with /bin/sh and a fake `aws` that records its calls."""
    import os
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    (bin_dir / "aws").write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    (bin_dir / "aws").chmod(0o755)
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SOURCE": "s3://b-1/m; touch /tmp/x",
           "CACHE_DIR": str(cache)}
    for _ in range(2):
        subprocess.run(["/bin/sh", "-c", script("s3")], env=env, check=True, capture_output=True)
    assert calls.read_text().splitlines() == [f"s3 sync --only-show-errors s3://b-1/m; touch /tmp/x {cache}"]
    assert (cache / MARKER).read_text() == "s3://b-1/m; touch /tmp/x"
    env["SOURCE"] = "s3://b-1/other"
    subprocess.run(["/bin/sh", "-c", script("s3")], env=env, check=True, capture_output=True)
    assert len(calls.read_text().splitlines()) == 2


def test_model_cache_on_managed_lustre_filestore_and_nfs():
    gke = planned("cold-start-gke")
    version = f"{gke.spec.cluster.kubernetes_version}.0"
    pvc = as_object(one(gke, "kubernetes:core/v1:PersistentVolumeClaim", "cold-gke-model-cache-default-gemma-2-9b-pvc"))
    assert pvc["spec"]["storageClassName"] == "gpufleet-lustre"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "9000Gi"
    small = as_object(one(gke, "kubernetes:core/v1:PersistentVolumeClaim", "cold-gke-model-cache-default-gemma-2-2b-pvc"))
    assert small["spec"]["storageClassName"] == "gpufleet-rwx"
    job = as_object(one(gke, "kubernetes:batch/v1:Job", "cold-gke-model-cache-default-gemma-2-9b-prefetch"))
    assert "envFrom" not in job["spec"]["template"]["spec"]["containers"][0]  # no Secret named: the pod's identity
    for obj in (pvc, small, job):
        validate_strict(obj, version)
    lab = planned("cold-start-k3s")
    pvc = as_object(one(lab, "kubernetes:core/v1:PersistentVolumeClaim", "cold-k3s-model-cache-default-llama-3-1-8b-pvc"))
    assert pvc["spec"]["storageClassName"] == "nfs"
    job = as_object(one(lab, "kubernetes:batch/v1:Job", "cold-k3s-model-cache-default-llama-3-1-8b-prefetch"))
    pod = job["spec"]["template"]["spec"]
    env = {e["name"]: e["value"] for e in pod["containers"][0]["env"]}
    assert env["SOURCE"] == "hf://meta-llama/Llama-3.1-8B-Instruct" and env["PYTHONPATH"] == "/deps"
    # issue 48: the packages come from a hash-locked install in an init container that never sees the credentials;
    # the container that holds the token installs nothing.
    (install,) = pod["initContainers"]
    assert "envFrom" not in install and "envFrom" in pod["containers"][0]
    assert "pip" not in pod["containers"][0]["command"][-1]
    pip = install["command"][-1]
    for flag in ("--require-hashes", "--no-deps", "--only-binary=:all:", "--target /deps"):
        assert flag in pip
    requirements = {e["name"]: e["value"] for e in install["env"]}["HF_REQUIREMENTS"].splitlines()
    assert requirements[0].startswith("huggingface_hub==0.34.4 --hash=sha256:")
    assert all("==" in line and "--hash=sha256:" in line for line in requirements)
    validate_strict(job, f"{lab.spec.cluster.kubernetes_version}.0")


def test_precompiled_driver_values():
    p = planned("cold-start-k3s")
    release = one(p, "kubernetes:helm.sh/v3:Release", "cold-k3s-gpu-operator-release")
    driver = dig(release.inputs, "values.driver")
    assert driver["usePrecompiled"] is True
    assert driver["version"].isdigit() and len(driver["version"]) == 3  # the branch: images are `<branch>-<kernel>-<os>`


def test_plan_shows_the_cold_start_paths_per_pool():
    p = planned("cold-start-eks")
    rows = {c["pool"]: c for c in to_json(p)["capacity"]}
    assert rows["l4-burst"]["coldStart"][0].startswith("data volume from snapshot snap-0123456789abcdef0")
    assert all("coldStart" not in c for c in to_json(planned("prod-eks"))["capacity"])
    text = to_text(p)
    assert "  l4-infer cold start: no image cache on al2023-nvidia (a data-volume snapshot needs Bottlerocket); " in text


def test_gke_managed_lustre_driver_class_and_private_services_access():
    p = planned("cold-start-gke")
    addons = one(p, "gcp:container/cluster:Cluster", "cold-gke-gke-cluster").inputs["addonsConfig"]
    assert addons["lustreCsiDriverConfig"] == {"enabled": True}
    sc = as_object(one(p, "kubernetes:storage.k8s.io/v1:StorageClass", "cold-gke-storage-lustre"))
    validate_strict(sc, f"{p.spec.cluster.kubernetes_version}.0")
    assert sc["provisioner"] == "lustre.csi.storage.gke.io" and sc["metadata"]["name"] == "gpufleet-lustre"
    assert sc["parameters"]["perUnitStorageThroughput"] == "1000"
    assert sc["volumeBindingMode"] == "WaitForFirstConsumer" and sc["reclaimPolicy"] == "Retain"
    rng = one(p, "gcp:compute/globalAddress:GlobalAddress", "cold-gke-lustre-access-range").inputs
    assert (rng["purpose"], rng["addressType"], rng["prefixLength"]) == ("VPC_PEERING", "INTERNAL", 20)
    peering = one(p, "gcp:servicenetworking/connection:Connection", "cold-gke-lustre-access-peering").inputs
    assert peering["service"] == "servicenetworking.googleapis.com" and len(peering["reservedPeeringRanges"]) == 1
    fw = one(p, "gcp:compute/firewall:Firewall", "cold-gke-lustre-access-firewall").inputs
    assert fw["allows"] == [{"protocol": "tcp", "ports": ["988"]}] and fw["sourceRanges"][0].endswith("/20")
    # A GKE stack without managedLustre: no driver input, no class, no peering (its inputs stay as they were).
    other = planned("prod-gke")
    assert "lustreCsiDriverConfig" not in one(other, "gcp:container/cluster:Cluster", "prod-gke-gke-cluster").inputs["addonsConfig"]
    assert not by_type(other, "gcp:servicenetworking/connection:Connection")
