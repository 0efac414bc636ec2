"""`gpufleet export argocd STACK DIR`: the delegated layer as plain manifests, and the Argo CD objects that sync it.

    DIR/<gitops.path>/<cluster>/manifests/NN-<kind>-<namespace>-<name>.yaml   one object each, NN its wave
    DIR/<gitops.path>/<cluster>/argocd/appproject.yaml                      what the Application may touch
    DIR/<gitops.path>/<cluster>/argocd/application.yaml                     syncs manifests/ into the cluster

DIR is a checkout of the repository `gitops.repoURL` names. The manifests are the objects the `pulumi` path
applies (gpufleet/app/gitops/layer.py), each with its sync wave (`argocd.argoproj.io/sync-wave`, Argo CD "Sync
Phases and Waves", argo-cd.readthedocs.io/en/stable/user-guide/sync-waves/). The Argo CD objects are
`argoproj.io/v1alpha1` as the CRDs of Argo CD versions.ARGO_CD define them (../shared/reference/crds/argo-cd/).

Choices, each with its reason:
- One Application per cluster, destination the cluster Argo CD runs on (`https://kubernetes.default.svc`, the server
  of the cluster Secret components/gitops/argocd.py registers): the export is per stack, and so is the cluster.
- The AppProject allows exactly what the export holds: its repository, the kinds it writes (cluster-scoped and
  namespaced whitelists by API group) and the namespaces its objects live in. A team's pull request that adds a
  Deployment or a ClusterRole to manifests/ is refused by Argo CD, not applied.
- Automated sync with prune and self-heal: what Pulumi did (a team removed from the stack loses its namespace and
  queues; a hand edit in the cluster is put back). Server-side apply, as Pulumi's Kubernetes provider applies.
- The Application's destination namespace is the first of the export's namespaces (every exported namespaced object
  names its own, so it is never used for an object; Argo CD requires the Application's destination to be one the
  project permits).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from gpufleet.app.gitops.layer import DelegatedObject
from gpufleet.base import versions
from gpufleet.base.spec import StackSpec

IN_CLUSTER = "https://kubernetes.default.svc"  # components/gitops/argocd.py IN_CLUSTER (the cluster Secret's server)
MANIFESTS = "manifests"
ARGOCD = "argocd"


@dataclass(frozen=True)
class Export:
    cluster_dir: str
    """The cluster's folder inside the repository (`<path>/<cluster>`)."""
    manifests: dict[str, dict]
    """File name -> object (with its sync wave), under `<cluster_dir>/manifests/`."""
    argocd: dict[str, dict]
    """File name -> Argo CD object, under `<cluster_dir>/argocd/`."""


def cluster_name(spec: StackSpec, stack: str) -> str:
    """The cluster's name, as gpufleet/app/program.py names it."""
    return spec.cluster.name or stack


def group_kind(manifest: dict) -> dict[str, str]:
    api = manifest["apiVersion"]
    return {"group": api.rpartition("/")[0] if "/" in api else "", "kind": manifest["kind"]}


def app_name(cluster: str) -> str:
    return f"gpufleet-{cluster}"


def app_project(spec: StackSpec, objects: list[DelegatedObject]) -> dict:
    argo = spec.gitops.argocd
    cluster_scoped, namespaced, namespaces = [], [], set()
    for o in objects:
        gk = group_kind(o.manifest)
        ns = o.manifest.get("metadata", {}).get("namespace")
        if ns:
            namespaces.add(ns)
        target = namespaced if ns else cluster_scoped
        if gk not in target:
            target.append(gk)
    for o in objects:
        if o.manifest["kind"] == "Namespace":
            namespaces.add(o.manifest["metadata"]["name"])
    order = lambda gk: (gk["group"], gk["kind"])  # noqa: E731
    return {
        "apiVersion": versions.ARGO_CD_API_VERSION, "kind": "AppProject",
        "metadata": {"name": argo.project, "namespace": argo.namespace},
        "spec": {
            "description": "gpufleet's delegated layer (docs/gitops.md): only the kinds and namespaces it exports",
            "sourceRepos": [spec.gitops.repo_url],
            "destinations": [{"server": IN_CLUSTER, "namespace": ns} for ns in sorted(namespaces)],
            "clusterResourceWhitelist": sorted(cluster_scoped, key=order),
            "namespaceResourceWhitelist": sorted(namespaced, key=order),
        },
    }


def application(spec: StackSpec, cluster: str, project: dict) -> dict:
    argo = spec.gitops.argocd
    destinations = project["spec"]["destinations"]
    destination = {"server": IN_CLUSTER, **({"namespace": destinations[0]["namespace"]} if destinations else {})}
    return {
        "apiVersion": versions.ARGO_CD_API_VERSION, "kind": "Application",
        "metadata": {"name": app_name(cluster), "namespace": argo.namespace},
        "spec": {
            "project": argo.project,
            "source": {"repoURL": spec.gitops.repo_url, "path": f"{spec.gitops.path}/{cluster}/{MANIFESTS}",
                       "targetRevision": spec.gitops.target_revision, "directory": {"recurse": False}},
            "destination": destination,
            "syncPolicy": {"automated": {"prune": True, "selfHeal": True},
                           "syncOptions": ["ServerSideApply=true"]},
        },
    }


def export(spec: StackSpec, stack: str, objects: list[DelegatedObject]) -> Export:
    cluster = cluster_name(spec, stack)
    project = app_project(spec, objects)
    return Export(
        cluster_dir=f"{spec.gitops.path}/{cluster}",
        manifests={o.file_name(): o.with_wave() for o in objects},
        argocd={"appproject.yaml": project, "application.yaml": application(spec, cluster, project)},
    )


def dump(obj: dict) -> str:
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False, allow_unicode=False)


def write(result: Export, root: Path, extra: dict[str, dict[str, dict]] = {}) -> list[Path]:  # noqa: B006 - read only
    """Write the export under `root` (a checkout of the repository): each folder gpufleet writes holds only what this
    export holds (a file of an object no longer exported is removed, so Argo CD prunes it). Returns the files."""
    written = []
    folders = {MANIFESTS: result.manifests, ARGOCD: result.argocd, **extra}
    for folder, files in folders.items():
        where = root / result.cluster_dir / folder
        where.mkdir(parents=True, exist_ok=True)
        for stale in sorted(where.glob("*.yaml")):
            if stale.name not in files:
                stale.unlink()
        for name, obj in sorted(files.items()):
            path = where / name
            path.write_text(dump(obj), encoding="utf-8")
            written.append(path)
    return written
