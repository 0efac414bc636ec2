"""gpu-pool-taint: GPU pools carry the nvidia.com/gpu NoSchedule taint, so CPU-only pods never take a
GPU node (and keep it from scaling down).

EKS node groups must declare it (taints [{key: nvidia.com/gpu, effect: NO_SCHEDULE}]): EKS adds no GPU
taint. GKE taints GPU nodes `nvidia.com/gpu=present:NoSchedule` itself when the cluster also has non-GPU
pools (GKE docs, "About GPUs: taints and tolerations"), so a GKE pool passes unless it declares the key
with a weaker effect. k3s hosts take taints from their
k3s config, which travels as a secret: not judged here (gpufleet always adds it, gpufleet/node_labels.py).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet import labels
from gpufleet.policies import inputs as I

NAME = "gpu-pool-taint"


def check(pool: I.Pool) -> list[str]:
    taints = I.taints_of(pool)
    gpu = [t for t in taints if t[0] == labels.GPU_TAINT_KEY]
    if pool.platform == "gke" and not gpu:
        return []  # GKE taints GPU pools itself
    if any(effect in ("NoSchedule", "NoExecute") for _, _, effect in gpu):
        return []
    if gpu:
        return [f"taint {labels.GPU_TAINT_KEY} has effect {gpu[0][2]}; use NoSchedule (PreferNoSchedule still lets CPU pods in)"]
    return [f"no {labels.GPU_TAINT_KEY} taint: add {{key: {labels.GPU_TAINT_KEY}, value: \"{labels.GPU_TAINT_VALUE}\", effect: NO_SCHEDULE}}"]


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="GPU pools carry the nvidia.com/gpu NoSchedule taint.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.pool_validator(NAME, check),
    config_schema=I.exemptions_schema(),
)
