"""The upstream Kubeflow trainer ClusterTrainingRuntimes, as gpufleet resources.

TrainJobs reference a runtime by name (`spec.runtimeRef.name: torch-distributed`); the trainer chart installs
none unless `runtimes.defaultEnabled`, and then through a post-install Helm hook Job that downloads kubectl at
run time (charts/kubeflow-trainer/templates/runtimes/installer-job.yaml), which fails on clusters without
internet access. gpufleet creates them itself, after the release (whose templates/crd/ installs the CRD).

Source: kubeflow/trainer at the pinned tag (versions.KUBEFLOW_TRAINER.app_version; commit 658725bdae5c), manifests/base/runtimes/{torch,deepspeed,mlx,jax,
xgboost}_distributed.yaml, with manifests/overlays/runtimes/kustomization.yaml applied (the project's images
pinned to the release tag, label `trainer.kubeflow.org/webhook-validation: disabled`). The torchtune LLM
runtimes (they need model and dataset initializers and a PVC) and the data-cache runtime are left out.
tests/upstream/test_trainer_runtimes.py compares these objects with the upstream files and validates them
against the trainer CRD.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.catalog import images

API_VERSION = "trainer.kubeflow.org/v1alpha1"
KIND = "ClusterTrainingRuntime"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
# The overlay's label: the built-in runtimes are validated ahead of time, so the trainer's webhook skips them
# (it may not be serving yet right after the release is installed).
WEBHOOK_VALIDATION_LABEL = "trainer.kubeflow.org/webhook-validation"
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
MPI_SSH_PORT = 2222
MPI_USER = 1000

# runtime name -> (framework label, images key)
RUNTIMES = {
    "torch-distributed": "torch",
    "deepspeed-distributed": "deepspeed",
    "mlx-distributed": "mlx",
    "jax-distributed": "jax",
    "xgboost-distributed": "xgboost",
}


def _node_job(image: str, metadata: Optional[dict] = None) -> dict:
    job = {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node", "image": image}]}}}}}
    if metadata:
        job["template"]["metadata"] = metadata
    return job


def _trainer_step() -> dict:
    return {"labels": {ANCESTOR_LABEL: "trainer"}}


def _mpi_spec(image: str) -> dict:
    """deepspeed/mlx: an OpenMPI launcher plus sshd nodes (upstream deepspeed_distributed.yaml, mlx_distributed.yaml)."""
    pod_security = {"fsGroup": MPI_USER}
    node = {
        "name": "node",
        "template": {"spec": {"template": {"spec": {
            "securityContext": pod_security,
            "containers": [{
                "name": "node",
                "image": image,
                "securityContext": {"runAsUser": MPI_USER},
                "command": ["/usr/sbin/sshd"],
                "args": ["-De", "-f", "/home/mpiuser/.sshd_config"],
                "readinessProbe": {"tcpSocket": {"port": MPI_SSH_PORT}, "initialDelaySeconds": 5},
            }],
        }}}},
    }
    launcher = {
        "name": "launcher",
        "dependsOn": [{"name": "node", "status": "Ready"}],
        "template": {
            "metadata": _trainer_step(),
            "spec": {"template": {"spec": {
                "securityContext": pod_security,
                "containers": [{"name": "node", "image": image, "securityContext": {"runAsUser": MPI_USER}}],
            }}},
        },
    }
    return {
        "mlPolicy": {"numNodes": 1, "mpi": {
            "numProcPerNode": 1, "mpiImplementation": "OpenMPI", "sshAuthMountPath": "/home/mpiuser/.ssh",
            "runLauncherAsNode": True,
        }},
        "template": {"spec": {
            "network": {"publishNotReadyAddresses": True},
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["launcher"]},
            "replicatedJobs": [node, launcher],
        }},
    }


def _protected(spec: dict) -> dict:
    """`spec` with every replicated job's pod template annotated so no autoscaler takes its node while it runs
    (labels.TRAINING_POD_ANNOTATIONS: Karpenter's do-not-disrupt, the Cluster Autoscaler's safe-to-evict)."""
    for job in spec.get("template", {}).get("spec", {}).get("replicatedJobs", []):
        pod = job["template"]["spec"]["template"]
        meta = pod.setdefault("metadata", {})
        meta["annotations"] = {**meta.get("annotations", {}), **L.TRAINING_POD_ANNOTATIONS}
    return spec


def runtime(name: str, mirror: Optional[str] = None, protect_pods: bool = False) -> dict:
    """One ClusterTrainingRuntime object, as upstream ships it (with the runtimes overlay applied); its image pulled
    from `mirror` when the stack has one (gpufleet:registry.mirror: `<mirror>/<source registry>/<path>:<tag>`).
    `protect_pods`: its pods carry labels.TRAINING_POD_ANNOTATIONS, so neither Karpenter nor the Cluster Autoscaler
    removes a node while a training job runs on it (docs/upgrades.md); default off, upstream's objects."""
    framework = RUNTIMES[name]
    image = versions.TRAINER_RUNTIME_IMAGES[framework]
    if mirror:
        image = images.mirrored(image, mirror)
    if framework in ("deepspeed", "mlx"):
        spec = _mpi_spec(image)
    else:
        spec = {
            "mlPolicy": {"numNodes": 1, framework: {}},
            "template": {"spec": {"replicatedJobs": [_node_job(image, _trainer_step())]}},
        }
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": name, "labels": {FRAMEWORK_LABEL: framework, WEBHOOK_VALIDATION_LABEL: "disabled"}},
        "spec": _protected(spec) if protect_pods else spec,
    }


def runtimes(mirror: Optional[str] = None, protect_pods: bool = False) -> list[dict]:
    return [runtime(name, mirror, protect_pods) for name in RUNTIMES]
