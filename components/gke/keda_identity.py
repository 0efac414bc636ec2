"""KedaWorkloadIdentity: the Google identity KEDA's operator queries Managed Service for Prometheus with
(gpufleet:observability.metrics.backend gke-managed, KEDA on).

KEDA's `gcp` pod identity takes the operator pod's Google credentials from GKE's metadata server (Workload Identity),
and its Prometheus scaler asks Managed Service for Prometheus's query API with them; the identity needs the
Monitoring Viewer role, `roles/monitoring.viewer` (keda.sh/docs/2.20/scalers/prometheus, "Google Managed Service for
Prometheus"). What gpufleet creates is the setup of KEDA's own page for that provider
(keda.sh/docs/2.20/authentication-providers/gcp-workload-identity), which is GKE's "link Kubernetes ServiceAccounts
to IAM" path (cloud.google.com/kubernetes-engine/docs/how-to/workload-identity):

- a Google service account `keda-<cluster>` (`gcp.serviceaccount.Account`);
- `roles/monitoring.viewer` for it on the project (`gcp.projects.IAMMember`, which adds one member and leaves the
  project's other bindings alone);
- `roles/iam.workloadIdentityUser` on it for the operator's Kubernetes ServiceAccount,
  `serviceAccount:<project>.svc.id.goog[keda/keda-operator]` (`gcp.serviceaccount.IAMMember`);
- KEDA's chart annotates `keda-operator` with the Google service account (`podIdentity.gcp`, in
  components/workloads/keda.py).

Why not the direct grant to the Kubernetes ServiceAccount's principal
(`principal://iam.googleapis.com/projects/<project number>/locations/global/workloadIdentityPools/<project>.svc.id.goog/subject/ns/keda/sa/keda-operator`):
it needs the project *number*, which the stack does not hold (only `gcp:project`, the id); reading it takes a
Resource Manager call at deploy time that the offline plan could only fake, so the plan would show a member that
is not the real one. The Google service account path needs nothing beyond the project id, so the plan shows every
member exactly as `pulumi up` sets it, and it is the path KEDA 2.20 documents for its `gcp` provider.

Service accounts and IAM bindings are free: nothing here is billed by the hour.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_gcp as gcp

MONITORING_VIEWER = "roles/monitoring.viewer"
WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
# gcp.serviceaccount.Account `account_id`: 6-30 characters, lowercase letters, digits and '-', starting with a
# letter and not ending with '-' (pulumi-gcp 10.2.0 Account docstring: RFC1035).
ACCOUNT_ID_MAX = 30


def account_id(cluster: str) -> str:
    """`keda-<cluster>`; a cluster name too long for that keeps its first characters and a short hash of the whole
    name, so two clusters of one project never share an account. GKE cluster names start with a letter and hold
    only lowercase letters, digits and '-' (gpufleet/base/spec/platforms/gke.py), so the result is a valid account id."""
    base = f"keda-{cluster}".rstrip("-")
    if len(base) <= ACCOUNT_ID_MAX:
        return base
    digest = hashlib.sha256(cluster.encode()).hexdigest()[:6]
    return f"{base[:ACCOUNT_ID_MAX - len(digest) - 1].rstrip('-')}-{digest}"


def workload_identity_member(project: str, namespace: str, service_account: str) -> str:
    """A Kubernetes ServiceAccount as a member of an IAM policy on a Google service account (KEDA's GCP Workload
    Identity page; the cluster's workload pool is `<project>.svc.id.goog`, components/gke/cluster.py)."""
    return f"serviceAccount:{project}.svc.id.goog[{namespace}/{service_account}]"


@dataclass(frozen=True)
class KedaWorkloadIdentityArgs:
    cluster: str
    """The GKE cluster's name (the Google service account is named after it)."""
    project: str
    """The cluster's project: its workload pool, Managed Service for Prometheus's data, the account's home."""
    namespace: str
    """KEDA's namespace (`keda`)."""
    service_account: str
    """KEDA's operator's Kubernetes ServiceAccount (`keda-operator`, the chart's default name)."""


class KedaWorkloadIdentity(pulumi.ComponentResource):
    """A Google service account with Monitoring Viewer that KEDA's operator acts as through Workload Identity."""

    def __init__(self, name: str, args: KedaWorkloadIdentityArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:gke:KedaWorkloadIdentity", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.account = gcp.serviceaccount.Account(
            f"{name}-account",
            account_id=account_id(args.cluster),
            project=args.project,
            display_name=f"KEDA operator of GKE cluster {args.cluster}",
            description="Queries Managed Service for Prometheus for KEDA's prometheus triggers (gpufleet).",
            opts=child,
        )
        self.email = self.account.email
        self.monitoring_viewer = gcp.projects.IAMMember(
            f"{name}-monitoring-viewer",
            project=args.project,
            role=MONITORING_VIEWER,
            member=self.account.email.apply(lambda email: f"serviceAccount:{email}"),
            opts=child,
        )
        self.workload_identity_user = gcp.serviceaccount.IAMMember(
            f"{name}-workload-identity-user",
            service_account_id=self.account.name,
            role=WORKLOAD_IDENTITY_USER,
            member=workload_identity_member(args.project, args.namespace, args.service_account),
            opts=child,
        )
        self.register_outputs({"serviceAccountEmail": self.account.email})
