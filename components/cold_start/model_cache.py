"""ModelCache: a shared model cache — a ReadWriteMany claim on the stack's file storage, filled once by a prefetch Job.

Workloads mount the claim read-only (`persistentVolumeClaim: {claimName: <name>, readOnly: true}`), so every replica
and every new node reads the model from the file system instead of downloading it (docs/cold-start.md).

The Job is idempotent: it writes a marker file holding the source it filled the cache from and exits at once when the
marker already names the same source; the copy itself is incremental (`aws s3 sync`, `gcloud storage rsync`,
huggingface_hub `snapshot_download` skip what is present). The source reaches the script only as the environment
variable SOURCE, always double-quoted there, and its shape is checked by the spec (ids.MODEL_SOURCE). Credentials come
only from a Secret the stack names (`envFrom.secretRef`), given to the prefetch container alone; gpufleet never reads
or stores them. For hf:// an init container without them installs huggingface_hub hash-locked
(versions.HUGGINGFACE_HUB_REQUIREMENTS): nothing unpinned runs beside the token. A stack whose nodes have no path to a
source's host is refused by the spec (AddonTraits.node_egress).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels, versions
from gpufleet.base.catalog import images
from gpufleet.base.spec.features.cold_start import ModelCacheSpec
from gpufleet.base.spec.features.protection import ProtectionSpec
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.image_mirror import MIRROR_FACT
from gpufleet.components.protection import exemption, protect

MOUNT = "/cache"
MARKER = ".gpufleet-prefetched"
MODEL_CACHE_LABEL = "gpufleet.io/model-cache"
SOURCE_ANNOTATION = "gpufleet.io/model-source"

_SKIP = f'm="$CACHE_DIR/{MARKER}"\nif [ -f "$m" ] && [ "$(cat "$m")" = "$SOURCE" ]; then echo "cache already holds $SOURCE"; exit 0; fi\n'
_DONE = 'printf "%s" "$SOURCE" > "$m"\necho "cache filled from $SOURCE"\n'
DEPS = "/deps"
# The hf:// init container: installs exactly versions.HUGGINGFACE_HUB_REQUIREMENTS (each wheel's sha256 checked, no
# dependency resolved, no source build) into an emptyDir the prefetch container imports from. It runs without the
# cache's credentials Secret: nothing pip or a package's install runs can read the token.
HF_INSTALL = (
    'set -eu\nprintf "%s" "$HF_REQUIREMENTS" > /tmp/requirements.txt\n'
    'pip install --quiet --no-cache-dir --disable-pip-version-check --require-hashes --no-deps --only-binary=:all: '
    f'--target {DEPS} -r /tmp/requirements.txt\n'
)
# One script per scheme; none interpolates anything but the quoted variables SOURCE and CACHE_DIR.
SCRIPTS = {
    "s3": 'aws s3 sync --only-show-errors "$SOURCE" "$CACHE_DIR"\n',
    "gs": 'gcloud storage rsync --recursive "$SOURCE" "$CACHE_DIR"\n',
    "hf": (
        "python -c 'import os; from huggingface_hub import snapshot_download; "
        'repo, _, rev = os.environ["SOURCE"][len("hf://"):].partition("@"); '
        'snapshot_download(repo_id=repo, revision=rev or None, local_dir=os.environ["CACHE_DIR"], '
        'token=os.environ.get("HF_TOKEN") or None)\'\n'
    ),
}


@dataclass(frozen=True)
class ModelCacheArgs:
    spec: ModelCacheSpec
    """The cache: claim name, namespace, source, size, credentials Secret (gpufleet/base/spec/features/cold_start.py)."""
    storage_class: str
    """The ReadWriteMany StorageClass of the claim (the spec's, else the stack's file storage class)."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the claim (its volume holds the downloaded model) as the stack protects state; default: on."""


def script(scheme: str) -> str:
    return "set -eu\n" + _SKIP + SCRIPTS[scheme] + _DONE


def claim(args: ModelCacheArgs) -> dict:
    c = args.spec
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": c.name, "namespace": c.namespace, "labels": {MODEL_CACHE_LABEL: "true"},
                     # The Job is the claim's first consumer: on a WaitForFirstConsumer class the claim binds only once
                     # the Job's pod exists, and FSx or Filestore take minutes to create the file system; the Job waits.
                     "annotations": {SOURCE_ANNOTATION: c.source, labels.PULUMI_SKIP_AWAIT_ANNOTATION: "true",
                                     **exemption(args.protection)}},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": args.storage_class,
            "resources": {"requests": {"storage": c.size}},
        },
    }


def job(args: ModelCacheArgs, mirror: Optional[str] = None) -> dict:
    """The prefetch Job; its image from the registry `mirror` when the stack has one (gpufleet:registry.mirror)."""
    c = args.spec
    image = versions.MODEL_PREFETCH_IMAGES[c.scheme]
    image = images.mirrored(image, mirror) if mirror else image
    env = [{"name": "SOURCE", "value": c.source}, {"name": "CACHE_DIR", "value": MOUNT}]
    mounts = [{"name": "cache", "mountPath": MOUNT}]
    volumes = [{"name": "cache", "persistentVolumeClaim": {"claimName": c.name}}]
    init: list[dict] = []
    if c.scheme == "hf":
        env.append({"name": "PYTHONPATH", "value": DEPS})
        mounts.append({"name": "deps", "mountPath": DEPS, "readOnly": True})
        volumes.append({"name": "deps", "emptyDir": {}})
        init.append({
            "name": "install", "image": image, "command": ["/bin/sh", "-c", HF_INSTALL],
            "env": [{"name": "HF_REQUIREMENTS", "value": versions.huggingface_hub_requirements()}],
            "volumeMounts": [{"name": "deps", "mountPath": DEPS}],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
            "securityContext": {"allowPrivilegeEscalation": False},
        })
    container: dict = {
        "name": "prefetch",
        "image": image,
        "command": ["/bin/sh", "-c", script(c.scheme)],
        "env": env,
        "volumeMounts": mounts,
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "4Gi"}},
        "securityContext": {"allowPrivilegeEscalation": False},
    }
    if c.credentials_secret:
        container["envFrom"] = [{"secretRef": {"name": c.credentials_secret}}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{c.name}-prefetch",
            "namespace": c.namespace,
            "labels": {MODEL_CACHE_LABEL: c.name},
            # A multi-gigabyte download outlasts the provider's wait for a Job; the Job reports on its own.
            "annotations": {labels.PULUMI_SKIP_AWAIT_ANNOTATION: "true"},
        },
        "spec": {
            "backoffLimit": 6,
            "template": {
                "metadata": {"labels": {MODEL_CACHE_LABEL: c.name}},
                "spec": {
                    "restartPolicy": "OnFailure",
                    **({"initContainers": init} if init else {}),
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


class ModelCache(pulumi.ComponentResource):
    """The cache's claim and its prefetch Job on the cluster's Kubernetes provider."""

    def __init__(self, name: str, args: ModelCacheArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:coldstart:ModelCache", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        pvc, j = claim(args), job(args, access.facts.get(MIRROR_FACT))
        self.claim = k8s.core.v1.PersistentVolumeClaim(
            f"{name}-pvc", metadata=pvc["metadata"], spec=pvc["spec"],
            opts=pulumi.ResourceOptions.merge(child, protect(args.protection)),
        )
        self.job = k8s.batch.v1.Job(
            f"{name}-prefetch", metadata=j["metadata"], spec=j["spec"],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.claim])),
        )
        self.register_outputs({"claim": args.spec.name, "namespace": args.spec.namespace, "source": args.spec.source})
