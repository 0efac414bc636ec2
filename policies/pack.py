"""The pack: every rule, at its default enforcement level. `build()` serves it (as the CLI expects)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyPack

from policies.rules import eks_spot_instance_diversity, gpu_operator_version_support

PACK_NAME = "gpufleet"
POLICIES = [
    gpu_operator_version_support.POLICY,
    eks_spot_instance_diversity.POLICY,
]


def build() -> PolicyPack:
    """Construct the PolicyPack; pulumi_policy starts its gRPC Analyzer server right away."""
    return PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)


def servicer():
    """The analyzer servicer PolicyPack would serve, for in-process evaluation (gpufleet plan)."""
    from pulumi_policy.policy import _PolicyAnalyzerServicer

    return _PolicyAnalyzerServicer(PACK_NAME, "0.1.0", POLICIES, EnforcementLevel.MANDATORY)
