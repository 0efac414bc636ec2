"""Names Kubernetes accepts for what gpufleet names after the stack. (The names each cloud accepts for what gpufleet
names after the cluster and its pools are among the platform's checks, KeyTraits.checks: EKS node groups in
gpufleet/base/spec/platforms/eks_limits.py, GKE node pools in gke_limits.py, AKS node pools in aks_checks.py.)

- A team's namespace is created by gpufleet: never one every cluster already has, nor a `kube-` one.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
# Namespaces every cluster already has (creating one fails with AlreadyExists) and the prefix Kubernetes keeps for its
# own: "Avoid creating namespaces with the prefix kube-, since it is reserved for Kubernetes system namespaces"
# (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/).
EXISTING_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
RESERVED_NAMESPACE_PREFIX = "kube-"


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    problems: list[Problem] = []
    for i, team in enumerate(spec.addons.kueue.teams if spec.addons.kueue.enabled else []):
        ns = team.namespace_name
        if ns in EXISTING_NAMESPACES or ns.startswith(RESERVED_NAMESPACE_PREFIX):
            key = "namespace" if team.namespace else "name"
            problems.append(Problem(stack, f"{NS}:addons.kueue.teams[{i}].{key}", f"gpufleet creates the team's namespace '{ns}', "
                                    f"but {'every cluster already has it' if ns in EXISTING_NAMESPACES else 'the kube- prefix is reserved for Kubernetes'}; "
                                    "give the team a namespace of its own, e.g. team-ml", ns))
    return problems
