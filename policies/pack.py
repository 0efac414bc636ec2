"""The pack: every rule, at its default enforcement level. `build()` serves it (as the CLI expects)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel

from gpufleet.policies.rules import (
    gpu_cuda_minor_version_compat,
    gpu_driver_cuda_alignment,
    gpu_observability,
    gpu_operator_driver_conflict,
    gpu_operator_version_support,
    gpu_pool_scale_to_zero,
    gpu_pool_taint,
    gpu_sharing_valid,
    rdma_placement,
    reservation_placement,
    secure_defaults,
    spot_pool_diversified,
    spot_pool_safety,
    stateful_resource_protection,
)

PACK_NAME = "gpufleet"
# What PolicyPack reports over gRPC (pulumi_policy always says 0.0.1; the CLI shows PulumiPolicy.yaml's
# version instead). The in-process servicer uses the same, so both runners' messages match.
PACK_VERSION = "0.0.1"
POLICIES = [
    gpu_pool_scale_to_zero.POLICY,
    gpu_driver_cuda_alignment.POLICY,
    gpu_operator_version_support.POLICY,
    gpu_operator_driver_conflict.POLICY,
    gpu_sharing_valid.POLICY,
    gpu_pool_taint.POLICY,
    spot_pool_safety.POLICY,
    spot_pool_diversified.POLICY,
    rdma_placement.POLICY,
    secure_defaults.POLICY,
    gpu_cuda_minor_version_compat.POLICY,  # advisory companion of gpu-driver-cuda-alignment (issue 12)
    stateful_resource_protection.POLICY,
    reservation_placement.POLICY,
    gpu_observability.POLICY,  # advisory (issue 16)
]


# Policy name -> (the pool's stack key a finding is fixed with, the value that fixes it), for the rules that have one
# (gpufleet diff writes `gpufleet:nodePools[<i>].<key>: <value>` beside the pool's exemption).
STACK_FIXES = {gpu_pool_scale_to_zero.NAME: gpu_pool_scale_to_zero.STACK_FIX}


def build() -> None:
    """Serve the pack as `PolicyPack(...)` would (the CLI reads the port from the first stdout line),
    with the servicer that converts each resource once (policies/servicer.py)."""
    from gpufleet.policies.servicer import serve

    serve(servicer())


def servicer():
    """The pack's analyzer servicer: served by build(), and used in process by `gpufleet plan`."""
    from gpufleet.policies.servicer import FastAnalyzerServicer

    return FastAnalyzerServicer(PACK_NAME, PACK_VERSION, POLICIES, EnforcementLevel.MANDATORY)


def upstream_servicer():
    """pulumi_policy's own servicer over the same rules (tests compare the two verdict by verdict)."""
    from pulumi_policy.policy import _PolicyAnalyzerServicer

    return _PolicyAnalyzerServicer(PACK_NAME, PACK_VERSION, POLICIES, EnforcementLevel.MANDATORY)
