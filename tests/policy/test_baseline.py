"""The valid fixtures pass every rule: each FAILED case elsewhere differs from them in one field."""

from gpufleet.policies.pack import POLICIES
from tests.policy.fixtures import findings


def test_valid_eks_stack_passes_every_rule(eks_stack):
    assert findings(list(eks_stack.values())) == set()


def test_valid_gke_stack_passes_every_rule(gke_stack):
    assert findings(list(gke_stack.values())) == set()


def test_pack_has_the_issue_rule_names():
    assert [p.name for p in POLICIES] == [
        "gpu-pool-scale-to-zero",
        "gpu-driver-cuda-alignment",
        "gpu-operator-version-support",
        "gpu-operator-driver-conflict",
        "gpu-sharing-valid",
        "gpu-pool-taint",
        "spot-pool-safety",
        "spot-pool-diversified",
        "rdma-placement",
        "secure-defaults",
        "gpu-cuda-minor-version-compat",
        "stateful-resource-protection",
        "reservation-placement",
        "gpu-observability",
    ]
    levels = {p.name: p.enforcement_level.value for p in POLICIES}
    assert {n for n, level in levels.items() if level != "mandatory"} == {"spot-pool-diversified", "gpu-cuda-minor-version-compat", "gpu-observability"}
