"""gpu-pool-taint: GPU pools carry the nvidia.com/gpu NoSchedule taint, so CPU-only pods never take a
GPU node (and keep it from scaling down).

EKS node groups must declare it (taints [{key: nvidia.com/gpu, effect: NO_SCHEDULE}]): EKS adds no GPU
taint. GKE taints GPU nodes `nvidia.com/gpu=present:NoSchedule` itself when the cluster also has non-GPU
pools (GKE docs, "About GPUs: taints and tolerations"), so a GKE pool passes unless it declares the key
with a weaker effect. k3s hosts take taints from their
k3s config, which travels as a secret: not judged here (gpufleet always adds it, gpufleet/base/node_labels.py).

AMD pools (k3s, issue 17) carry the amd.com/gpu NoSchedule taint instead. What the pack sees of them is their
`amd.com/v1alpha1` DeviceConfig: every operand it turns on (device plugin, node labeller, metrics exporter, Device
Config Manager) must tolerate that taint, or it never runs on the pool and the pool advertises no amd.com/gpu.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.base import labels
from gpufleet.policies import amd_inputs as A
from gpufleet.policies import inputs as I

NAME = "gpu-pool-taint"


def check(pool: I.Pool) -> list[str]:
    taints = pool.taints()
    gpu = [t for t in taints if t[0] == labels.GPU_TAINT_KEY]
    if pool.kind.taints_gpu_nodes_itself and not gpu:
        return []  # the platform (GKE) taints GPU pools itself
    if any(effect in ("NoSchedule", "NoExecute") for _, _, effect in gpu):
        return []
    if gpu:
        return [f"taint {labels.GPU_TAINT_KEY} has effect {gpu[0][2]}; use NoSchedule (PreferNoSchedule still lets CPU pods in)"]
    if pool.kind.taints_fixed:
        return [f"no {labels.GPU_TAINT_KEY} taint, and {pool.kind.taints_fixed}: run the GPUs in a node pool of their own "
                "that carries it"]
    return [f"no {labels.GPU_TAINT_KEY} taint: add {{key: {labels.GPU_TAINT_KEY}, value: \"{labels.GPU_TAINT_VALUE}\", effect: NO_SCHEDULE}}"]


def check_device_config(props) -> list[str]:
    out = []
    for what, tolerations in A.operands(I.get(props, "spec")):
        if not A.tolerates(tolerations, labels.AMD_GPU_TAINT_KEY, labels.GPU_TAINT_EFFECT):
            out.append(f"the {what} does not tolerate the {labels.AMD_GPU_TAINT_KEY} NoSchedule taint AMD GPU pools carry, so it "
                       f"never runs there: add {{key: {labels.AMD_GPU_TAINT_KEY}, operator: Exists, effect: NoSchedule}} to its tolerations")
    return out


_pools = I.pool_validator(NAME, check)
_device_configs = I.resource_validator(NAME, lambda _type, props: check_device_config(props), types=(A.DEVICE_CONFIG,))


def _validate(args, report_violation) -> None:
    if args.resource_type == A.DEVICE_CONFIG:
        _device_configs(args, report_violation)
    else:
        _pools(args, report_violation)




POLICY = ResourceValidationPolicy(
    name=NAME,
    description="GPU pools carry the nvidia.com/gpu (AMD: amd.com/gpu) NoSchedule taint, and AMD operands tolerate it.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.Judging(_validate, lambda: I.pool_type_tokens() | {A.DEVICE_CONFIG}),
    config_schema=I.exemptions_schema(),
)
