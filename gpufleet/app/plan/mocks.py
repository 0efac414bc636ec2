"""Pulumi mocks for the offline plan: a recording monitor and the outputs later resources read."""

from __future__ import annotations

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
    """Outputs a real deployment would return, where later resources read them."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        outputs = dict(args.inputs)
        if args.typ == "random:index/randomPassword:RandomPassword":
            outputs["result"] = "plan-placeholder-password"
        elif args.typ == "command:remote:Command":
            reads_kubeconfig = "k3s.yaml" in str(args.inputs.get("create", ""))
            outputs["stdout"] = PLACEHOLDER_KUBECONFIG if reads_kubeconfig else ""
            outputs["stderr"] = ""
        elif args.typ.startswith("aws:"):
            outputs.update(aws_outputs(args.typ, args.name, args.inputs))
        elif args.typ.startswith("gcp:"):
            return _gcp_outputs(args, outputs)
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        return AWS_CALLS.get(args.token, {})


# EKS (issue 3): what AWS returns that later resources read.
PLAN_ACCOUNT = "123456789012"
PLAN_REGION = "us-east-1"
PLAN_OIDC_ISSUER = "https://oidc.eks.us-east-1.amazonaws.com/id/PLANPLACEHOLDER"
AWS_CALLS = {
    "aws:ssm/getParameter:getParameter": {"value": "plan-placeholder-release", "type": "String"},
    "aws:eks/getAddonVersion:getAddonVersion": {"version": "plan-placeholder-eksbuild.1"},
}


def aws_outputs(typ: str, name: str, inputs: dict) -> dict:
    """Outputs of an AWS resource that later resources read (ids, ARNs, endpoints, the OIDC issuer)."""
    service, _, kind = typ.removeprefix("aws:").partition("/")
    out: dict = {"arn": f"arn:aws:{service}:{PLAN_REGION}:{PLAN_ACCOUNT}:{kind.split(':')[0].lower()}/{name}"}
    if typ == "aws:eks/cluster:Cluster":
        cluster = inputs.get("name", name)
        out.update({
            "arn": f"arn:aws:eks:{PLAN_REGION}:{PLAN_ACCOUNT}:cluster/{cluster}",
            "endpoint": f"https://PLANPLACEHOLDER.gr7.{PLAN_REGION}.eks.amazonaws.com",
            "certificateAuthority": {"data": "cGxhbi1wbGFjZWhvbGRlci1jYQ=="},
            "identities": [{"oidcs": [{"issuer": PLAN_OIDC_ISSUER}]}],
            "vpcConfig": {**inputs.get("vpcConfig", {}), "clusterSecurityGroupId": "sg-0plan0cluster0000", "vpcId": "vpc-0plan0000000000"},
        })
    elif typ == "aws:iam/role:Role":
        out.update({"arn": f"arn:aws:iam::{PLAN_ACCOUNT}:role/{name}", "name": name})
    elif typ == "aws:iam/openIdConnectProvider:OpenIdConnectProvider":
        out["arn"] = f"arn:aws:iam::{PLAN_ACCOUNT}:oidc-provider/{PLAN_OIDC_ISSUER.removeprefix('https://')}"
    elif typ == "aws:kms/key:Key":
        out.update({"arn": f"arn:aws:kms:{PLAN_REGION}:{PLAN_ACCOUNT}:key/{name}", "keyId": f"{name}-key-id"})
    elif typ == "aws:ec2/launchTemplate:LaunchTemplate":
        out["latestVersion"] = 1
    elif typ == "aws:ec2/placementGroup:PlacementGroup":
        out["name"] = inputs.get("name", name)
    elif typ == "aws:eks/nodeGroup:NodeGroup":
        out["resources"] = [{"autoscalingGroups": [{"name": f"eks-{name}-asg"}]}]
        out["nodeGroupName"] = inputs.get("nodeGroupName", name)
    return out


# GCP: what GKE and Compute Engine return that later resources read (ids, self links, names, the cluster's
# endpoint and CA). The CA is a base64 placeholder, not a certificate.
PLACEHOLDER_GKE_ENDPOINT = "203.0.113.10"
PLACEHOLDER_CA = "cGxhbi1wbGFjZWhvbGRlci1jYQ=="
_GCP_COLLECTIONS = {
    "gcp:compute/network:Network": "global/networks",
    "gcp:compute/subnetwork:Subnetwork": "regions/{region}/subnetworks",
    "gcp:compute/router:Router": "regions/{region}/routers",
    "gcp:container/cluster:Cluster": "locations/{location}/clusters",
    "gcp:container/nodePool:NodePool": "locations/{location}/clusters/{cluster}/nodePools",
}


def _gcp_outputs(args: pulumi.runtime.MockResourceArgs, outputs: dict) -> tuple[str, dict]:
    inputs = args.inputs
    name = inputs.get("name") or args.name  # the engine would auto-name; the logical name stands in
    project = inputs.get("project") or "plan-project"
    if args.typ == "gcp:serviceaccount/account:Account":
        # What IAM returns for a new service account: its email and its resource name (IAM API, projects.serviceAccounts).
        email = f"{inputs.get('accountId', args.name)}@{project}.iam.gserviceaccount.com"
        rid = f"projects/{project}/serviceAccounts/{email}"
        outputs.update({"email": email, "name": rid, "member": f"serviceAccount:{email}"})
        return rid, outputs
    collection = _GCP_COLLECTIONS.get(args.typ)
    if collection is None:
        return f"{args.name}-id", outputs
    cluster = str(inputs.get("cluster", "")).rsplit("/", 1)[-1]
    path = collection.format(region=inputs.get("region", "plan-region"), location=inputs.get("location", "plan-location"), cluster=cluster)
    rid = f"projects/{project}/{path}/{name}"
    outputs.update({"name": name, "selfLink": f"https://www.googleapis.com/compute/v1/{rid}"})
    if args.typ == "gcp:container/cluster:Cluster":
        outputs.update({
            "endpoint": PLACEHOLDER_GKE_ENDPOINT,
            "masterAuth": {"clusterCaCertificate": PLACEHOLDER_CA, "clientCertificateConfig": {"issueClientCertificate": False}},
            "selfLink": f"https://container.googleapis.com/v1/{rid}",
        })
    return rid, outputs
