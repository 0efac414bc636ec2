"""EksManagedPrometheus: Amazon Managed Service for Prometheus (AMP) as the stack's metrics backend
(gpufleet:observability.metrics.backend: amp).

- A workspace (aws.amp.Workspace), or the one the stack names (`ampWorkspaceArn`).
- An AWS managed collector (aws.amp.Scraper): agentless, it discovers targets through the cluster's API and scrapes
  from one network interface per given subnet, then remote-writes into the workspace without leaving AWS (AMP User
  Guide, "Ingest metrics with AWS managed collectors", AMP-collector.html). Its source is the cluster's ARN, the
  cluster's private subnets (at least two, in two zones) and the cluster security group, as the guide asks ("The
  security group and subnets should be set to the security group and subnets for the cluster"), which also lets it
  reach pods and nodes: every gpufleet node carries that group (EKS adds it to managed node groups whose launch
  template names no security group; EFA node groups and Karpenter node classes list it, components/eks/node_group.py
  and karpenter_pool.py), and EKS's cluster security group allows all traffic from itself. The scrape configuration is
  components/observability/amp_config.py.
- gpufleet's alert rules as a rule group namespace in the workspace (aws.amp.RuleGroupNamespace), and, with
  `alerts.snsTopicArn`, the workspace's alert manager definition sending them to that SNS topic
  (aws.amp.AlertManagerDefinition; components/observability/amp_config.py).

Cluster access: gpufleet's EKS clusters use authentication mode `API` with private endpoint access
(components/eks/cluster.py). For such a cluster AMP creates the scraper's access entry and its access policy itself
when the scraper is created through the AMP API (AMP User Guide, "Configuring your Amazon EKS cluster", "Configure
Amazon EKS for scraper access with access entries": docs.aws.amazon.com/prometheus/latest/userguide/
AMP-collector-how-to.html#AMP-collector-eks-setup). gpufleet therefore creates no aws.eks.AccessEntry for the
scraper's role: an IAM principal can be in only one access entry (EKS User Guide, "Create access entries"), so a
second one would collide with AMP's. The `aps-collector-role` ClusterRole and binding the same guide publishes belong
to its other path (aws-auth ConfigMap, "Manually configuring Amazon EKS for scraper access"), which gpufleet's
clusters do not use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_aws as aws

from gpufleet.base import labels as L
from gpufleet.components.observability.amp_config import ScrapeTargets, alert_manager_definition_yaml, rules_file_yaml, scrape_config_yaml
from gpufleet.components.observability.pools import PoolFacts
from gpufleet.base.spec.features.observability import ObservabilitySpec, amp_workspace_id

RULES_NAMESPACE = "gpufleet-gpu-alerts"
# A scraper tags its destination workspace with this key; setting it on the workspace ourselves keeps every
# `pulumi up` from removing it (pulumi-aws aws.amp.Scraper docs, "Ignoring changes to Prometheus Workspace
# destination": "you can add this tag to the destination workspace (preferred)").
SCRAPER_TAG = "AMPAgentlessScraper"


@dataclass(frozen=True)
class EksManagedPrometheusArgs:
    cluster_name: str
    """The GpuCluster's name: the workspace alias, the scraper alias and the `cluster` external label."""
    cluster_arn: pulumi.Input[str]
    """The EKS cluster's ARN (the scraper's source)."""
    subnet_ids: list[pulumi.Input[str]]
    """The cluster's private subnets (at least two, in two zones): the scraper's network interfaces."""
    security_group_ids: list[pulumi.Input[str]]
    """The cluster security group: the scraper's interfaces get it, so they may reach pods and nodes."""
    spec: ObservabilitySpec = ObservabilitySpec()
    """gpufleet:observability: scrape interval, an existing workspace, alert thresholds and on/off."""
    pools: list[PoolFacts] = field(default_factory=list)
    """The GPU pools (per-pool alert rules)."""
    targets: ScrapeTargets = ScrapeTargets()
    """Add-ons whose metrics are scraped (Kueue, KEDA); default: GPUs, node-exporter and kube-state-metrics only."""


class EksManagedPrometheus(pulumi.ComponentResource):
    """An AMP workspace, the AWS managed collector for the cluster, and gpufleet's alert rules in the workspace."""

    def __init__(self, name: str, args: EksManagedPrometheusArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:ManagedPrometheus", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        metrics = args.spec.metrics
        tags = {L.CLUSTER_TAG: args.cluster_name}
        self.workspace = None
        if metrics.amp_workspace_arn:
            workspace_arn: pulumi.Input[str] = metrics.amp_workspace_arn
            workspace_id: pulumi.Input[str] = amp_workspace_id(metrics.amp_workspace_arn)
        else:
            self.workspace = aws.amp.Workspace(
                f"{name}-workspace", alias=args.cluster_name, tags={**tags, SCRAPER_TAG: ""}, opts=child,
            )
            workspace_arn, workspace_id = self.workspace.arn, self.workspace.id
        self.scraper = aws.amp.Scraper(
            f"{name}-scraper",
            alias=args.cluster_name,
            source={"eks": {"cluster_arn": args.cluster_arn, "subnet_ids": list(args.subnet_ids),
                            "security_group_ids": list(args.security_group_ids)}},
            destination={"amp": {"workspace_arn": workspace_arn}},
            scrape_configuration=scrape_config_yaml(args.cluster_name, metrics.scrape_interval, args.targets),
            tags=tags,
            opts=child,
        )
        self.rules = None
        if args.spec.alerts.enabled:
            self.rules = aws.amp.RuleGroupNamespace(
                f"{name}-gpu-alerts", name=RULES_NAMESPACE, workspace_id=workspace_id,
                data=rules_file_yaml(args.pools, args.spec.alerts), tags=tags, opts=child,
            )
        self.alert_manager = None
        if args.spec.alerts.enabled and args.spec.alerts.sns_topic_arn:
            # One definition per workspace: with `ampWorkspaceArn`, a workspace that already has one refuses a
            # second (docs/observability.md says so).
            self.alert_manager = aws.amp.AlertManagerDefinition(
                f"{name}-alert-manager", workspace_id=workspace_id,
                definition=alert_manager_definition_yaml(args.spec.alerts.sns_topic_arn), opts=child,
            )
        self.workspace_arn = workspace_arn
        self.workspace_id = workspace_id
        self.register_outputs({"workspaceArn": workspace_arn, "scraperArn": self.scraper.arn,
                               "scraperRoleArn": self.scraper.role_arn})
