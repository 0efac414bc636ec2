"""AksPeermemReloader: loads nvidia-peermem on AKS InfiniBand pools whose NVIDIA driver is AKS's own
(`cluster.aks.gpuDriver: aks`), so GPUDirect RDMA works over the Network Operator's InfiniBand ports.

The AKS InfiniBand guide documents this path (Azure/aks-rdma-infiniband @bbaaf681, website/docs/configurations/
02-gpu-operator.md, "Option 1: AKS-managed GPU Driver": "The AKS-managed GPU driver installation does not load the
Nvidia peer memory kernel module automatically"): a DaemonSet, configs/nvidia-peermem-reloader/ds.yaml, whose startup
and liveness probes run `modprobe nvidia-peermem`, the probes the GPU Operator's own driver DaemonSet uses for the
module (the guide cites gpu-operator assets/state-driver/0500_daemonset.yaml). The liveness probe loads the module
again whenever it is gone, e.g. after the Network Operator's DOCA driver container replaced the InfiniBand stack it
depends on. Kept from the guide: the probes' timings, `system-node-critical`, `privileged`. Changed:
- the guide's container runs ubuntu:24.04 and `apt update && apt install -y kmod` at every start: packages fetched
  unpinned at run time (docs/security.md). Here the node's own modprobe runs through `chroot /host`, as NVIDIA's
  k8s-driver-manager does (internal/linuxutils/kmod.go at the pinned tag), in that image pinned by digest
  (versions.AKS_PEERMEM_RELOADER_IMAGE: why its busybox has chroot and sleep); the container only sleeps, the probes
  load the module, so no shell is needed;
- the host's root is mounted read-only at /host (modprobe reads /lib/modules and /etc/modprobe.d there) instead of
  /lib/modules into a foreign userland;
- it runs only on the InfiniBand pools' nodes (their gpufleet.io/pool label, tolerating exactly their taints), not on
  every node labelled kubernetes.azure.com/accelerator=nvidia, and it starts after the NicClusterPolicy is ready (the
  DOCA driver loaded), so the first load links against the InfiniBand stack that stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.catalog import images
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.image_mirror import MIRROR_FACT

NAME = "nvidia-peermem-reloader"
NAMESPACE = "kube-system"
MODULE = "nvidia-peermem"
# The node's modprobe, in the node's root (kmod.go: exec.Command("chroot", root, "modprobe", module)); `chroot` and
# `sleep` are the image's busybox applets on its PATH.
MODPROBE = ["chroot", "/host", "modprobe", MODULE]
HOST_ROOT = "/host"
# The guide's probe timings (ds.yaml @bbaaf681): up to 120 x 10 s for the first load (the driver and the InfiniBand
# stack may still be coming up on a new node), then a load every 30 s, a failure restarting the container.
STARTUP_PROBE = {"exec": {"command": MODPROBE}, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 10,
                 "failureThreshold": 120, "successThreshold": 1}
LIVENESS_PROBE = {"exec": {"command": MODPROBE}, "initialDelaySeconds": 30, "periodSeconds": 30, "timeoutSeconds": 10,
                  "failureThreshold": 1, "successThreshold": 1}
# A sleeping container and short modprobe runs: small, fixed (the guide sets none).
_RESOURCES = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}


@dataclass(frozen=True)
class AksPeermemReloaderArgs:
    pools: Sequence[str]
    """Names of the InfiniBand pools whose nodes get the DaemonSet (their gpufleet.io/pool label)."""
    tolerations: list[dict] = field(default_factory=list)
    """Tolerations matching those pools' taints exactly (gpufleet/base/node_labels.py node_tolerations); default: none."""
    namespace: str = NAMESPACE
    """Namespace of the DaemonSet; default kube-system, beside gpufleet's other node agents (pre-pull, EFA plugin)."""
    image: str = versions.AKS_PEERMEM_RELOADER_IMAGE
    """Image with `chroot` and `sleep`; default the pinned k8s-driver-manager, written by its recorded digest."""


def pinned_image(image: str, mirror: Optional[str] = None) -> str:
    """`image` by its recorded digest (catalog/images.yaml `digests`), from the stack's registry mirror if any. The
    container runs privileged on the host's root, so a re-pushed tag must not change what runs: an image without a
    recorded digest is refused here (tests keep the pinned one recorded)."""
    digest = images.digest(image)
    if digest is None:
        raise ValueError(f"{image} has no recorded digest (gpufleet/base/catalog/images.yaml digests)")
    ref = f"{image}@{digest}"
    return images.mirrored(ref, mirror) if mirror else ref


def daemonset(args: AksPeermemReloaderArgs, mirror: Optional[str] = None) -> dict:
    """The DaemonSet object (plain dict: what a reviewer sees and what tests validate against the OpenAPI)."""
    match = {"app.kubernetes.io/name": NAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": NAME, "namespace": args.namespace, "labels": dict(match)},
        "spec": {
            "selector": {"matchLabels": dict(match)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": dict(match)},
                "spec": {
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": L.POOL_LABEL, "operator": "In", "values": list(args.pools)}]}]}}},
                    "tolerations": [dict(t) for t in args.tolerations],
                    # As the guide: a node-critical add-on, kept (and rescheduled first) under node pressure.
                    "priorityClassName": "system-node-critical",
                    "automountServiceAccountToken": False,
                    "containers": [{
                        "name": NAME,
                        "image": pinned_image(args.image, mirror),
                        "command": ["sleep", "inf"],
                        "startupProbe": STARTUP_PROBE,
                        "livenessProbe": LIVENESS_PROBE,
                        "resources": _RESOURCES,
                        # Privileged as in the guide (ds.yaml @bbaaf681): loading a kernel module needs CAP_SYS_MODULE,
                        # which no container has by default. A narrower set (capabilities.add: [SYS_MODULE]) was not
                        # tried on an AKS node, so the guide's tested setting is kept. No host network, PID or IPC
                        # namespace, no service account token: modprobe needs none of them.
                        "securityContext": {"privileged": True},
                        "volumeMounts": [{"name": "host-root", "mountPath": HOST_ROOT, "readOnly": True}],
                    }],
                    "volumes": [{"name": "host-root", "hostPath": {"path": "/", "type": "Directory"}}],
                },
            },
        },
    }


class AksPeermemReloader(pulumi.ComponentResource):
    """`<name>-ds`: the nvidia-peermem reloader DaemonSet on the cluster's Kubernetes provider."""

    def __init__(self, name: str, args: AksPeermemReloaderArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None, depends_on: Sequence[pulumi.Resource] = ()):
        super().__init__("gpufleet:aks:PeermemReloader", name, None, opts)
        obj = daemonset(args, access.facts.get(MIRROR_FACT))
        self.daemonset = k8s.apps.v1.DaemonSet(
            f"{name}-ds",
            metadata=obj["metadata"],
            spec=obj["spec"],
            opts=pulumi.ResourceOptions(parent=self, provider=access.provider,
                                        depends_on=[*(access.ready or []), *depends_on] or None),
        )
        self.register_outputs({"pools": list(args.pools), "module": MODULE})
