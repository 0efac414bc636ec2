"""KEDA: Deployments (inference servers) scale on metrics such as DCGM GPU utilization (examples/).

On a managed Prometheus the query API wants the cloud's credentials, not an in-cluster URL. KEDA's prometheus scaler
takes them from a pod identity (keda.sh/docs/2.20/scalers/prometheus, "Amazon Managed Service for Prometheus" and
"Google Managed Service for Prometheus", with KEDA 2.20's examples): gpufleet then gives KEDA's operator that identity
through the chart's `podIdentity` values (the cloud side, an IAM role or a Google service account, is made by the
platform: components/eks/amp_query_access.py, components/gke/keda_identity.py) and creates one
ClusterTriggerAuthentication with the matching `podIdentity.provider`, which ScaledObjects' prometheus triggers name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.base import labels as L
from gpufleet.base import versions

NAMESPACE = "keda"
# The operator's ServiceAccount: the chart's `serviceAccount.operator.name` default (kedacore/charts at the pinned
# tag, versions.KEDA: keda/values.yaml). It is the one that queries Prometheus, so the cloud identity is bound to it.
OPERATOR_SERVICE_ACCOUNT = "keda-operator"


@dataclass(frozen=True)
class KedaPodIdentity:
    """The cloud identity KEDA's operator queries a managed Prometheus with."""

    provider: Literal["aws", "gcp"]
    """The ClusterTriggerAuthentication's `podIdentity.provider`: `aws` (IRSA, keda.sh/docs/2.20/authentication-
    providers/aws) or `gcp` (GKE Workload Identity, keda.sh/docs/2.20/authentication-providers/gcp-workload-identity)."""
    aws_role_arn: Optional[pulumi.Input[str]] = None
    """aws: the IAM role the operator's ServiceAccount is annotated with (chart values `podIdentity.aws.irsa`)."""
    gcp_service_account: Optional[pulumi.Input[str]] = None
    """gcp: the Google service account's email the operator's ServiceAccount is annotated with (chart values
    `podIdentity.gcp.gcpIAMServiceAccount`)."""
    aws_region: Optional[str] = None
    """aws: the workspace's region, the `awsRegion` every prometheus trigger must carry to sign its queries."""


@dataclass(frozen=True)
class KedaArgs:
    namespace: str = NAMESPACE
    """Namespace KEDA's operator and metrics server run in."""
    prometheus_url: Optional[pulumi.Input[str]] = None
    """The stack's Prometheus query address: this component's `prometheusServerAddress` output, the `serverAddress`
    of ScaledObjects' `prometheus` triggers (examples/inference-keda-scaledobject.yaml). kube-prometheus-stack: its
    in-cluster Service (KEDA's operator and metrics server also get ServiceMonitors there). amp: the workspace's query
    endpoint; gke-managed: Managed Service for Prometheus's query API (both with `pod_identity`). Default: none
    (bring your own)."""
    service_monitors: bool = True
    """With `prometheus_url`: the chart's ServiceMonitors (prometheus-operator CRDs, kube-prometheus-stack). False on
    the managed backends, which have no ServiceMonitor CRD: the metrics ports are opened and their collector (a
    PodMonitoring on GKE, the AMP scraper's configuration on EKS) scrapes them instead."""
    expose_metrics: bool = False
    """Open the operator's and metrics server's Prometheus ports without ServiceMonitors and without a query address,
    for a collector outside the cluster. Default: off."""
    pod_identity: Optional[KedaPodIdentity] = None
    """The cloud identity for a managed Prometheus's query API: the chart's `podIdentity` values and a
    ClusterTriggerAuthentication `gpufleet-prometheus`. Default: none (the in-cluster Prometheus needs no credentials)."""


def keda_values(args: KedaArgs) -> dict:
    """KEDA chart values (keys from the chart's values.yaml at the pin: `prometheus.operator` and
    `prometheus.metricServer`, each with `enabled` and `serviceMonitor.enabled`; `podIdentity.aws.irsa.enabled` and
    `.roleArn`; `podIdentity.gcp.enabled` and `.gcpIAMServiceAccount`)."""
    values: dict = {}
    if args.prometheus_url:
        monitored = {"enabled": True, "serviceMonitor": {"enabled": args.service_monitors}}
        values["prometheus"] = {"operator": dict(monitored), "metricServer": dict(monitored)}
    elif args.expose_metrics:
        values["prometheus"] = {"operator": {"enabled": True}, "metricServer": {"enabled": True}}
    identity = args.pod_identity
    if identity is not None and identity.provider == "aws":
        # The chart annotates the operator's ServiceAccount with the role (eks.amazonaws.com/role-arn) and the
        # regional STS endpoint (its default, which KEDA's AWS page recommends).
        values["podIdentity"] = {"aws": {"irsa": {"enabled": True, "roleArn": identity.aws_role_arn}}}
    elif identity is not None and identity.provider == "gcp":
        # The chart annotates the operator's ServiceAccount with iam.gke.io/gcp-service-account.
        values["podIdentity"] = {"gcp": {"enabled": True, "gcpIAMServiceAccount": identity.gcp_service_account}}
    return values


def trigger_authentication(identity: KedaPodIdentity) -> dict:
    """The ClusterTriggerAuthentication every ScaledObject on this cluster can name: KEDA's operator's own identity
    (`identityOwner` left at its default, `keda`: keda.sh/docs/2.20/authentication-providers/aws)."""
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ClusterTriggerAuthentication",
        "metadata": {"name": L.KEDA_PROMETHEUS_AUTH},
        "spec": {"podIdentity": {"provider": identity.provider}},
    }


class Keda(pulumi.ComponentResource):
    """`gpufleet:addons:Keda`: the pinned KEDA chart, so Deployments scale on metrics such as DCGM GPU utilization; on
    a managed Prometheus, its pod identity and a TriggerAuthentication (`<name>-prometheus-auth`)."""

    def __init__(self, name: str, args: KedaArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:addons:Keda", name, None, opts)
        self.namespace, self.release = namespaced_release(name, versions.KEDA, args.namespace, keda_values(args), access, parent=self)
        self.namespace_name = args.namespace
        self.prometheus_server_address = args.prometheus_url
        self.trigger_authentication = None
        identity = args.pod_identity
        if identity is not None:
            obj = trigger_authentication(identity)
            # Its CRD comes with the chart (templates/crds/crd-clustertriggerauthentications.yaml): after the release.
            self.trigger_authentication = k8s.apiextensions.CustomResource(
                f"{name}-prometheus-auth",
                api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"],
                opts=pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=[self.release]),
            )
        self.register_outputs({
            "namespace": args.namespace, "chartVersion": versions.KEDA.version,
            "prometheusServerAddress": args.prometheus_url,
            "prometheusAuthentication": L.KEDA_PROMETHEUS_AUTH if identity is not None else None,
            "awsRegion": identity.aws_region if identity is not None else None,
        })
