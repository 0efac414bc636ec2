"""The VPC endpoints an EKS stack with `cluster.eks.network.egress: endpoints` needs, so nodes without a NAT join the
cluster, pull images and call the AWS APIs gpufleet's add-ons call (issue 37).

Source: Amazon EKS User Guide, "Deploy private clusters with limited internet access" (awsdocs/amazon-eks-user-guide
latest/ug/clusters/private-clusters.adoc @101184ec, read 2026-12-04):
- Amazon ECR "for pulling container images": com.amazonaws.<region>.ecr.api, .ecr.dkr and .s3 (ECR keeps image layers
  in S3; gpufleet makes S3 a gateway endpoint, which has no hourly charge, on the private route tables);
- Amazon EC2 ".. If you use the EKS Optimized AMI, you should enable the `ec2` endpoint": the AMI sets the node's DNS
  name through the EC2 API (gpufleet's node groups run EKS-optimized AMIs);
- AWS STS "required when using IAM roles for service accounts": gpufleet's EBS CSI driver and cluster autoscaler use
  IRSA (components/eks/irsa.py);
- Cluster Autoscaler: "The worker node VPC must also include the AWS STS VPC endpoint and autoscaling VPC endpoint",
  and it runs with `--aws-use-static-instance-list=true` (components/eks/autoscaler.py);
- the cluster endpoint's private access: gpufleet always enables it (components/eks/cluster.py).
Amazon Managed Service for Prometheus (observability backend `amp`): com.amazonaws.<region>.aps-workspaces, as
terraform-aws-eks-blueprints' fully-private-cluster pattern lists it ("If using AWS Managed Prometheus Workspace";
aws-ia.github.io/terraform-aws-eks-blueprints/patterns/fully-private-cluster).

Amazon FSx (`storage.fsxLustre`): com.amazonaws.<region>.fsx. The FSx CSI driver's controller (a pod on the nodes)
creates and deletes file systems through the FSx API (kubernetes-sigs/aws-fsx-csi-driver: CreateFileSystem on
each dynamically provisioned claim), and "Amazon FSx ... interface VPC endpoint" is how a VPC without internet reaches
it (FSx for Lustre User Guide, "Accessing Amazon FSx using an interface endpoint (AWS PrivateLink)": service name
com.amazonaws.region.fsx). Before issue 49 an endpoints-mode stack with FSx planned without it and every claim stayed
Pending.

Not created, because no gpufleet component calls them from the nodes: CloudWatch Logs (`logs`; EKS writes the
control-plane logs itself, gpufleet ships no node logs), Elastic Load Balancing, X-Ray, SSM. Karpenter needs more
(SSM for AMI parameters, SQS for its interruption queue, EKS Auth for Pod Identity, and `settings.isolatedVPC`): the
spec refuses Karpenter with endpoints until those are wired (gpufleet/base/spec/features/registry_checks.py).
"""

from __future__ import annotations

from typing import Any

# Interface endpoints every endpoints-mode stack gets, in the order they are created.
BASE_INTERFACE = ("ec2", "ecr.api", "ecr.dkr", "sts")
GATEWAY = ("s3",)


def interface_services(spec: Any) -> list[str]:
    """Short service names (`ecr.api`) of the interface endpoints this stack needs; empty unless egress is endpoints."""
    eks = spec.cluster.eks  # set on an EKS stack only (spec/checks/platform_keys.py refuses it elsewhere)
    if eks is None or eks.network.egress != "endpoints":
        return []
    out = list(BASE_INTERFACE)
    if eks.autoscaler.kind == "cluster-autoscaler" and eks.autoscaler.enabled:
        out.append("autoscaling")
    if spec.observability.backend("eks") == "amp":
        out.append("aps-workspaces")
    if eks.storage.fsx_lustre is not None:
        out.append("fsx")
    return out


def service_name(region: str, service: str) -> str:
    """The endpoint service name AWS gives a regional service (`com.amazonaws.us-east-1.ecr.dkr`)."""
    return f"com.amazonaws.{region}.{service}"
