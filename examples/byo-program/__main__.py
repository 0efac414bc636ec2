"""Your own Pulumi program, with gpufleet's components as parts: an EKS cluster with a GPU node group in a VPC
you already have, the NVIDIA GPU Operator and the cluster autoscaler on it, and your own S3 bucket for
checkpoints that the training pods may write through their own IAM role.

No gpufleet stack file: every part takes typed args (docs/components.md). Run it like any Pulumi program:
    python -m venv venv && venv/bin/pip install -r requirements.txt
    pulumi stack init dev && cp Pulumi.example.yaml Pulumi.dev.yaml   # then your VPC and subnets
    pulumi up
"""

import dataclasses
import json

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from gpufleet.base import labels as L
from gpufleet.base.catalog import aws as aws_catalog
from gpufleet.components.eks import (
    ClusterAutoscaler,
    ClusterAutoscalerArgs,
    EksCluster,
    EksClusterArgs,
    EksNodeGroup,
    EksNodeGroupArgs,
    accelerator_label_value,
    trust_policy,
)
from gpufleet.components.gpu_stack import GpuOperator, GpuOperatorArgs
from gpufleet.base.node_labels import pool_labels, pool_taints
from gpufleet.base.spec import DriverSpec, EksSpec, GpuOperatorSpec, NodePoolSpec
from gpufleet.base.spec.platforms.eks import EksAutoscalerSpec, EksNetworkSpec, EksSubnet

config = pulumi.Config()
name = config.get("clusterName") or "ml"
region = pulumi.Config("aws").require("region")

# Your network, passed in by id. The spec model checks the ids and that the subnets span two zones.
network = EksNetworkSpec(
    vpc_id=config.require("vpcId"),
    subnets=[EksSubnet(id=s["id"], availability_zone=s["availabilityZone"]) for s in config.require_object("subnets")],
)
subnet_ids = [s.id for s in network.subnets]

# Your own resource: a private bucket for checkpoints.
checkpoints = aws.s3.Bucket(f"{name}-checkpoints", force_destroy=False, tags={L.CLUSTER_TAG: name})
aws.s3.BucketPublicAccessBlock(
    f"{name}-checkpoints",
    bucket=checkpoints.id,
    block_public_acls=True,
    block_public_policy=True,
    ignore_public_acls=True,
    restrict_public_buckets=True,
)

# gpufleet: the control plane (KMS-encrypted secrets, API access entries, private endpoint, OIDC for IRSA).
cluster = EksCluster(
    f"{name}-eks",
    EksClusterArgs(
        spec=EksSpec(network=network),
        cluster_name=name,
        kubernetes_version="1.34",
        region=region,
        subnet_ids=subnet_ids,
        vpc_id=network.vpc_id,
    ),
)
facts = cluster.access.facts
after_node_role = pulumi.ResourceOptions(depends_on=cluster.node_role_policies)

# An on-demand CPU group for the operators and the autoscaler (GPU pools may sit at zero).
system = EksNodeGroup(
    f"{name}-pool-{L.SYSTEM_POOL}",
    EksNodeGroupArgs(
        cluster_name=facts["cluster_name"],
        autoscaler_cluster=name,
        kubernetes_version="1.34",
        node_role_arn=facts["node_role_arn"],
        subnet_ids=subnet_ids,
        instance_types=["m7i.xlarge"],
        ami="al2023-standard",
        min_nodes=2,
        max_nodes=4,
        labels={L.POOL_LABEL: L.SYSTEM_POOL},
        root_volume_gib=50,
    ),
    opts=after_node_role,
)

# A GPU pool that scales from zero: gpufleet's labels and taints, GPU count from the catalog.
pool = NodePoolSpec(name="l4", instance_type="g6.xlarge", min_nodes=0, max_nodes=2)
shape = aws_catalog.instance_type(pool.instance_type)
labels = {**pool_labels(pool, shape.gpu), L.EKS_CA_GPU_LABEL: accelerator_label_value(shape.gpu)}
taints = pool_taints(pool)
gpu_pool = EksNodeGroup(
    f"{name}-pool-{pool.name}",
    EksNodeGroupArgs(
        cluster_name=facts["cluster_name"],
        autoscaler_cluster=name,
        kubernetes_version="1.34",
        node_role_arn=facts["node_role_arn"],
        subnet_ids=subnet_ids,
        instance_types=[pool.instance_type],
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        labels=labels,
        taints=taints,
        gpus=shape.gpus,
    ),
    opts=after_node_role,
)

# Add-ons wait for the system nodes they run on: the same ClusterAccess, with `ready` set.
access = dataclasses.replace(cluster.access, ready=[system])
ClusterAutoscaler(f"{name}-autoscaler", ClusterAutoscalerArgs(EksAutoscalerSpec()), access)
GpuOperator(
    f"{name}-gpu-operator",
    # The EKS NVIDIA AMI ships the driver and toolkit: the operator installs neither.
    GpuOperatorArgs(GpuOperatorSpec(driver=DriverSpec(source="preinstalled")), gpu_node_taints=taints, cuda_versions=("12.8",)),
    access,
)

# Your own resources on the cluster: a namespace whose `trainer` service account may write checkpoints,
# through an IAM role trusted by the cluster's OIDC provider (ClusterAccess facts).
trainer_role = aws.iam.Role(
    f"{name}-trainer",
    # (None until the cluster's OIDC provider is known: unit-test mocks that return only the inputs leave it out.)
    assume_role_policy=pulumi.Output.all(facts["oidc_provider_arn"], facts["oidc_issuer"]).apply(
        lambda a: trust_policy(a[0], a[1], "training", "trainer") if None not in a else None
    ),
)
aws.iam.RolePolicy(
    f"{name}-trainer-checkpoints",
    role=trainer_role.id,
    policy=checkpoints.arn.apply(lambda arn: json.dumps({
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": arn},
            {"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], "Resource": f"{arn}/*"},
        ],
    })),
)
namespace = k8s.core.v1.Namespace(
    "training", metadata={"name": "training"}, opts=pulumi.ResourceOptions(provider=access.provider)
)
k8s.core.v1.ServiceAccount(
    "trainer",
    metadata={
        "name": "trainer",
        "namespace": namespace.metadata["name"],
        "annotations": {"eks.amazonaws.com/role-arn": trainer_role.arn},
    },
    opts=pulumi.ResourceOptions(provider=access.provider),
)

pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("checkpointBucket", checkpoints.bucket)
pulumi.export("gpuNodeGroup", gpu_pool.node_group.node_group_name)
