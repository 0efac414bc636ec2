"""Cold start on any cluster: the pre-pull DaemonSet of a pool's images and shared model caches (docs/cold-start.md).

The cloud paths (GKE image streaming and secondary boot disks, EKS Bottlerocket data-volume snapshots, parallel-pull
bounds) are node pool inputs, set by each platform's node pool component; what runs on the cluster is here.
"""

from gpufleet.components.cold_start.model_cache import ModelCache, ModelCacheArgs
from gpufleet.components.cold_start.prepull import ImagePrePull, ImagePrePullArgs

__all__ = ["ImagePrePull", "ImagePrePullArgs", "ModelCache", "ModelCacheArgs"]
