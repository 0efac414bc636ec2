"""components/cold_start on small args (issue 56: mutants of the prefetch Job's and the pre-pull DaemonSet's pod specs
survived the example-stack tests): the objects exactly, per source scheme, with and without a mirror, and the
components' children under mocks (protection, what they wait for)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels, versions
from gpufleet.base.spec.features.cold_start import ModelCacheSpec
from gpufleet.base.spec.features.protection import ProtectionSpec
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.cold_start import model_cache as C
from gpufleet.components.cold_start import prepull as P
from gpufleet.components.image_mirror import MIRROR_FACT
from gpufleet.testing import run as run_under_mocks

MIRROR = "mirror.example.com"
NO_ESCALATION = {"allowPrivilegeEscalation": False}


def _args(source: str = "s3://models/llama", **more) -> C.ModelCacheArgs:
    return C.ModelCacheArgs(spec=ModelCacheSpec.model_validate({"name": "llama", "source": source, **more}),
                            storage_class="gpufleet-rwx")


def test_an_s3_prefetch_job_exactly():
    job = C.job(_args(credentialsSecret="aws-creds"))
    image = versions.MODEL_PREFETCH_IMAGES["s3"]
    assert job["metadata"] == {"name": "llama-prefetch", "namespace": "default", "labels": {C.MODEL_CACHE_LABEL: "llama"},
                               "annotations": {labels.PULUMI_SKIP_AWAIT_ANNOTATION: "true"}}
    spec = job["spec"]
    assert spec["backoffLimit"] == 6  # Kubernetes' own default, said out loud
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "OnFailure" and "initContainers" not in pod
    assert pod["volumes"] == [{"name": "cache", "persistentVolumeClaim": {"claimName": "llama"}}]
    assert pod["containers"] == [{
        "name": "prefetch", "image": image, "command": ["/bin/sh", "-c", C.script("s3")],
        "env": [{"name": "SOURCE", "value": "s3://models/llama"}, {"name": "CACHE_DIR", "value": C.MOUNT}],
        "volumeMounts": [{"name": "cache", "mountPath": C.MOUNT}],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "4Gi"}},
        "securityContext": NO_ESCALATION,
        "envFrom": [{"secretRef": {"name": "aws-creds"}}],
    }]
    assert "aws s3 sync" in C.script("s3") and "gcloud storage rsync" in C.script("gs")


def test_an_hf_job_installs_hash_locked_deps_in_an_init_container_without_the_token():
    job = C.job(_args("hf://meta/llama@main", credentialsSecret="hf"), mirror=MIRROR)
    pod = job["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    # The pinned images name their registry (docker.io/...), so the mirror's path is the mirror, then the reference.
    assert init["image"] == pod["containers"][0]["image"] == f"{MIRROR}/{versions.MODEL_PREFETCH_IMAGES['hf']}"
    assert init["command"] == ["/bin/sh", "-c", C.HF_INSTALL] and "--require-hashes" in C.HF_INSTALL
    assert init["securityContext"] == NO_ESCALATION and "envFrom" not in init
    assert init["volumeMounts"] == [{"name": "deps", "mountPath": C.DEPS}]
    container = pod["containers"][0]
    assert container["env"][-1] == {"name": "PYTHONPATH", "value": C.DEPS}
    assert container["volumeMounts"][-1] == {"name": "deps", "mountPath": C.DEPS, "readOnly": True}
    assert container["envFrom"] == [{"secretRef": {"name": "hf"}}] and container["securityContext"] == NO_ESCALATION
    assert pod["volumes"][-1] == {"name": "deps", "emptyDir": {}}
    # No credentials Secret: no envFrom at all; only hf:// installs anything first.
    gs = C.job(_args("gs://models/llama"))["spec"]["template"]["spec"]
    assert "envFrom" not in gs["containers"][0] and "initContainers" not in gs
    assert gs["containers"][0]["volumeMounts"] == [{"name": "cache", "mountPath": C.MOUNT}]


def test_the_args_are_frozen_values():
    """Args are values a caller can share between components (STYLE.md: frozen dataclasses)."""
    assert C.ModelCacheArgs.__dataclass_params__.frozen and P.ImagePrePullArgs.__dataclass_params__.frozen


def test_the_claim_exactly():
    assert C.claim(_args(size="500Gi")) == {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "llama", "namespace": "default", "labels": {C.MODEL_CACHE_LABEL: "true"},
                     "annotations": {C.SOURCE_ANNOTATION: "s3://models/llama", labels.PULUMI_SKIP_AWAIT_ANNOTATION: "true"}},
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "gpufleet-rwx",
                 "resources": {"requests": {"storage": "500Gi"}}},
    }


def test_the_prepull_daemonset_exactly():
    args = P.ImagePrePullArgs("l4", ("vllm/vllm-openai:v1", "nvcr.io/nvidia/cuda:12"),
                              taints=[{"key": "b", "value": "x", "effect": "NoSchedule"}, {"key": "a", "value": "", "effect": "NoExecute"},
                                      {"key": "b", "value": "y", "effect": "NoSchedule"}])
    ds = P.daemonset(args, MIRROR)
    match = {"app.kubernetes.io/name": P.APP, labels.POOL_LABEL: "l4"}
    assert ds["metadata"] == {"name": "prepull-l4", "namespace": "kube-system", "labels": match}
    pod = ds["spec"]["template"]["spec"]
    assert ds["spec"]["selector"] == {"matchLabels": match} and ds["spec"]["template"]["metadata"] == {"labels": match}
    assert pod["nodeSelector"] == {labels.POOL_LABEL: "l4"}
    assert pod["tolerations"] == [{"key": "a", "operator": "Exists", "effect": "NoExecute"},
                                  {"key": "b", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["automountServiceAccountToken"] is False
    security = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    busybox, first, second = pod["initContainers"]
    assert busybox["image"] == f"{MIRROR}/{versions.PREPULL_BUSYBOX_IMAGE}" and busybox["command"] == ["cp", "/bin/busybox", f"{P.BIN}/busybox"]
    assert [first["name"], first["image"], second["name"], second["image"]] == [
        "image-0", "vllm/vllm-openai:v1", "image-1", "nvcr.io/nvidia/cuda:12"]  # listed images pulled as listed
    assert all(c["securityContext"] == security for c in pod["initContainers"] + pod["containers"])
    assert first["command"] == [f"{P.BIN}/busybox", "true"] and first["imagePullPolicy"] == "IfNotPresent"
    (pause,) = pod["containers"]
    assert pause["image"] == f"{MIRROR}/{versions.PAUSE_IMAGE}"
    plain = P.daemonset(args)
    assert plain["spec"]["template"]["spec"]["containers"][0]["image"] == versions.PAUSE_IMAGE
    assert plain["spec"]["template"]["spec"]["initContainers"][0]["image"] == versions.PREPULL_BUSYBOX_IMAGE


def _children(build) -> dict:
    def program():
        provider = k8s.Provider("k8s", kubeconfig="apiVersion: v1\nkind: Config\n")
        ready = pulumi.CustomResource("test:index:Ready", "ready", {})
        access = ClusterAccess(name="c", platform="k3s", kubernetes_version="1.34", kubeconfig=pulumi.Output.from_input(""),
                               provider=provider, facts={MIRROR_FACT: MIRROR}, ready=[ready])
        build(access)

    return {r.name: r for r in run_under_mocks(program).registrations}


def test_the_components_children_wait_and_protect():
    got = _children(lambda access: (C.ModelCache("cache", _args(), access),
                                    P.ImagePrePull("pp", P.ImagePrePullArgs("l4", ("a/b:1",)), access)))
    assert got["cache-pvc"].protect is True
    assert got["cache-pvc"].parent.endswith("::cache") and got["cache-prefetch"].parent.endswith("::cache")
    assert got["cache-pvc"].urn in got["cache-prefetch"].dependencies
    assert got["cache-prefetch"].inputs["spec"]["template"]["spec"]["containers"][0]["image"].startswith(f"{MIRROR}/")
    assert got["ready"].urn in got["pp-ds"].dependencies
    assert got["pp-ds"].inputs["metadata"]["name"] == "prepull-l4"
    off = C.ModelCacheArgs(spec=_args().spec, storage_class="x", protection=ProtectionSpec(enabled=False, reason="CI"))
    assert _children(lambda access: C.ModelCache("cache", off, access))["cache-pvc"].protect is False
