"""ImagePrePull: a DaemonSet on one pool's nodes that pulls the pool's listed images ahead of its pods.

Each listed image is an init container that runs a static busybox copied in by the first init container
(`busybox true`), so the kubelet pulls the image whatever it holds (no shell needed inside it); a pause container then
keeps the pod, and with it the images, on the node (the kubelet's image garbage collection keeps images of running
pods). k3s: the GPU hosts are there from the start, so the images are on them before the first GPU pod; on a cloud pool
it runs beside the first pod of a new node, which is why the clouds' own paths come first (docs/cold-start.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.catalog import images
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.image_mirror import MIRROR_FACT

NAMESPACE = "kube-system"
APP = "gpufleet-prepull"
BIN = "/gpufleet-prepull"
# Small and fixed: the containers only start and wait (the pull itself is the kubelet's, not the pod's).
_RESOURCES = {"requests": {"cpu": "1m", "memory": "8Mi"}, "limits": {"memory": "32Mi"}}
_SECURITY = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


@dataclass(frozen=True)
class ImagePrePullArgs:
    pool: str
    """The pool's name: the DaemonSet runs on nodes labelled gpufleet.io/pool=<pool>."""
    images: tuple[str, ...]
    """Image references to pull, in order (validated whole-string by the spec: gpufleet/base/spec/ids.py IMAGE_REF)."""
    taints: list[dict] = field(default_factory=list)
    """The pool's taints ({key, value, effect}): the pods tolerate each, so they land on the GPU nodes."""
    namespace: str = NAMESPACE
    """Namespace of the DaemonSet; default kube-system."""


def daemonset(args: ImagePrePullArgs, mirror: Optional[str] = None) -> dict:
    """The DaemonSet object (plain dict: what a reviewer sees and what tests validate against the OpenAPI). With a
    registry `mirror` (gpufleet:registry.mirror), gpufleet's own busybox and pause images come from it; the pool's
    listed images are pulled as listed (the spec refuses a listed image outside the mirror)."""
    own = (lambda image: images.mirrored(image, mirror)) if mirror else (lambda image: image)
    match = {"app.kubernetes.io/name": APP, L.POOL_LABEL: args.pool}
    tolerations = [{"key": key, "operator": "Exists", "effect": effect}
                   for key, effect in sorted({(t["key"], t["effect"]) for t in args.taints})]
    mount = [{"name": "bin", "mountPath": BIN}]
    init = [{
        "name": "busybox",
        "image": own(versions.PREPULL_BUSYBOX_IMAGE),
        "command": ["cp", "/bin/busybox", f"{BIN}/busybox"],
        "volumeMounts": mount,
        "resources": _RESOURCES,
        "securityContext": _SECURITY,
    }] + [{
        "name": f"image-{i}",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": [f"{BIN}/busybox", "true"],
        "volumeMounts": mount,
        "resources": _RESOURCES,
        "securityContext": _SECURITY,
    } for i, image in enumerate(args.images)]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": f"prepull-{args.pool}", "namespace": args.namespace, "labels": dict(match)},
        "spec": {
            "selector": {"matchLabels": dict(match)},
            "template": {
                "metadata": {"labels": dict(match)},
                "spec": {
                    "nodeSelector": {L.POOL_LABEL: args.pool},
                    "tolerations": tolerations,
                    "automountServiceAccountToken": False,
                    "volumes": [{"name": "bin", "emptyDir": {}}],
                    "initContainers": init,
                    "containers": [{"name": "pause", "image": own(versions.PAUSE_IMAGE), "resources": _RESOURCES,
                                    "securityContext": _SECURITY}],
                },
            },
        },
    }


class ImagePrePull(pulumi.ComponentResource):
    """The pre-pull DaemonSet of one pool on the cluster's Kubernetes provider."""

    def __init__(self, name: str, args: ImagePrePullArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:coldstart:ImagePrePull", name, None, opts)
        obj = daemonset(args, access.facts.get(MIRROR_FACT))
        self.daemonset = k8s.apps.v1.DaemonSet(
            f"{name}-ds",
            metadata=obj["metadata"],
            spec=obj["spec"],
            opts=pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=access.ready or None),
        )
        self.register_outputs({"pool": args.pool, "images": list(args.images)})
