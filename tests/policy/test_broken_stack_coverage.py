"""The broken-stack corpus (tests/fixtures/broken_stacks, driven by test_broken_stacks.py) covers every
mandatory rule a gpufleet stack file can trigger, on each cloud platform where it can; the rules it cannot
trigger are listed here with the reason (the spec refuses the stack with exit 2 first, or gpufleet's
components always build the resource the rule wants). A new rule must land in one of the two places.

The EKS, GKE and AKS files start from stacks/Pulumi.prod-eks.yaml / prod-gke.yaml / aks-train.yaml; the few that need a second
line (a valid variant of the example, then one mistake) say so in their header, and the variants are planned
clean here so the mistake is the only thing the rule can be reacting to.
"""

from __future__ import annotations

import re

import pytest
from pulumi_policy import EnforcementLevel

from gpufleet.policies.pack import POLICIES
from tests.helpers import ROOT, example_config, plan_config

BROKEN = sorted((ROOT / "tests" / "fixtures" / "broken_stacks").glob("*.yaml"))
EXPECT = re.compile(r"^# expect: (\S+)$", re.M)
PLATFORM = re.compile(r"^    platform: (\S+)$", re.M)

# Mandatory rules no stack file can trigger, and why.
UNREACHABLE = {
    "gpu-operator-driver-conflict": (
        "the spec ties the driver to the platform: EKS refuses gpuOperator.driver.source operator (its AMIs ship "
        "driver and toolkit; the release always gets driver/toolkit.enabled=false), GKE runs the operator only "
        "with gpuStack: operator, which turns GKE's driver installation off; AKS refuses the operator's driver with "
        "cluster.aks.gpuDriver: aks and gpu_driver follows the choice (aks_checks.py)"
    ),
    "gpu-sharing-valid": (
        "the spec checks sharing before planning: replicas >= 2, MIG only on MIG GPUs with their profiles, no MPS "
        "with MIG (sharing_checks.py, gke.py), GKE maxSharedClientsPerGpu 2..48"
    ),
    "gpu-pool-taint": (
        "gpufleet always adds nvidia.com/gpu:NoSchedule to EKS node groups (a user taint on the same key does not "
        "replace it) and to AKS node pools, GKE taints GPU nodes itself, and k3s taints travel in the secret k3s config"
    ),
    "spot-pool-safety": (
        "gpufleet labels and taints spot pools itself (capacity-type spot, the gpufleet.io/spot taint) and the spec "
        "reserves those keys, so a stack cannot mislabel a spot pool; interruption handling is EKS's managed "
        "capacity rebalancing on managed node groups (the rule's ASG check applies to self-managed groups)"
    ),
    "rdma-placement": (
        "EFA interface count, the cluster placement group and the one-zone subnet come from the catalog and the "
        "spec (EFA instance types only, one zone); GKE GPUDirect networks are created per pool from the machine "
        "type's count; AKS InfiniBand pools are ND sizes in one zone (aks_checks.py)"
    ),
    "reservation-placement": (
        "the spec checks a reserved pool against its reservation before planning (zone, instance or machine type, "
        "capacity block size; DWS pools take no reservation; spot none) and gpufleet builds the launch template, node "
        "group, node pool or NodePool from it (gpufleet/base/spec/features/reservation.py, eks.py, gke.py)"
    ),
}


def _mandatory() -> set[str]:
    return {p.name for p in POLICIES if p.enforcement_level == EnforcementLevel.MANDATORY}


def _corpus() -> dict[str, set[str]]:
    """platform -> rules the corpus expects on it."""
    out: dict[str, set[str]] = {}
    for path in BROKEN:
        text = path.read_text()
        out.setdefault(PLATFORM.search(text).group(1), set()).add(EXPECT.search(text).group(1))
    return out


def test_corpus_covers_every_mandatory_rule_a_stack_file_can_trigger():
    covered = set().union(*_corpus().values())
    assert covered == _mandatory() - set(UNREACHABLE)
    assert set(UNREACHABLE) <= _mandatory()


def test_corpus_exercises_each_cloud():
    corpus = _corpus()
    assert corpus["eks"] == {"gpu-pool-scale-to-zero", "gpu-driver-cuda-alignment", "gpu-operator-version-support"}
    assert corpus["gke"] == {
        "gpu-pool-scale-to-zero", "gpu-driver-cuda-alignment", "gpu-operator-version-support", "secure-defaults",
        "stateful-resource-protection",
    }
    assert corpus["aks"] == {"gpu-pool-scale-to-zero", "gpu-operator-version-support", "stateful-resource-protection"}
    assert sum(1 for p in BROKEN if PLATFORM.search(p.read_text()).group(1) in ("eks", "gke")) >= 11


def _gke_operator() -> dict:
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    del c["gpufleet:nodePools"][0]["gke"]["gpuDriverVersion"]
    del c["gpufleet:nodePools"][1]["gke"]["gpuDriverVersion"]  # l4-infer runs LATEST (issue 49)
    del c["gpufleet:nodePools"][0]["rdma"]  # GPUDirect's gVNIC needs COS nodes; the operator stack runs Ubuntu
    return c


def _aks_136() -> dict:
    c = example_config("aks-train")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.36"
    return c


def _eks_135() -> dict:
    c = example_config("prod-eks")
    c["gpufleet:cluster"]["kubernetesVersion"] = "1.35"
    return c


@pytest.mark.parametrize("variant", [_gke_operator, _eks_135, _aks_136],
                         ids=["prod-gke-gpu-stack-operator", "prod-eks-kubernetes-1.35", "aks-train-kubernetes-1.36"])
def test_base_variants_plan_clean(variant):
    """The valid variants the two-line corpus files start from: no mandatory violation before the mistake."""
    result = plan_config(variant())
    assert [v.policy for v in result.violations if v.level == "mandatory"] == []
