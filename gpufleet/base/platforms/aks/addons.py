"""aks: addons traits (gpufleet/base/platforms/contract/addons.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base.platforms.contract.addons import AddonTraits, ChartImages

# Words AKS stacks got before the platforms' traits (issue 47), when AKS fell into another platform's branch: kept
# so that its plans and refusals stay byte-identical; each names k3s or EKS where AKS is meant.
K3S_WORDS_PRE_PULL = "k3s: list the images and they are pre-pulled"
K3S_WORDS_NO_CACHE = "no image streaming or disk image cache on k3s"
EKS_WORDS_NO_DEVICE_PLUGIN = ("EKS AL2023 NVIDIA AMIs ship no device plugin (Bottlerocket NVIDIA AMIs do: ami "
                              "bottlerocket-nvidia)")


class AksAddons(AddonTraits):
    cold_start_instead = K3S_WORDS_PRE_PULL

    def cold_start_paths(self, spec: Any, pool: Any) -> list[str]:
        return [K3S_WORDS_NO_CACHE]

    def rwx_storage_class(self, spec: Any) -> Optional[str]:
        """gpufleet-rwx, the Azure Files NFS class (file.csi.azure.com, ReadWriteMany: components/aks/storage.py), when
        the stack turns it on (cluster.aks.storage.files); else the NFS class of gpufleet:storage.nfs, if any. Before
        issue 49 a model cache on AKS had no default even with files on, and the refusal said the stack had none."""
        if spec.cluster.aks.storage.files:
            return "gpufleet-rwx"
        return super().rwx_storage_class(spec)

    rwx_storage_hint = "set cluster.aks.storage.files: true (gpufleet-rwx, Azure Files NFS)"

    def own_charts_with_images(self, spec: Any) -> list[ChartImages]:
        if not any(p.rdma for p in spec.node_pools):
            return []
        # InfiniBand: the DOCA driver and the RDMA shared device plugin, no secondary network (components/aks/platform.py).
        return [(versions.NETWORK_OPERATOR.name, versions.NETWORK_OPERATOR.version, {"rdma-infiniband"}, {})]

    # The GPU Operator's DCGM exporter scraped by kube-prometheus-stack in the cluster. Azure Managed Prometheus is not
    # wired (docs/aks.md).
    metrics_backends = ("kube-prometheus-stack", "none")

    def missing_device_plugin(self, pool: Any) -> Optional[str]:
        return EKS_WORDS_NO_DEVICE_PLUGIN
