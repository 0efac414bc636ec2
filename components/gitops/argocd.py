"""ArgoCdCluster: the cluster registered with the Argo CD that runs on it, the GitOps-bridge way.

Argo CD's declarative cluster registration is a Secret in Argo CD's namespace labelled
`argocd.argoproj.io/secret-type: cluster` with `name`, `server` and `config` (Argo CD "Declarative Setup", Clusters,
argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/#clusters; for the cluster Argo CD runs on, server
`https://kubernetes.default.svc` and `config` `{"tlsClientConfig":{"insecure":false}}`, the same page). The
ApplicationSet cluster generator hands every label and annotation of that Secret to its templates as
`metadata.labels.<key>` / `metadata.annotations.<key>` (Argo CD "Cluster Generator", operator-manual/applicationset/
Generators-Cluster.md), which is how the GitOps bridge (gitops-bridge-dev/gitops-bridge) passes what infrastructure
code made to what Argo CD applies. Here: the stack's outputs and where the export of this cluster lives in git.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import gitops
from gpufleet.components.cluster_access import ClusterAccess

SECRET_TYPE_LABEL = "argocd.argoproj.io/secret-type"
IN_CLUSTER = "https://kubernetes.default.svc"
IN_CLUSTER_CONFIG = {"tlsClientConfig": {"insecure": False}}
PREFIX = "gpufleet.io/"


@dataclass(frozen=True)
class ArgoCdClusterArgs:
    cluster: str
    """The cluster's name in Argo CD (the stack's cluster name)."""
    namespace: str = "argocd"
    """Argo CD's namespace on this cluster. Default: argocd."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels beside the secret-type label (the stack's facts, for ApplicationSet selectors). Default: none."""
    annotations: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    """Annotations (the stack's outputs and its export's place in git, for generator templates). Default: none."""


def secret_name(cluster: str) -> str:
    return f"gpufleet-{cluster}"


def repo_path(spec: Any, cluster: str) -> str:
    """Where this cluster's export lives in the repository: `<gitops.path>/<cluster>`."""
    return f"{spec.gitops.path}/{cluster}"


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def cluster_args(cluster: str, spec: Any, outputs: Mapping[str, Any]) -> ArgoCdClusterArgs:
    """The registration of a stack's cluster: the facts every stack exports as labels, the platform's own outputs
    (KeyTraits.outputs: an EKS endpoint, node group names) and the export's place in git as annotations."""
    argo = spec.gitops.argocd
    # Label values must be label-shaped (at most 63 characters, alphanumeric at both ends): the cluster's name (a DNS
    # label), platform, version and engine are; a stack name may not be (Pulumi allows 100 characters and leading
    # dots), so it is an annotation.
    labels = {
        f"{PREFIX}cluster": cluster,
        f"{PREFIX}platform": spec.cluster.platform,
        f"{PREFIX}kubernetes-version": spec.cluster.kubernetes_version,
        f"{PREFIX}gitops-engine": gitops.engine(spec),
    }
    annotations: dict[str, pulumi.Input[str]] = {
        f"{PREFIX}stack": pulumi.get_stack(),
        f"{PREFIX}node-pools": _text([p.name for p in spec.node_pools]),
        f"{PREFIX}repo-url": spec.gitops.repo_url or "",
        f"{PREFIX}repo-path": repo_path(spec, cluster),
        f"{PREFIX}target-revision": spec.gitops.target_revision,
    }
    for key, value in sorted(outputs.items()):
        annotations[f"{PREFIX}output-{key}"] = pulumi.Output.from_input(value).apply(_text)
    return ArgoCdClusterArgs(cluster, argo.namespace, labels, annotations)


class ArgoCdCluster(pulumi.ComponentResource):
    """The cluster Secret Argo CD reads (`gpufleet-<cluster>` in Argo CD's namespace). Argo CD must run on the cluster
    (gpufleet does not install it: EKS's Argo CD capability or the platform team's own install)."""

    def __init__(self, name: str, args: ArgoCdClusterArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gitops:ArgoCdCluster", name, None, opts)
        self.secret = k8s.core.v1.Secret(
            f"{name}-secret",
            metadata={"name": secret_name(args.cluster), "namespace": args.namespace,
                      "labels": {SECRET_TYPE_LABEL: "cluster", **args.labels},
                      "annotations": dict(args.annotations)},
            type="Opaque",
            string_data={"name": args.cluster, "server": IN_CLUSTER,
                         "config": json.dumps(IN_CLUSTER_CONFIG, separators=(",", ":"))},
            opts=pulumi.ResourceOptions(parent=self, provider=access.provider),
        )
        self.register_outputs({"secret": secret_name(args.cluster), "server": IN_CLUSTER})
