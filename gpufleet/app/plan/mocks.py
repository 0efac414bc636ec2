"""Pulumi mocks for the offline plan: a recording monitor and the outputs later resources read."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
from google.protobuf import json_format
from pulumi.runtime.mocks import MockMonitor

# Pulumi's wire signatures (sdk/go/common/resource/sig): secrets, resource references, unknowns.
_SIG = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SECRET = "[secret]"
UNKNOWN = "[unknown]"
ROOT_STACK_TYPE = "pulumi:pulumi:Stack"

# k3s writes a kubeconfig for the local API; the plan's stand-in has the same shape.
PLACEHOLDER_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://127.0.0.1:6443
  name: default
contexts:
- context: {cluster: default, user: default}
  name: default
current-context: default
users:
- name: default
  user: {token: plan-placeholder}
"""


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    parent: Optional[str]
    custom: bool
    inputs: dict
    secret_paths: list[str] = field(default_factory=list)
    provider: Optional[str] = None
    revealed: dict = field(default_factory=dict, repr=False)
    """Inputs with secrets unwrapped: for tests only, never rendered."""
    ignore_changes: list[str] = field(default_factory=list)
    """The resource's ignore_changes option (property paths)."""
    dependencies: list[str] = field(default_factory=list)
    """URNs the resource waits for (depends_on and inputs from other resources)."""
    protect: bool = False
    """The resource's protect option as registered (inherited from its parent by the SDK)."""
    retain_on_delete: bool = False
    """The resource's retain_on_delete option."""
    replace_on_changes: list[str] = field(default_factory=list)
    """The resource's replace_on_changes option (property paths)."""
    delete_before_replace: Optional[bool] = None
    """The resource's delete_before_replace option; None when the program left it unset."""

    def options(self) -> dict:
        """The resource options of the plan's JSON contract, as the registration request carried them."""
        return {
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "ignoreChanges": list(self.ignore_changes),
            "replaceOnChanges": list(self.replace_on_changes),
            "deleteBeforeReplace": self.delete_before_replace,
            # The SDK collects dependencies in a set: sorted, so plans of the same program are identical.
            "dependsOn": sorted(self.dependencies),
        }


def plain(value: Any, path: str = "", secrets: Optional[list[str]] = None, reveal: bool = False) -> Any:
    """A wire value made JSON-safe: secrets redacted (their paths recorded), references as URNs."""
    if isinstance(value, dict):
        if value.get(_SIG) == _SECRET_SIG:
            if secrets is not None:
                secrets.append(path or ".")
            return plain(value.get("value"), path, None, reveal) if reveal else SECRET
        if value.get(_SIG) == _RESOURCE_SIG:
            return value.get("urn")
        return {k: plain(v, f"{path}.{k}" if path else k, secrets, reveal) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, f"{path}[{i}]", secrets, reveal) for i, v in enumerate(value)]
    if value == _UNKNOWN:
        return UNKNOWN
    return value


def registered_options(request) -> dict:
    """protect, retain_on_delete, replace_on_changes and delete_before_replace from a RegisterResourceRequest
    (protect and retainOnDelete are optional fields; deleteBeforeReplace counts only when ...Defined is set)."""
    return {
        "protect": bool(request.protect),
        "retain_on_delete": bool(request.retainOnDelete),
        "replace_on_changes": list(request.replaceOnChanges),
        "delete_before_replace": bool(request.deleteBeforeReplace) if request.deleteBeforeReplaceDefined else None,
    }


class RecordingMonitor(MockMonitor):
    """The SDK's mock monitor, also keeping each registration's parent and JSON-safe inputs in order."""

    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        self.stack_outputs: dict = {}
        self.invokes: list[tuple[str, dict]] = []
        """Data-source calls (token, JSON-safe args) in order, e.g. the SSM parameters an EKS plan reads."""

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the Pulumi engine gives the resource, so that plans, policy verdicts, `gpufleet diff` and the
        exemptions keyed by URN name what `pulumi preview` names: the parent's whole qualified type, `$`, the
        type; a child of the root Stack has its own type alone (pkg/v3 resource/deploy/deployment.go
        `generateURN` and sdk/v3 go/common/resource/urn/urn.go `New`, v3.274.0). The SDK's mock monitor keeps
        only the parent's last type, and keeps the Stack's, so its URNs differed from the engine's below the
        top level (found by the e2e tier's real preview)."""
        typ = type_
        if parent:
            parent_type = parent.split("::")[2]
            if parent_type != ROOT_STACK_TYPE:
                typ = f"{parent_type}${type_}"
        return "urn:pulumi:" + "::".join([pulumi.get_stack(), pulumi.get_project(), typ, name])

    def Invoke(self, request):
        self.invokes.append((request.tok, plain(json_format.MessageToDict(request.args))))
        return super().Invoke(request)

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != ROOT_STACK_TYPE:
            secrets: list[str] = []
            wire = json_format.MessageToDict(request.object)
            inputs = plain(wire, "", secrets)
            self.registrations.append(
                Registration(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    parent=request.parent or None,
                    custom=bool(request.custom),
                    inputs=inputs,
                    secret_paths=secrets,
                    provider=request.provider or None,
                    revealed=plain(wire, reveal=True),
                    ignore_changes=list(request.ignoreChanges),
                    dependencies=list(request.dependencies),
                    **registered_options(request),
                )
            )
        return response

    def RegisterResourceOutputs(self, request):
        if request.urn.split("::")[2] == ROOT_STACK_TYPE:  # the stack itself, not its children
            self.stack_outputs = plain(json_format.MessageToDict(request.outputs))
        return super().RegisterResourceOutputs(request)


class PlanMocks(pulumi.runtime.Mocks):
    """What the clouds, Kubernetes and the providers would answer, in their own shapes (issue 33): ids, ARNs and self
    links as the APIs write them, Pulumi's auto-names where the program gives no name, and every computed output the
    program reads. Deterministic: a value derives from the resource's type and name only, so the same stack plans to the
    same bytes, and a plan carries values that the CRDs' patterns and the providers' checks accept."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        typ, name, inputs = args.typ, args.name, args.inputs
        outputs = dict(inputs)
        if typ.startswith("aws:"):
            return aws_resource(typ, name, inputs, outputs)
        if typ.startswith("gcp:"):
            return gcp_resource(typ, name, inputs, outputs)
        if typ.startswith("azure-native:"):
            return azure_resource(typ, name, inputs, outputs)
        if typ.startswith("kubernetes:"):
            return kubernetes_resource(typ, name, inputs, outputs)
        if typ == "random:index/randomPassword:RandomPassword":
            # The secret itself never reaches a plan; a fixed stand-in keeps plans identical.
            outputs["result"] = "plan-placeholder-password"
            return mock_id(typ, name), outputs
        if typ == "command:remote:Command":
            reads_kubeconfig = "k3s.yaml" in str(inputs.get("create", ""))
            outputs["stdout"] = PLACEHOLDER_KUBECONFIG if reads_kubeconfig else ""
            outputs["stderr"] = ""
            return mock_id(typ, name), outputs
        return mock_id(typ, name), outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        answer = AWS_CALLS.get(args.token) or AZURE_CALLS.get(args.token)
        return answer(args.args or {}) if answer else {}


def _hex(typ: str, name: str, n: int, salt: str = "") -> str:
    """n hex digits that stand in for what a cloud or Pulumi draws at random: fixed by type and name."""
    return hashlib.sha256(f"{typ}\0{name}\0{salt}".encode()).hexdigest()[:n]


def _uuid(typ: str, name: str, salt: str = "") -> str:
    h = _hex(typ, name, 32, salt)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def autoname(typ: str, name: str, randlen: int = 7) -> str:
    """Pulumi's auto-name for a resource given no name: its logical name, `-`, random hex. The bridged providers
    (pulumi-aws, pulumi-gcp) append 7 characters (pulumi-terraform-bridge pkg/tfbridge/names.go `AutoName`, Randlen 7,
    which `ProviderInfo.SetAutonaming` gives every resource's `name` input); pulumi-kubernetes appends 8 to
    `metadata.name` and to a Helm release's `name` (provider/pkg/metadata/naming.go `AssignNameIfAutonamable` and
    provider/pkg/provider/helm_release.go `assignNameIfAutonameable`: NewUniqueName/NewUniqueHex, default length 8)."""
    return f"{name}-{_hex(typ, name, randlen, 'autoname')}"


def mock_id(typ: str, name: str) -> str:
    """The id the plan's mocks give a resource of this type and name (what tests compare inputs with)."""
    prefix = AWS_ID_PREFIXES.get(typ)
    if prefix:
        return f"{prefix}-{_hex(typ, name, 17)}"
    if typ.startswith("pulumi:providers:"):
        return _uuid(typ, name)  # the engine gives a provider a UUID
    if typ.startswith("command:"):
        return f"{name}{_hex(typ, name, 8)}"  # pulumi-command: resource.NewUniqueHex(name, 8, 0), no separator
    if typ == "random:index/randomPassword:RandomPassword":
        return "none"  # terraform-provider-random's random_password: its id is the literal "none"
    return f"{name}-id"


# EKS (issue 3): what AWS returns that later resources read. The account is AWS's documentation example
# (docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html uses 123456789012).
PLAN_ACCOUNT = "123456789012"
PLAN_REGION = "us-east-1"
# Data sources whose answer only the cloud knows at deploy: the plan's answer says so in words, since it reaches the
# plan's inputs and the review's version rows ("EKS AMI release: ..."), which users read.
AWS_CALLS = {
    # The AMI release of a node group: the SSM parameter's value when `pulumi up` runs (components/eks/node_group.py).
    "aws:ssm/getParameter:getParameter": lambda a: {
        "value": f"the release in SSM {a.get('name', '')} at deploy".replace("  ", " "), "type": "String"},
    # An EKS add-on without a pin: EKS's default version for the cluster's Kubernetes version (components/eks/addon.py).
    "aws:eks/getAddonVersion:getAddonVersion": lambda a: {
        "version": f"EKS's default for Kubernetes {a.get('kubernetesVersion', '')} at deploy"},
}

# EC2's resource ids: a prefix and 17 hex digits (docs.aws.amazon.com/AWSEC2/latest/UserGuide/resource-ids.html,
# "longer IDs ... 17 characters"); the prefixes as the EC2 API returns them (VpcId vpc-, SubnetId subnet-, GroupId sg-,
# LaunchTemplateId lt-, InternetGatewayId igw-, NatGatewayId nat-, AllocationId eipalloc-, RouteTableId rtb-,
# RouteTableAssociationId rtbassoc-, SecurityGroupRuleId sgr-, the VPC CIDR AssociationId vpc-cidr-assoc-), FSx's
# FileSystemId fs- and DataRepositoryAssociation AssociationId dra- (FSx API reference).
AWS_ID_PREFIXES = {
    "aws:ec2/vpc:Vpc": "vpc",
    "aws:ec2/subnet:Subnet": "subnet",
    "aws:ec2/securityGroup:SecurityGroup": "sg",
    "aws:ec2/launchTemplate:LaunchTemplate": "lt",
    "aws:ec2/internetGateway:InternetGateway": "igw",
    "aws:ec2/natGateway:NatGateway": "nat",
    "aws:ec2/eip:Eip": "eipalloc",
    "aws:ec2/routeTable:RouteTable": "rtb",
    "aws:ec2/routeTableAssociation:RouteTableAssociation": "rtbassoc",
    "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation": "vpc-cidr-assoc",
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr",
    "aws:ec2/securityGroupRule:SecurityGroupRule": "sgrule",
    "aws:fsx/lustreFileSystem:LustreFileSystem": "fs",
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": "dra",
}

# Where an AWS resource's physical name lives when it is not `name`, and the length the provider caps an auto-name at
# (pulumi-aws provider/resources.go: `aws_eks_node_group` node_group_name AutoName(255), `aws_s3_bucket` bucket
# AutoName(63) lower case, `aws_iam_role` name AutoName(64), `aws_sqs_queue` name (80); the rest `SetAutonaming(255)`).
AWS_NAME_FIELDS = {
    "aws:eks/nodeGroup:NodeGroup": "nodeGroupName",
    "aws:s3/bucket:Bucket": "bucket",
    "aws:s3/bucketV2:BucketV2": "bucket",
}
# Resource types with no physical name of their own (no `name` input): nothing to auto-name.
AWS_UNNAMED = {
    "aws:ec2/subnet:Subnet", "aws:ec2/vpc:Vpc", "aws:ec2/internetGateway:InternetGateway", "aws:ec2/natGateway:NatGateway",
    "aws:ec2/eip:Eip", "aws:ec2/routeTable:RouteTable", "aws:ec2/routeTableAssociation:RouteTableAssociation",
    "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:kms/key:Key", "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "aws:iam/openIdConnectProvider:OpenIdConnectProvider",
    "aws:eks/addon:Addon", "aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation:AccessPolicyAssociation",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation", "aws:fsx/lustreFileSystem:LustreFileSystem",
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation", "aws:autoscaling/tag:Tag", "aws:sqs/queuePolicy:QueuePolicy",
    "aws:cloudwatch/eventTarget:EventTarget", "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
    "aws:amp/scraper:Scraper", "aws:amp/alertManagerDefinition:AlertManagerDefinition", "aws:amp/workspace:Workspace",
}


def _dns_suffix(region: str) -> str:
    """AWS's DNS suffix: amazonaws.com, amazonaws.com.cn in the China regions."""
    return "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"


# The resource types of EC2 ARNs (Service Authorization Reference, "Resource types defined by Amazon EC2").
_EC2_ARN_KINDS = {
    "aws:ec2/vpc:Vpc": "vpc", "aws:ec2/subnet:Subnet": "subnet", "aws:ec2/internetGateway:InternetGateway": "internet-gateway",
    "aws:ec2/routeTable:RouteTable": "route-table", "aws:ec2/natGateway:NatGateway": "natgateway",
}
# One EKS cluster per plan: its OIDC issuer id (32 upper-case hex digits, as EKS writes it) is fixed.
_OIDC_ID = hashlib.sha256(b"gpufleet plan oidc").hexdigest()[:32].upper()


def eks_oidc_issuer(region: str = PLAN_REGION) -> str:
    """The OIDC issuer URL the plan's EKS cluster reports (DescribeCluster identity.oidc.issuer)."""
    return f"https://oidc.eks.{region}.{_dns_suffix(region)}/id/{_OIDC_ID}"


PLAN_OIDC_ISSUER = eks_oidc_issuer()


def aws_partition(region: str) -> str:
    """The ARN partition of a region (docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html: aws, aws-cn,
    aws-us-gov)."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def _aws_region(inputs: dict) -> str:
    """The resource's region (pulumi-aws 7's per-resource `region`), else the stack's `aws:region`."""
    region = inputs.get("region")
    if not isinstance(region, str) or not region:
        region = pulumi.Config("aws").get("region") or PLAN_REGION
    return region


def eks_cluster_security_group(cluster: str) -> str:
    """The security group EKS creates for a cluster (DescribeCluster resourcesVpcConfig.clusterSecurityGroupId), by
    the cluster's logical name."""
    return f"sg-{_hex('aws:eks/cluster:Cluster', cluster, 17, 'cluster-sg')}"


def node_group_asg(node_group: str, node_group_name: str) -> str:
    """The Auto Scaling group EKS makes for a managed node group (logical name, node group name): EKS names it
    eks-<node group name>-<node group uuid> (DescribeNodegroup resources.autoScalingGroups)."""
    return f"eks-{node_group_name}-{_uuid('aws:eks/nodeGroup:NodeGroup', node_group)}"


def aws_resource(typ: str, name: str, inputs: dict, outputs: dict) -> tuple[str, dict]:
    """Id and outputs of an AWS resource: the id as the provider stores it, the ARN in the resource's partition, region
    and account, the auto-name where the program gave none, and the computed outputs later resources read."""
    region = _aws_region(inputs)
    arn = f"arn:{aws_partition(region)}"
    service, _, kind = typ.removeprefix("aws:").partition("/")
    field = AWS_NAME_FIELDS.get(typ, "name")
    physical = inputs.get(field)
    if typ not in AWS_UNNAMED and not physical:
        physical = autoname(typ, name)
        if typ == "aws:s3/bucket:Bucket":
            physical = physical.lower()
        outputs[field] = physical
    physical = physical or name
    rid = mock_id(typ, name)
    if rid == f"{name}-id":
        rid = physical
    outputs["arn"] = f"{arn}:{service}:{region}:{PLAN_ACCOUNT}:{kind.split(':')[0].lower()}/{physical}"
    out = outputs
    if typ == "aws:eks/cluster:Cluster":
        out.update({
            "arn": f"{arn}:eks:{region}:{PLAN_ACCOUNT}:cluster/{physical}",
            "endpoint": f"https://{_hex(typ, name, 32, 'endpoint').upper()}.gr7.{region}.eks.{_dns_suffix(region)}",
            "certificateAuthority": {"data": PLACEHOLDER_CA},
            "identities": [{"oidcs": [{"issuer": eks_oidc_issuer(region)}]}],
            "vpcConfig": {**inputs.get("vpcConfig", {}),
                          "clusterSecurityGroupId": eks_cluster_security_group(name),
                          "vpcId": f"vpc-{_hex(typ, name, 17, 'vpc')}"},
            "platformVersion": "eks.1",
            "status": "ACTIVE",
        })
    elif typ == "aws:eks/nodeGroup:NodeGroup":
        cluster = inputs.get("clusterName", "")
        uid = _uuid(typ, name)
        rid = f"{cluster}:{physical}"
        out["arn"] = f"{arn}:eks:{region}:{PLAN_ACCOUNT}:nodegroup/{cluster}/{physical}/{uid}"
        out["resources"] = [{"autoscalingGroups": [{"name": node_group_asg(name, physical)}]}]
        out["status"] = "ACTIVE"
        # DescribeNodegroup reports the release the group runs (the one asked for, gpufleet's pin) and the Kubernetes
        # minor EKS derives from it (`version`, computed where the program sets none): EKS API Nodegroup releaseVersion,
        # version. A pinned release reads back as written, so a second `up` finds no change (issue 50).
        release = str(inputs.get("releaseVersion") or "")
        if release[:1].isdigit() and release.count(".") >= 2:
            out.setdefault("version", ".".join(release.split(".")[:2]))
    elif typ == "aws:eks/addon:Addon":
        rid = f"{inputs.get('clusterName', '')}:{inputs.get('addonName', name)}"
        out["arn"] = f"{arn}:eks:{region}:{PLAN_ACCOUNT}:addon/{inputs.get('clusterName', '')}/{inputs.get('addonName', name)}/{_uuid(typ, name)}"
    elif typ == "aws:eks/accessEntry:AccessEntry":
        rid = f"{inputs.get('clusterName', '')}:{inputs.get('principalArn', '')}"
        out["accessEntryArn"] = f"{arn}:eks:{region}:{PLAN_ACCOUNT}:access-entry/{inputs.get('clusterName', '')}/role/{PLAN_ACCOUNT}/{name}/{_uuid(typ, name)}"
    elif typ == "aws:eks/accessPolicyAssociation:AccessPolicyAssociation":
        rid = f"{inputs.get('clusterName', '')}#{inputs.get('principalArn', '')}#{inputs.get('policyArn', '')}"
    elif typ == "aws:eks/podIdentityAssociation:PodIdentityAssociation":
        association = f"a-{_hex(typ, name, 17)}"
        rid = f"{inputs.get('clusterName', '')},{association}"
        out.update({"associationId": association,
                    "associationArn": f"{arn}:eks:{region}:{PLAN_ACCOUNT}:podidentityassociation/{inputs.get('clusterName', '')}/{association}"})
    elif typ == "aws:iam/role:Role":
        out.update({"arn": f"{arn}:iam::{PLAN_ACCOUNT}:role/{physical}", "uniqueId": "AROA" + _hex(typ, name, 17).upper()})
    elif typ == "aws:iam/rolePolicy:RolePolicy":
        rid = f"{inputs.get('role', '')}:{physical}"
    elif typ == "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
        # The provider's id: the role's name, `-`, a unique timestamp-based suffix (terraform-provider-aws id.PrefixedUniqueId).
        rid = f"{inputs.get('role', '')}-{int(_hex(typ, name, 12), 16):026d}"
    elif typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
        out["arn"] = rid = f"{arn}:iam::{PLAN_ACCOUNT}:oidc-provider/{str(inputs.get('url', '')).removeprefix('https://')}"
    elif typ == "aws:kms/key:Key":
        rid = _uuid(typ, name)
        out.update({"arn": f"{arn}:kms:{region}:{PLAN_ACCOUNT}:key/{rid}", "keyId": rid})
    elif typ == "aws:kms/alias:Alias":
        out["arn"] = f"{arn}:kms:{region}:{PLAN_ACCOUNT}:{physical}"
        out["targetKeyArn"] = f"{arn}:kms:{region}:{PLAN_ACCOUNT}:key/{inputs.get('targetKeyId', '')}"
    elif typ == "aws:cloudwatch/logGroup:LogGroup":
        out["arn"] = f"{arn}:logs:{region}:{PLAN_ACCOUNT}:log-group:{physical}"
    elif typ == "aws:cloudwatch/eventRule:EventRule":
        out["arn"] = f"{arn}:events:{region}:{PLAN_ACCOUNT}:rule/{physical}"
    elif typ == "aws:cloudwatch/eventTarget:EventTarget":
        rid = f"{inputs.get('rule', '')}-{inputs.get('targetId', name)}"
    elif typ == "aws:sqs/queue:Queue":
        rid = out["url"] = f"https://sqs.{region}.{_dns_suffix(region)}/{PLAN_ACCOUNT}/{physical}"
        out["arn"] = f"{arn}:sqs:{region}:{PLAN_ACCOUNT}:{physical}"
    elif typ == "aws:sqs/queuePolicy:QueuePolicy":
        rid = str(inputs.get("queueUrl", rid))
    elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
        out.update({"arn": f"{arn}:ec2:{region}:{PLAN_ACCOUNT}:launch-template/{rid}", "latestVersion": 1, "defaultVersion": 1})
    elif typ == "aws:ec2/placementGroup:PlacementGroup":
        out.update({"arn": f"{arn}:ec2:{region}:{PLAN_ACCOUNT}:placement-group/{physical}",
                    "placementGroupId": f"pg-{_hex(typ, name, 17)}"})
    elif typ == "aws:ec2/securityGroup:SecurityGroup":
        out["arn"] = f"{arn}:ec2:{region}:{PLAN_ACCOUNT}:security-group/{rid}"
        out["ownerId"] = PLAN_ACCOUNT
    elif typ in _EC2_ARN_KINDS:
        out["arn"] = f"{arn}:ec2:{region}:{PLAN_ACCOUNT}:{_EC2_ARN_KINDS[typ]}/{rid}"
        out["ownerId"] = PLAN_ACCOUNT
        if typ == "aws:ec2/vpc:Vpc":
            out.update({"defaultSecurityGroupId": f"sg-{_hex(typ, name, 17, 'default-sg')}",
                        "mainRouteTableId": f"rtb-{_hex(typ, name, 17, 'main-rtb')}"})
    elif typ == "aws:ec2/eip:Eip":
        out.update({"allocationId": rid, "arn": f"{arn}:ec2:{region}:{PLAN_ACCOUNT}:elastic-ip/{rid}"})
    elif typ == "aws:fsx/lustreFileSystem:LustreFileSystem":
        out.update({"arn": f"{arn}:fsx:{region}:{PLAN_ACCOUNT}:file-system/{rid}",
                    "dnsName": f"{rid}.fsx.{region}.{_dns_suffix(region)}", "mountName": _hex(typ, name, 8, "mount")})
    elif typ == "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation":
        out["arn"] = f"{arn}:fsx:{region}:{PLAN_ACCOUNT}:association/{inputs.get('fileSystemId', '')}/{rid}"
    elif typ == "aws:autoscaling/tag:Tag":
        rid = f"{inputs.get('autoscalingGroupName', '')},{(inputs.get('tag') or {}).get('key', '')}"
    elif typ == "aws:amp/workspace:Workspace":
        rid = f"ws-{_uuid(typ, name)}"
        out.update({"arn": f"{arn}:aps:{region}:{PLAN_ACCOUNT}:workspace/{rid}",
                    "prometheusEndpoint": f"https://aps-workspaces.{region}.{_dns_suffix(region)}/workspaces/{rid}/"})
    elif typ == "aws:amp/scraper:Scraper":
        rid = f"s-{_uuid(typ, name)}"
        out.update({"arn": f"{arn}:aps:{region}:{PLAN_ACCOUNT}:scraper/{rid}",
                    "roleArn": f"{arn}:iam::{PLAN_ACCOUNT}:role/aws-service-role/scraper.aps.amazonaws.com/AWSServiceRoleForAmazonPrometheusScraper_{_hex(typ, name, 15)}"})
    elif typ == "aws:amp/ruleGroupNamespace:RuleGroupNamespace":
        out["arn"] = rid = f"{arn}:aps:{region}:{PLAN_ACCOUNT}:rulegroupsnamespace/{inputs.get('workspaceId', '')}/{physical}"
    elif typ == "aws:amp/alertManagerDefinition:AlertManagerDefinition":
        rid = str(inputs.get("workspaceId", rid))
    elif typ == "aws:s3/bucket:Bucket":
        out.update({"arn": f"{arn}:s3:::{physical}", "bucketDomainName": f"{physical}.s3.{_dns_suffix(region)}"})
    elif typ == "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock":
        rid = str(inputs.get("bucket", rid))
    return rid, out


# GCP: what GKE and Compute Engine return that later resources read (ids, self links, names, the cluster's
# endpoint and CA). The CA is a base64 placeholder, not a certificate; the endpoint an address of TEST-NET-3
# (RFC 5737), which no real cluster has.
PLACEHOLDER_GKE_ENDPOINT = "203.0.113.10"
PLACEHOLDER_CA = "cGxhbi1wbGFjZWhvbGRlci1jYQ=="
PLAN_GCP_PROJECT = "plan-project"
PLAN_PEERING_RANGE = "10.252.0.0"
# Each resource's id as pulumi-gcp stores it: the API's resource name (cloud.google.com/compute/docs/reference/rest/v1
# `selfLink` minus the service prefix; container.googleapis.com v1 `projects/*/locations/*/clusters/*[/nodePools/*]`;
# a router NAT as `{project}/{region}/{router}/{name}`, the provider's import format).
_GCP_COLLECTIONS = {
    "gcp:compute/network:Network": ("compute", "projects/{project}/global/networks/{name}"),
    "gcp:compute/firewall:Firewall": ("compute", "projects/{project}/global/firewalls/{name}"),
    "gcp:compute/globalAddress:GlobalAddress": ("compute", "projects/{project}/global/addresses/{name}"),
    "gcp:compute/subnetwork:Subnetwork": ("compute", "projects/{project}/regions/{region}/subnetworks/{name}"),
    "gcp:compute/router:Router": ("compute", "projects/{project}/regions/{region}/routers/{name}"),
    "gcp:compute/routerNat:RouterNat": (None, "{project}/{region}/{router}/{name}"),
    "gcp:container/cluster:Cluster": ("container", "projects/{project}/locations/{location}/clusters/{name}"),
    "gcp:container/nodePool:NodePool": ("container", "projects/{project}/locations/{location}/clusters/{cluster}/nodePools/{name}"),
}
# Resource types whose `name` is not a name the program chooses (the API assigns it) or that have no `name` input.
_GCP_UNNAMED = {
    "gcp:serviceaccount/account:Account", "gcp:serviceaccount/iAMMember:IAMMember", "gcp:projects/iAMMember:IAMMember",
    "gcp:monitoring/alertPolicy:AlertPolicy", "gcp:monitoring/dashboard:Dashboard",
}
_SERVICE_URLS = {"compute": "https://www.googleapis.com/compute/v1/", "container": "https://container.googleapis.com/v1/"}


def _last(value) -> str:
    return str(value or "").rsplit("/", 1)[-1]


def gcp_resource(typ: str, name: str, inputs: dict, outputs: dict) -> tuple[str, dict]:
    """Id and outputs of a GCP resource: its resource name, self link, auto-name and what later resources read."""
    config = pulumi.Config("gcp")
    project = inputs.get("project") or config.get("project") or PLAN_GCP_PROJECT
    region = inputs.get("region") or config.get("region") or "us-central1"
    physical = inputs.get("name")
    if typ not in _GCP_UNNAMED and not physical:
        physical = outputs["name"] = autoname(typ, name)
    outputs["project"] = project
    if typ == "gcp:serviceaccount/account:Account":
        # What IAM returns for a new service account: its email and its resource name (IAM API, projects.serviceAccounts).
        email = f"{inputs.get('accountId', name)}@{project}.iam.gserviceaccount.com"
        rid = f"projects/{project}/serviceAccounts/{email}"
        outputs.update({"email": email, "name": rid, "member": f"serviceAccount:{email}",
                        "uniqueId": str(int(_hex(typ, name, 15), 16)).rjust(21, "1")[:21]})
        return rid, outputs
    if typ in ("gcp:serviceaccount/iAMMember:IAMMember", "gcp:projects/iAMMember:IAMMember"):
        target = inputs.get("serviceAccountId") or inputs.get("project") or project
        outputs["etag"] = "BwY" + _hex(typ, name, 9)
        return f"{target}/{inputs.get('role', '')}/{inputs.get('member', '')}", outputs
    if typ == "gcp:monitoring/alertPolicy:AlertPolicy":
        rid = f"projects/{project}/alertPolicies/{int(_hex(typ, name, 15), 16)}"
        outputs["name"] = rid
        return rid, outputs
    if typ == "gcp:monitoring/dashboard:Dashboard":
        return f"projects/{project}/dashboards/{_uuid(typ, name)}", outputs
    collection = _GCP_COLLECTIONS.get(typ)
    if collection is None:
        return mock_id(typ, name), outputs
    service, pattern = collection
    rid = pattern.format(project=project, region=_last(region), location=inputs.get("location") or _last(region),
                         cluster=_last(inputs.get("cluster")), router=_last(inputs.get("router")), name=physical)
    if service:
        outputs["selfLink"] = _SERVICE_URLS[service] + rid
    if typ == "gcp:compute/network:Network":
        outputs["numericId"] = str(int(_hex(typ, name, 15), 16))
    elif typ == "gcp:compute/globalAddress:GlobalAddress":
        # Google allocates an internal peering range when none is given: a placeholder range stands in for it.
        outputs["address"] = inputs.get("address") or PLAN_PEERING_RANGE
    elif typ == "gcp:compute/subnetwork:Subnetwork":
        outputs["gatewayAddress"] = outputs.get("gatewayAddress") or _gateway(inputs.get("ipCidrRange"))
    elif typ == "gcp:container/cluster:Cluster":
        outputs.update({
            "endpoint": PLACEHOLDER_GKE_ENDPOINT,
            "masterAuth": {"clusterCaCertificate": PLACEHOLDER_CA, "clientCertificateConfig": {"issueClientCertificate": False}},
            "location": inputs.get("location") or _last(region),
        })
    elif typ == "gcp:container/nodePool:NodePool":
        outputs["instanceGroupUrls"] = [
            f"{_SERVICE_URLS['compute']}projects/{project}/zones/{zone}/instanceGroupManagers/gke-{_last(inputs.get('cluster'))[:15]}-{physical[:15]}-{_hex(typ, name, 8, zone)}-grp"
            for zone in (inputs.get("nodeLocations") or [inputs.get("location") or _last(region)])
        ]
    return rid, outputs


# AKS (issue 41; Azure Native since issue 53): ARM ids as Azure Resource Manager writes them (/subscriptions/{id}/
# resourceGroups/{group}/providers/{namespace}/{type}/{name}; learn.microsoft.com/azure/azure-resource-manager/
# management/resource-name-rules), in a subscription that is a fixed stand-in (a GUID, as ARM ids carry). Azure Native
# takes each resource's ARM name in an input of its own (resourceGroupName, virtualNetworkName, subnetName,
# resourceName, agentPoolName) and returns it as the output `name`.
PLAN_AZURE_SUBSCRIPTION = "00000000-0000-4000-8000-000000000000"
PLAN_AZURE_TENANT = "11111111-1111-4111-8111-111111111111"
_AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"
_AZURE_NAME_INPUT = {
    "azure-native:resources:ResourceGroup": "resourceGroupName",
    "azure-native:network:VirtualNetwork": "virtualNetworkName",
    "azure-native:network:Subnet": "subnetName",
    _AKS_CLUSTER: "resourceName",
    "azure-native:containerservice:AgentPool": "agentPoolName",
    "azure-native:features:SubscriptionFeatureRegistration": "featureName",
}


def _azure_group_id(group: str) -> str:
    return f"/subscriptions/{PLAN_AZURE_SUBSCRIPTION}/resourceGroups/{group}"


def _aks_cluster_id(group: str, cluster: str) -> str:
    return f"{_azure_group_id(group)}/providers/Microsoft.ContainerService/managedClusters/{cluster}"


def azure_resource(typ: str, name: str, inputs: dict, outputs: dict) -> tuple[str, dict]:
    """Id and outputs of an Azure resource (pulumi-azure-native): its ARM id, and what later resources read (a cluster's
    FQDNs, OIDC issuer and identity)."""
    key = _AZURE_NAME_INPUT.get(typ)
    physical = (inputs.get(key) if key else None) or autoname(typ, name, 8)
    outputs["name"] = physical
    group = inputs.get("resourceGroupName") or "plan-rg"
    if typ == "azure-native:resources:ResourceGroup":
        return _azure_group_id(physical), outputs
    if typ == "azure-native:network:VirtualNetwork":
        return f"{_azure_group_id(group)}/providers/Microsoft.Network/virtualNetworks/{physical}", outputs
    if typ == "azure-native:network:Subnet":
        vnet = inputs.get("virtualNetworkName", "")
        return f"{_azure_group_id(group)}/providers/Microsoft.Network/virtualNetworks/{vnet}/subnets/{physical}", outputs
    if typ == "azure-native:containerservice:AgentPool":
        # Microsoft.ContainerService/managedClusters/{cluster}/agentPools/{name}: below its cluster's id.
        return f"{_aks_cluster_id(group, inputs.get('resourceName', ''))}/agentPools/{physical}", outputs
    if typ == "azure-native:authorization:RoleAssignment":
        # Role assignments are named by a GUID below their scope (Microsoft.Authorization/roleAssignments/{guid}).
        rid = f"{inputs.get('scope', '')}/providers/Microsoft.Authorization/roleAssignments/{_uuid(typ, name)}"
        outputs["name"] = rid.rsplit("/", 1)[-1]
        return rid, outputs
    if typ == "azure-native:features:SubscriptionFeatureRegistration":
        return (f"/subscriptions/{PLAN_AZURE_SUBSCRIPTION}/providers/Microsoft.Features/featureProviders/"
                f"{inputs.get('providerNamespace', '')}/subscriptionFeatureRegistrations/{physical}"), outputs
    if typ != _AKS_CLUSTER:
        return mock_id(typ, name), outputs
    location = inputs.get("location") or "eastus"
    prefix = inputs.get("dnsPrefix") or physical
    suffix = _hex(typ, name, 8)
    private = bool((inputs.get("apiServerAccessProfile") or {}).get("enablePrivateCluster"))
    oidc = bool((inputs.get("oidcIssuerProfile") or {}).get("enabled"))
    # AKS's names: <prefix>-<hash>.hcp.<region>.azmk8s.io, and for a private cluster <prefix>-<hash>.<guid>
    # .privatelink.<region>.azmk8s.io; the issuer https://<region>.oic.prod-aks.azure.com/<tenant>/<guid>/
    # (articles/aks/use-oidc-issuer.md, "Get the OIDC issuer URL").
    outputs.update({
        "fqdn": f"{prefix}-{suffix}.hcp.{location}.azmk8s.io",
        "privateFQDN": f"{prefix}-{suffix}.{_uuid(typ, name, 'dns')}.privatelink.{location}.azmk8s.io" if private else "",
        "oidcIssuerProfile": {"enabled": oidc, "issuerURL": f"https://{location}.oic.prod-aks.azure.com/"
                              f"{PLAN_AZURE_TENANT}/{_uuid(typ, name, 'oidc')}/" if oidc else ""},
        "identity": {**(inputs.get("identity") or {}), "principalId": _uuid(typ, name, "principal"),
                     "tenantId": PLAN_AZURE_TENANT},
        "nodeResourceGroup": f"MC_{group}_{physical}_{location}",
    })
    return _aks_cluster_id(group, physical), outputs


def _aks_user_credentials(args: dict) -> dict:
    """listClusterUserCredential: the cluster's user kubeconfig, base64 (AKS REST API CredentialResults); the plan's
    stand-in CA is what the cluster's kubeconfig reads from it."""
    cluster = args.get("resourceName") or "plan-aks"
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": cluster, "cluster": {"server": f"https://{cluster}.hcp.eastus.azmk8s.io:443",
                                                      "certificate-authority-data": PLACEHOLDER_CA}}]}
    return {"kubeconfigs": [{"name": "clusterUser", "value": base64.b64encode(json.dumps(doc).encode()).decode()}]}


AZURE_CALLS = {"azure-native:containerservice:listManagedClusterUserCredentials": _aks_user_credentials}


def _gateway(cidr) -> str:
    """A subnet's gateway: its range's first host address (Compute Engine reserves it: cloud.google.com/vpc/docs/subnets
    "Reserved IP addresses in IPv4 subnets")."""
    try:
        return str(next(ipaddress.ip_network(str(cidr), strict=False).hosts()))
    except (ValueError, StopIteration):
        return ""


def kubernetes_resource(typ: str, name: str, inputs: dict, outputs: dict) -> tuple[str, dict]:
    """A Kubernetes object as the API server stores it: the auto-name where metadata gives none (pulumi-kubernetes
    sets metadata.name, or a Helm release's name, to the logical name and 8 random hex characters, and marks the
    object `pulumi.com/autonamed`), and the id `namespace/name` (or `name` for cluster-scoped objects)."""
    if typ.startswith("pulumi:providers:") or typ.startswith("kubernetes:yaml/"):
        return mock_id(typ, name), outputs
    if typ == "kubernetes:helm.sh/v3:Release":
        release = inputs.get("name") or autoname(typ, name, 8)
        namespace = inputs.get("namespace") or "default"
        outputs["name"] = release
        outputs["status"] = {"name": release, "namespace": namespace, "status": "deployed", "revision": 1,
                             "chart": inputs.get("chart"), "version": inputs.get("version")}
        return f"{namespace}/{release}", outputs
    metadata = dict(inputs.get("metadata") or {})
    if not metadata.get("name") and not metadata.get("generateName"):
        metadata["name"] = autoname(typ, name, 8)
        metadata["annotations"] = {**(metadata.get("annotations") or {}), "pulumi.com/autonamed": "true"}
    metadata.setdefault("uid", _uuid(typ, name))
    outputs["metadata"] = metadata
    namespace = metadata.get("namespace")
    return (f"{namespace}/{metadata.get('name')}" if namespace else str(metadata.get("name"))), outputs
