"""Cross check for k3s pools: node labels the kubelet refuses to register with.

Called from k3s_checks.py (the checks of platform k3s). A k3s agent passes its `node-label`s to the kubelet,
which exits at start on a kubernetes.io / k8s.io key outside its allowed set (node-role.kubernetes.io/gpu,
say): the agent never joins and `pulumi up` fails only after the readiness wait (k3s-io/k3s#10916).
"""

from __future__ import annotations

from gpufleet.base.labels import kubelet_may_set
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"


def check(stack: str, spec) -> list[Problem]:
    problems = []
    for i, pool in enumerate(spec.node_pools):
        for key in sorted(pool.labels):
            if not kubelet_may_set(key):
                problems.append(Problem(
                    stack, f"{NS}:nodePools[{i}].labels",
                    "a node cannot label itself in the kubernetes.io / k8s.io namespaces except kubelet.kubernetes.io/*, "
                    "node.kubernetes.io/*, topology.kubernetes.io/region|zone, kubernetes.io/arch|os|hostname "
                    "(the kubelet refuses to start); use your own prefix, e.g. example.com/role",
                    key,
                ))
    return problems
