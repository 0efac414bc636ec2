"""eks: policy traits (gpufleet/base/platforms/contract/policy.py says what each one means).

An EKS GPU pool is a managed node group (`aws:eks/nodeGroup:NodeGroup`) with GPU instance types or an NVIDIA AMI type.
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base import labels
from gpufleet.base.catalog import aws
from gpufleet.base.platforms.contract.policy import (
    GpuPoolType, GpuShape, Idle, Inputs, NodeKind, PolicyTraits, Taint, object_taints,
)

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"

# EKS AMI types whose image ships the NVIDIA driver and container toolkit.
NVIDIA_AMI_MARKERS = ("NVIDIA", "AL2_x86_64_GPU")
# EKS AMI types without a GPU driver: with the GPU Operator's driver off their GPUs are never usable
# (NVIDIA/gpu-operator#686: no driver containers for Amazon Linux, use the AMI's driver with driver.enabled=false).
DRIVERLESS_AMIS = ("AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "AL2_x86_64", "AL2_ARM_64", "BOTTLEROCKET_x86_64",
                   "BOTTLEROCKET_ARM_64")


def ec2_shape(instance_type: str) -> Optional[GpuShape]:
    """The shape of a GPU instance type the catalog knows (None for unknown and CPU types); facts from
    gpufleet/base/catalog/aws_instances.yaml."""
    t = aws.instance_types().get(instance_type)
    if t is None or not t.gpus:
        return None
    return GpuShape(instance_type, t.gpu, t.gpus, t.on_demand, efa_interfaces=t.efa_interfaces, spot_price_hour=t.spot)


class EksNodeGroup(GpuPoolType):
    """A managed node group. EKS adds no GPU taint and no spot taint; the autoscaler is a Helm release of the stack."""

    token = NODE_GROUP
    kind_name = "managed node group"
    spot_label = "eks.amazonaws.com/capacityType"
    spot_types_diversify = True  # AWS Spot best practices: "be flexible about instance types"
    autoscaler_hints = True  # kubernetes/autoscaler FAQ "scale a node group to 0", aws/containers-roadmap#724
    toolkit_preinstalled = "NVIDIA AMI ships it: set toolkit.enabled=false"

    def instance_types(self, inputs: Inputs) -> list[str]:
        return [t for t in inputs.items("instanceTypes") if isinstance(t, str)]

    def gpu_pool(self, inputs: Inputs) -> Optional[tuple[Optional[GpuShape], list[str]]]:
        """GPU instance types, or an NVIDIA AMI type (a custom type list may still be GPUs); the shape of the first
        type the catalog knows."""
        types = self.instance_types(inputs)
        if not any(aws.is_gpu_type(t) for t in types) and "NVIDIA" not in str(inputs.get("amiType", default="")):
            return None
        known = [shape for shape in map(ec2_shape, types) if shape]
        return (known[0] if known else None), types

    def labels(self, inputs: Inputs) -> dict:
        return inputs.mapping("labels")

    def taints(self, inputs: Inputs) -> list[Taint]:
        return object_taints(inputs, "taints")

    def spot(self, inputs: Inputs) -> bool:
        return inputs.get("capacityType") == "SPOT"

    def reserved(self, inputs: Inputs) -> bool:
        """A Capacity Block, or a node group gpufleet tagged with the reservation it consumes."""
        return inputs.get("capacityType") == "CAPACITY_BLOCK" or f"{labels.RESERVATION_TAG_PREFIX}type" in inputs.mapping("tags")

    def minimum(self, inputs: Inputs) -> Optional[float]:
        return inputs.number("scalingConfig", "minSize")

    def scale_to_zero_problems(self, inputs: Inputs, idle: Idle) -> list[str]:
        minimum = self.minimum(inputs)
        if minimum is not None and minimum > 0 and not self.reserved(inputs):
            return [f"minSize is {minimum:g}, not 0: {idle(minimum, 1)} while no GPU work runs"]
        return []

    def driver_preinstalled(self, inputs: Inputs) -> bool:
        """An NVIDIA AMI (AL2023_*_NVIDIA, BOTTLEROCKET_*_NVIDIA, AL2_x86_64_GPU): driver and toolkit in the image
        (NVIDIA/gpu-operator#528: validators crash-looping next to a preinstalled driver and runtime)."""
        return any(m in str(inputs.get("amiType", default="")) for m in NVIDIA_AMI_MARKERS)

    def driver_absent(self, inputs: Inputs) -> bool:
        """A standard AMI type and no launch template (a custom launch-template AMI may have one: not judged)."""
        return inputs.get("amiType") in DRIVERLESS_AMIS and not inputs.mapping("launchTemplate")

    def driver_version_unknown(self, inputs: Inputs) -> bool:
        """An NVIDIA AMI's driver version is not in the node group's inputs."""
        return self.driver_preinstalled(inputs)


class EksPolicy(PolicyTraits):
    pool_types = (EksNodeGroup(),)
    # Karpenter's NodePool custom resource (karpenter.sh/v1, components/eks/karpenter_pool.py): the rules read it by
    # its own shape (policies/inputs.py karpenter_node_pools), not as a pool type.
    other_node_kinds = (NodeKind("Karpenter NodePool", "kubernetes:karpenter.sh/v1:NodePool"),)
