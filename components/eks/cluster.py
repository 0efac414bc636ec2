"""EksCluster: the EKS control plane at a pinned Kubernetes version, with KMS envelope encryption of
Secrets, API-mode access entries (no aws-auth ConfigMap), a private endpoint unless public CIDRs are
listed, control-plane logs with retention, the OIDC provider for IRSA, and the node IAM role."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import yaml

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.known import known
from gpufleet.components.protection import exemption, protect
from gpufleet.base import labels as L
from gpufleet.base.spec.platforms.eks import ACCESS_POLICIES, EksSpec
from gpufleet.base.spec.features.protection import ProtectionSpec

NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
    # The VPC CNI runs with the node role (the default EKS add-on); moving it to IRSA is a follow-up.
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
)


@dataclass(frozen=True)
class EksClusterArgs:
    spec: EksSpec
    """The stack's cluster.eks block (endpoint, encryption, logs, access entries)."""
    cluster_name: str
    """Name of the EKS cluster in AWS (the stack's cluster name); renaming replaces the cluster."""
    kubernetes_version: str
    """Pinned Kubernetes minor version (gpufleet.base.versions.EKS_KUBERNETES_VERSIONS)."""
    region: str
    """AWS region (from `aws:region`): the kubeconfig's `aws eks get-token --region`."""
    subnet_ids: list
    """Private subnets of the control plane's network interfaces (at least 2 zones)."""
    vpc_id: pulumi.Input[str]
    """VPC of the subnets (facts for security groups of add-ons)."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect the cluster and its secrets key (Pulumi `protect`, EKS deletion protection); default: on."""


def assume_role_policy(service: str) -> str:
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}],
    }, sort_keys=True)


def kubeconfig(cluster_name: str, endpoint: str, ca_data: str, region: str) -> str:
    """A kubeconfig that authenticates with `aws eks get-token` (no long-lived credentials in it)."""
    return yaml.safe_dump({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": {"server": endpoint, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "users": [{"name": cluster_name, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region, "--output", "json"],
            "interactiveMode": "Never",
        }}}],
    }, sort_keys=False)


class EksCluster(pulumi.ComponentResource):
    """`gpufleet:eks:EksCluster`: the EKS control plane (`<name>-cluster`) at a pinned Kubernetes version, with KMS
    envelope encryption of Secrets (`<name>-secrets-key`), access entries, control-plane logs (`<name>-logs`),
    the OIDC provider for IRSA (`<name>-oidc`), the node IAM role (`<name>-node-role`) and the Kubernetes
    provider (`<name>-k8s`). `access` is the ClusterAccess node groups and add-ons take; `kubeconfig` a secret
    Output."""

    access: ClusterAccess

    def __init__(self, name: str, args: EksClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:eks:EksCluster", name, None, opts)
        spec = args.spec
        child = pulumi.ResourceOptions(parent=self)
        tags = {L.CLUSTER_TAG: args.cluster_name}

        self.role = aws.iam.Role(f"{name}-role", assume_role_policy=assume_role_policy("eks.amazonaws.com"), tags=tags, opts=child)
        cluster_policy = aws.iam.RolePolicyAttachment(
            f"{name}-role-cluster-policy", role=self.role.name,
            policy_arn="arn:aws:iam::aws:policy/AmazonEKSClusterPolicy", opts=child,
        )

        if spec.kms_key_arn:
            key_arn: pulumi.Input[str] = spec.kms_key_arn
            self.kms_key = None
        else:
            # protect, not retain_on_delete: AWS already only schedules a deleted key's deletion (30-day window,
            # cancellable), so a retained key would just be an orphan; what must not happen is the key going while
            # the cluster's Secrets are encrypted with it (they become unreadable).
            self.kms_key = aws.kms.Key(
                f"{name}-secrets-key",
                description=f"EKS secrets envelope encryption for {args.cluster_name}",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                tags={**tags, **exemption(args.protection)},
                opts=protect(args.protection, parent=self),
            )
            aws.kms.Alias(f"{name}-secrets-key", name=f"alias/eks/{args.cluster_name}", target_key_id=self.kms_key.key_id, opts=child)
            key_arn = self.kms_key.arn

        # Created before the cluster so EKS writes into a group with our retention (EKS would create
        # one that never expires).
        self.log_group = aws.cloudwatch.LogGroup(
            f"{name}-logs", name=f"/aws/eks/{args.cluster_name}/cluster",
            retention_in_days=spec.log_retention_days, tags=tags, opts=child,
        )

        public = bool(spec.endpoint.public_access_cidrs)
        self.cluster = aws.eks.Cluster(
            f"{name}-cluster",
            name=args.cluster_name,
            version=args.kubernetes_version,
            role_arn=self.role.arn,
            vpc_config={
                "subnet_ids": args.subnet_ids,
                "endpoint_private_access": True,
                "endpoint_public_access": public,
                **({"public_access_cidrs": list(spec.endpoint.public_access_cidrs)} if public else {}),
            },
            access_config={
                "authentication_mode": "API",
                "bootstrap_cluster_creator_admin_permissions": spec.bootstrap_creator_admin,
            },
            encryption_config={"provider": {"key_arn": key_arn}, "resources": ["secrets"]},
            enabled_cluster_log_types=list(spec.log_types),
            # EKS deletion protection (CreateCluster/UpdateClusterConfig `deletionProtection`, EKS API reference)
            # refuses a delete from any client, not only Pulumi.
            deletion_protection=args.protection.enabled,
            tags={**tags, **exemption(args.protection)},
            # protect, not retain_on_delete: a retained cluster keeps billing unseen (a cost trap); a protected one
            # makes `pulumi destroy` or a replacing change stop and say so. Everything scheduled on it is its state.
            opts=protect(args.protection, parent=self, depends_on=[cluster_policy, self.log_group]),
        )

        self.access_entries = []
        self.access_policies = []
        for entry in spec.access_entries:
            role_name = entry.principal_arn.rsplit("/", 1)[-1]
            ae = aws.eks.AccessEntry(
                f"{name}-access-{role_name}", cluster_name=self.cluster.name,
                principal_arn=entry.principal_arn, type="STANDARD", opts=child,
            )
            association = aws.eks.AccessPolicyAssociation(
                f"{name}-access-{role_name}",
                cluster_name=self.cluster.name,
                principal_arn=entry.principal_arn,
                policy_arn=f"arn:aws:eks::aws:cluster-access-policy/{ACCESS_POLICIES[entry.policy]}",
                access_scope={"type": "cluster"},
                opts=pulumi.ResourceOptions(parent=self, depends_on=[ae]),
            )
            self.access_entries.append(ae)
            self.access_policies.append(association)

        issuer = self.cluster.identities.apply(known(lambda ids: ids[0].oidcs[0].issuer))
        self.oidc_provider = aws.iam.OpenIdConnectProvider(
            f"{name}-oidc", url=issuer, client_id_lists=["sts.amazonaws.com"], tags=tags, opts=child,
        )

        # One node role for every managed node group; EKS creates their access entries (EC2_LINUX).
        self.node_role = aws.iam.Role(f"{name}-node-role", assume_role_policy=assume_role_policy("ec2.amazonaws.com"), tags=tags, opts=child)
        self.node_role_policies = [
            aws.iam.RolePolicyAttachment(f"{name}-node-role-{arn.rsplit('/', 1)[-1]}", role=self.node_role.name, policy_arn=arn, opts=child)
            for arn in NODE_POLICIES
        ]

        ca = self.cluster.certificate_authority.apply(known(lambda c: c.data))
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.name, self.cluster.endpoint, ca).apply(
                known(lambda a: kubeconfig(a[0], a[1], a[2], args.region))
            )
        )
        # An access entry alone grants no Kubernetes permissions (EKS User Guide, "Associate access policies with
        # access entries"): when an entry is what lets `pulumi up` in, add-ons must wait for its policy too.
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*self.access_entries, *self.access_policies]),
        )
        security_group = self.cluster.vpc_config.cluster_security_group_id
        self.access = ClusterAccess(
            name=args.cluster_name,
            platform="eks",
            kubernetes_version=args.kubernetes_version,
            kubeconfig=self.kubeconfig,
            provider=self.provider,
            facts={
                "region": args.region,
                "cluster_name": self.cluster.name,
                "cluster_arn": self.cluster.arn,
                "cluster_security_group_id": security_group,
                "oidc_provider_arn": self.oidc_provider.arn,
                "oidc_issuer": issuer,
                "node_role_arn": self.node_role.arn,
                "vpc_id": args.vpc_id,
                # EKS GPU AMIs ship the NVIDIA driver and container toolkit (DESIGN.md section 7).
                "driver_preinstalled": True,
                "toolkit_preinstalled": True,
            },
            ready=[],
        )
        self.register_outputs({"endpoint": self.cluster.endpoint, "clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})
