"""Names the cloud APIs accept for what gpufleet names after the cluster and its pools (called from `_cross_checks`).

- A team's namespace is created by gpufleet: never one every cluster already has, nor a `kube-` one.
- GKE node pools are named after the pool: "The name must start with a lowercase letter followed by up to 39
  lowercase letters, numbers, or hyphens, and cannot end with a hyphen" (GKE API projects.locations.clusters.
  nodePools create, NodePool.name; gcloud container node-pools create NAME). A pool name may start with a digit
  as a Kubernetes label value, not as a GKE node pool.
- EKS managed node groups get Pulumi's auto-name `<cluster>-pool-<pool>-ng-<7 random characters>`; EKS takes node
  group names of at most 63 characters, letters, digits, '-' and '_' (EKS API CreateNodegroup, nodegroupName;
  EKS console "Node group name").
"""

from __future__ import annotations

import re
from typing import Any

from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
GKE_POOL_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$")
EKS_NODE_GROUP_NAME_MAX = 63
# Namespaces every cluster already has (creating one fails with AlreadyExists) and the prefix Kubernetes keeps for its
# own: "Avoid creating namespaces with the prefix kube-, since it is reserved for Kubernetes system namespaces"
# (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces/).
EXISTING_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
RESERVED_NAMESPACE_PREFIX = "kube-"
PULUMI_AUTONAME_SUFFIX = 8  # '-' and 7 random characters (pulumi-aws: AutoName("nodeGroupName", ..., "-"))


def eks_node_group_name_length(cluster: str, pool: str) -> int:
    """Length of the EKS node group name Pulumi generates for a pool (components/eks/platform.py names the
    component `<cluster>-pool-<pool>`, components/eks/node_group.py its node group `<component>-ng`)."""
    return len(f"{cluster}-pool-{pool}-ng") + PULUMI_AUTONAME_SUFFIX


def check(stack: str, spec: Any) -> list[Problem]:
    platform = spec.cluster.platform
    cluster = spec.cluster.name or stack
    problems: list[Problem] = []
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}].name"
        if platform == "gke" and not GKE_POOL_NAME.match(pool.name):
            problems.append(Problem(stack, at, "not a GKE node pool name: it must start with a lowercase letter (then lowercase "
                                    "letters, digits, '-'), at most 40 characters, e.g. l4-infer", pool.name))
        if platform == "eks":
            length = eks_node_group_name_length(cluster, pool.name)
            if length > EKS_NODE_GROUP_NAME_MAX:
                room = EKS_NODE_GROUP_NAME_MAX - eks_node_group_name_length(cluster, "")
                problems.append(Problem(stack, at, f"the EKS node group would be named {cluster}-pool-{pool.name}-ng-xxxxxxx "
                                        f"({length} characters; EKS takes at most {EKS_NODE_GROUP_NAME_MAX}): with cluster "
                                        f"name '{cluster}' a pool name has at most {room} characters", pool.name))
    for i, team in enumerate(spec.addons.kueue.teams if spec.addons.kueue.enabled else []):
        ns = team.namespace_name
        if ns in EXISTING_NAMESPACES or ns.startswith(RESERVED_NAMESPACE_PREFIX):
            key = "namespace" if team.namespace else "name"
            problems.append(Problem(stack, f"{NS}:addons.kueue.teams[{i}].{key}", f"gpufleet creates the team's namespace '{ns}', "
                                    f"but {'every cluster already has it' if ns in EXISTING_NAMESPACES else 'the kube- prefix is reserved for Kubernetes'}; "
                                    "give the team a namespace of its own, e.g. team-ml", ns))
    return problems
