"""`gpufleet export flux STACK DIR`: the same manifests as Argo CD's export, synced by Flux.

    DIR/<gitops.path>/<cluster>/manifests/...              the delegated layer (gpufleet/app/gitops/argocd.py)
    DIR/<gitops.path>/<cluster>/flux/gitrepository.yaml    the repository (source.toolkit.fluxcd.io/v1 GitRepository)
    DIR/<gitops.path>/<cluster>/flux/kustomization.yaml    applies manifests/ (kustomize.toolkit.fluxcd.io/v1)

The same export serves Flux: a Kustomization over a directory without a kustomization.yaml applies every manifest in
it (Flux "Kustomization", fluxcd.io/flux/components/kustomize/kustomizations/, `.spec.path`: "If the path does not
contain a kustomization.yaml file, the controller generates one"), with server-side apply, cluster-wide kinds such as
Namespaces first (same page, "Reconciliation"); a LocalQueue applied before its ClusterQueue waits, inactive, until it
exists (Kueue), and Flux retries what failed at its next interval. Flux ignores Argo CD's sync-wave annotations.
`prune: true` and `wait: true` give what Pulumi and the Argo CD export do: an object removed from the stack is deleted,
and the Kustomization is Ready only when its objects are. Flux's CRDs are not in ../shared/reference, so these two
objects are not validated against a CRD (the Argo CD ones are).
"""

from __future__ import annotations

import re

from gpufleet.app.gitops.argocd import MANIFESTS, app_name, cluster_name
from gpufleet.base.spec import StackSpec

FLUX = "flux"
COMMIT = re.compile(r"^[0-9a-f]{40}$")


def ref(revision: str) -> dict[str, str]:
    """GitRepository `spec.ref`: a full commit SHA as `commit`, a `v<semver>`-looking tag as `tag`, else a branch."""
    if COMMIT.match(revision):
        return {"commit": revision}
    if re.match(r"^v[0-9]+(\.[0-9]+)*$", revision):
        return {"tag": revision}
    return {"branch": revision}


def objects(spec: StackSpec, stack: str) -> dict[str, dict]:
    cluster = cluster_name(spec, stack)
    name, ns = app_name(cluster), spec.gitops.flux.namespace
    return {
        "gitrepository.yaml": {
            "apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"url": spec.gitops.repo_url, "ref": ref(spec.gitops.target_revision), "interval": "1m"},
        },
        "kustomization.yaml": {
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"sourceRef": {"kind": "GitRepository", "name": name},
                     "path": f"./{spec.gitops.path}/{cluster}/{MANIFESTS}", "interval": "10m", "prune": True,
                     "wait": True, "timeout": "5m"},
        },
    }
