"""gpufleet:gitops — who applies the in-cluster layer teams change every week (docs/gitops.md).

`engine: pulumi` (the default): `pulumi up` applies everything, as before. `engine: argocd`: `pulumi up` keeps the
cluster, its pools, the GPU stack, CRDs and the platform's charts, registers the cluster with Argo CD (its declarative
cluster Secret), and leaves the delegated layer (gpufleet/base/gitops.py says which objects) to Argo CD, which syncs
what `gpufleet export argocd STACK DIR` wrote into the repository named here. `engine: flux`: the same split, Flux
syncing what `gpufleet export flux STACK DIR` wrote (the same manifests).

Facts, with their sources:
- An Argo CD Application's source is `repoURL`, `path` and `targetRevision` (the CRD of Argo CD at versions.ARGO_CD,
  applications.argoproj.io, spec.source; ../shared/reference/crds/argo-cd/). Argo CD accepts https:// and ssh
  (`git@host:org/repo.git` or `ssh://`) repository URLs (Argo CD "Private Repositories", argo-cd.readthedocs.io/en/
  stable/user-guide/private-repositories/).
- Flux's GitRepository takes `url` and `ref.branch|tag|commit` (source.toolkit.fluxcd.io/v1, fluxcd.io/flux/components/
  source/gitrepositories/; without a ref it checks out `master`, so a Flux stack names its branch); its Kustomization
  applies a `path` of that source (kustomize.toolkit.fluxcd.io/v1, fluxcd.io/flux/components/kustomize/kustomizations/).
- Argo CD reads cluster Secrets, Applications and AppProjects only in its own namespace (`argocd` in its install
  manifests; Argo CD "Declarative Setup", argo-cd.readthedocs.io/en/stable/operator-manual/declarative-setup/).
"""

from typing import Literal, Optional

from pydantic import Field, field_validator

from gpufleet.base.spec.base import DNS_LABEL, Model

# A repository URL Argo CD clones: https://host[:port]/path, ssh://[user@]host[:port]/path or the scp form
# user@host:path. Printable, no spaces or quotes (it is written into YAML and shown in messages).
REPO_URL = (
    r"^(https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%+-]+)+/?"
    r"|ssh://([A-Za-z0-9._-]+@)?[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%+-]+)+/?"
    r"|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[A-Za-z0-9._~%+-]+(/[A-Za-z0-9._~%+-]+)*)$"
)
# A directory inside the repository: relative, `/`-separated names, none starting with a dot (so never `.` or `..`:
# Argo CD refuses a path that leaves the repository; gpufleet refuses it before writing).
REPO_PATH = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,62}(/[A-Za-z0-9_-][A-Za-z0-9._-]{0,62}){0,15}$"
# A git branch, tag or commit, narrowed to what needs no quoting: `/`-separated names not starting with a dot; `..` and
# a `.lock` ending are refused beside it (git check-ref-format's rules 1, 3 and 4, git-scm.com/docs/git-check-ref-format).
REVISION = r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$"


class ArgoCdSpec(Model):
    """Where Argo CD runs on this cluster and the project its Application belongs to."""

    namespace: str = Field(default="argocd", pattern=DNS_LABEL, max_length=63)
    """The namespace Argo CD runs in on this cluster: its cluster Secret, the Application and the AppProject go there.
    Default: argocd (Argo CD's install manifests)."""
    project: str = Field(default="gpufleet-teams", pattern=DNS_LABEL, max_length=63)
    """The AppProject the exported Application belongs to (it allows only the delegated kinds and namespaces).
    Default: gpufleet-teams."""


class FluxSpec(Model):
    """Where Flux runs on this cluster."""

    namespace: str = Field(default="flux-system", pattern=DNS_LABEL, max_length=63)
    """The namespace of Flux's controllers, where the exported GitRepository and Kustomization go. Default:
    flux-system (`flux bootstrap`'s)."""


class GitopsSpec(Model):
    """Who applies the in-cluster layer teams own, and where it reads it."""

    engine: Literal["pulumi", "argocd", "flux"] = "pulumi"
    """`pulumi`: `pulumi up` applies everything (default). `argocd` or `flux`: that engine applies the delegated layer
    (team namespaces, Kueue queues and quotas, priorities, serving models, dashboards and alerts) from `gpufleet export
    <engine>`; `pulumi up` applies the rest (and, for Argo CD, registers the cluster with it)."""
    repo_url: Optional[str] = Field(default=None, pattern=REPO_URL)
    """The git repository the export is committed to and the engine syncs (Argo CD `spec.source.repoURL`, Flux
    GitRepository `spec.url`); required with an engine other than pulumi."""
    path: str = Field(default="clusters", pattern=REPO_PATH)
    """The directory in that repository that holds one folder per cluster (`<path>/<cluster>/`). Default: clusters."""
    target_revision: str = Field(default="HEAD", pattern=REVISION, max_length=128)
    """The branch, tag or commit the engine syncs. Default: HEAD, the repository's default branch (Argo CD's default;
    Flux needs a branch named)."""

    @field_validator("target_revision")
    @classmethod
    def _git_ref(cls, value: str) -> str:
        if ".." in value or value.endswith(".lock"):
            raise ValueError("not a git branch, tag or commit: `..` and a `.lock` ending are refused by git "
                             "(git check-ref-format)")
        return value

    argocd: ArgoCdSpec = ArgoCdSpec()
    """Argo CD's namespace and project (used with `engine: argocd`)."""
    flux: FluxSpec = FluxSpec()
    """Flux's namespace (used with `engine: flux`)."""
