"""secure-defaults: the cluster is not open to the internet, its secrets and volumes are encrypted, and
credentials do not travel in plain text.

"Open to the internet" is judged by the addresses a list of CIDR blocks covers together, however they are
spelled (`0.0.0.0/1` + `128.0.0.0/1` is `0.0.0.0/0`): world-open means more than a /8's worth of globally
reachable addresses in one family (gpufleet/base/cidrs.py, shared with the spec). A value that is not a CIDR
block cannot be judged and is a finding too.

- EKS cluster: no public endpoint open to the internet (endpointPublicAccess defaults to true and
  publicAccessCidrs to 0.0.0.0/0); envelope encryption of `secrets` with a KMS key (encryptionConfig).
- GKE cluster: a public endpoint (no privateClusterConfig.enablePrivateEndpoint) needs
  masterAuthorizedNetworksConfig whose cidrBlocks are not world-open.
- Security groups and firewall rules: no ingress from the internet. EC2 SecurityGroup `ingress[]`
  (cidrBlocks, ipv6CidrBlocks), SecurityGroupRule of type ingress, VPC SecurityGroupIngressRule (cidrIpv4,
  cidrIpv6), and GCE Firewall rules of direction INGRESS that allow traffic and are not disabled
  (sourceRanges; with no sourceRanges, sourceTags or sourceServiceAccounts GCE takes 0.0.0.0/0:
  hashicorp/terraform-provider-google#6789). Egress is not judged. gpufleet itself writes ingress from
  security groups and from its own GPUDirect subnets only.
- EC2 launch templates: blank EBS volumes encrypted (a volume from a snapshot is as its snapshot is); IMDSv2 required (metadataOptions.httpTokens: required),
  so pods cannot steal the node role through IMDSv1.
- k3s servers over SSH (command:remote:Command installing `k3s server`): Secrets encrypted at rest, k3s's
  `secrets-encryption` (true in a config the script writes, or the `--secrets-encryption` flag;
  docs.k3s.io/security/secrets-encryption), unless the script carries the exemption comment
  `# gpufleet.io/exempt-secure-defaults: <reason>` (gpufleet writes it from cluster.k3s.secretsEncryption.reason).
- k3s over SSH (command:remote:Command): the join token and private keys are never written into the
  command line or environment, which Pulumi stores and shows in plain text; they belong in stdin or the
  connection, as secrets. (Whether an input is a secret is not visible to a Python policy under the
  CLI; gpufleet's spec refuses a plain-text sshPrivateKey before anything is planned.)
"""

from __future__ import annotations

import re
from typing import Optional

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.base import cidrs
from gpufleet.policies import inputs as I

NAME = "secure-defaults"
_CREDENTIALS = (
    (re.compile(r"K3S_TOKEN\s*=|--token[= ]\s*\S|--agent-token[= ]\s*\S"), "a k3s join token"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "a private key"),
)


def _open(where: str, values: list) -> Optional[str]:
    """What is wrong with a list of CIDR blocks that admits traffic, or None: a value that cannot be judged, or
    blocks that together are world-open."""
    bad = cidrs.unjudgeable(values)
    if bad:
        return f"{where}: {', '.join(repr(v) for v in bad)} is not a CIDR block: cannot judge who it admits"
    if cidrs.world_open(values):
        return f"{where} open to the internet ({', '.join(values)}: more than a /8's worth of public addresses)"
    return None


def _eks_cluster(props) -> list[str]:
    out = []
    vpc = I.get(props, "vpcConfig")
    public = I.get(vpc, "endpointPublicAccess", default=True) is not False
    listed = [c for c in I.items(I.get(vpc, "publicAccessCidrs"))] or ["0.0.0.0/0"]  # AWS's default
    problem = _open("public API endpoint: vpcConfig.publicAccessCidrs", listed) if public else None
    if problem:
        out.append(f"{problem}: set vpcConfig.publicAccessCidrs to your networks, or endpointPublicAccess=false")
    encrypted = any(
        "secrets" in I.items(I.get(e, "resources")) and I.get(e, "provider", "keyArn")
        for e in ([I.get(props, "encryptionConfig")] if I.mapping(I.get(props, "encryptionConfig")) else I.items(I.get(props, "encryptionConfig")))
    )
    if not encrypted:
        out.append("no envelope encryption of secrets with a KMS key: set encryptionConfig {resources: [secrets], provider: {keyArn}}")
    return out


def _gke_cluster(props) -> list[str]:
    if I.get(props, "privateClusterConfig", "enablePrivateEndpoint") is True:
        return []
    networks = I.get(props, "masterAuthorizedNetworksConfig")
    if not I.mapping(networks):
        return ["public control-plane endpoint with no masterAuthorizedNetworksConfig: anyone can reach the API server"]
    problem = _open("masterAuthorizedNetworksConfig.cidrBlocks", [I.get(b, "cidrBlock") for b in I.items(I.get(networks, "cidrBlocks"))])
    return [f"{problem}: list your networks instead"] if problem else []


def _aks_cluster(props) -> list[str]:
    """AKS: a private API server or authorized IP ranges that are not open; Microsoft Entra ID with local accounts off
    (a local account's static credential bypasses Entra ID and its audit: articles/aks/manage-local-accounts-managed-
    azure-ad.md); Kubernetes RBAC on."""
    out = []
    if I.get(props, "privateClusterEnabled") is not True:
        listed = I.items(I.get(props, "apiServerAccessProfile", "authorizedIpRanges"))
        problem = _open("public API server: apiServerAccessProfile.authorizedIpRanges", listed or ["0.0.0.0/0"])
        if problem:
            out.append(f"{problem}: set privateClusterEnabled=true, or list your networks")
    if not I.mapping(I.get(props, "azureActiveDirectoryRoleBasedAccessControl")):
        out.append("no Microsoft Entra ID integration (azureActiveDirectoryRoleBasedAccessControl): users authenticate with "
                   "cluster certificates instead of Entra ID")
    if I.get(props, "localAccountDisabled") is not True:
        out.append("local accounts are enabled (localAccountDisabled is not true): the cluster-admin certificate bypasses "
                   "Entra ID; set localAccountDisabled=true")
    if I.get(props, "roleBasedAccessControlEnabled") is False:
        out.append("Kubernetes RBAC is off (roleBasedAccessControlEnabled=false)")
    return out


def _security_group(props) -> list[str]:
    out = []
    for i, rule in enumerate(I.items(I.get(props, "ingress"))):
        listed = I.items(I.get(rule, "cidrBlocks")) + I.items(I.get(rule, "ipv6CidrBlocks"))
        problem = _open(f"ingress[{i}] (cidrBlocks, ipv6CidrBlocks)", listed) if listed else None
        if problem:
            out.append(f"{problem}: admit your networks or other security groups only")
    return out


def _security_group_rule(props) -> list[str]:
    if I.get(props, "type") != "ingress":
        return []
    listed = I.items(I.get(props, "cidrBlocks")) + I.items(I.get(props, "ipv6CidrBlocks"))
    problem = _open("ingress rule (cidrBlocks, ipv6CidrBlocks)", listed) if listed else None
    return [f"{problem}: admit your networks or other security groups only"] if problem else []


def _ingress_rule(props) -> list[str]:
    listed = [c for c in (I.get(props, "cidrIpv4"), I.get(props, "cidrIpv6")) if c is not None]
    problem = _open("ingress rule (cidrIpv4, cidrIpv6)", listed) if listed else None
    return [f"{problem}: admit your networks or other security groups only"] if problem else []


def _firewall(props) -> list[str]:
    if str(I.get(props, "direction", default="INGRESS")).upper() != "INGRESS" or I.get(props, "disabled") is True:
        return []
    if not I.items(I.get(props, "allows")):
        return []  # a deny rule (or one allowing nothing) admits no one
    listed = I.items(I.get(props, "sourceRanges"))
    if not listed and not I.items(I.get(props, "sourceTags")) and not I.items(I.get(props, "sourceServiceAccounts")):
        listed = ["0.0.0.0/0"]  # GCE's default source for an ingress rule without one
    problem = _open("sourceRanges", listed) if listed else None
    return [f"{problem}: admit your networks, tags or service accounts only"] if problem else []


def _launch_template(props) -> list[str]:
    out = []
    for i, m in enumerate(I.items(I.get(props, "blockDeviceMappings"))):
        ebs = I.get(m, "ebs")
        # A volume from a snapshot takes no encryption value (EC2 API LaunchTemplateEbsBlockDeviceRequest.Encrypted:
        # "If you are creating a volume from a snapshot, you can't specify an encryption value"): it is encrypted as its
        # snapshot is, which the inputs cannot show, so only a blank volume is judged here.
        if I.mapping(ebs) and not I.get(ebs, "snapshotId") and not I.truthy(I.get(ebs, "encrypted")):
            out.append(f"blockDeviceMappings[{i}] ({I.get(m, 'deviceName', default='?')}): EBS volume not encrypted (ebs.encrypted: \"true\")")
    if I.get(props, "metadataOptions", "httpTokens") != "required":
        out.append("IMDSv2 not required: set metadataOptions.httpTokens=required (and httpPutResponseHopLimit as pods need)")
    return out


_ENCRYPTED = re.compile(r"secrets-encryption(\s*:\s*(true|\"true\"|'true')\b|(?=[\s'\"]|$))", re.MULTILINE)


def _command(props) -> list[str]:
    out = []
    if I.is_k3s_server(props) and not any(_ENCRYPTED.search(t) for t in I.command_texts(props)) \
            and not I.script_exemption(props, NAME):
        out.append("k3s server without secrets encryption at rest: set secrets-encryption: true (gpufleet: "
                   "cluster.k3s.secretsEncryption), or exempt it with a reason")
    places = {name: I.text(I.get(props, name)) or "" for name in ("create", "update", "delete")}
    # By name: a map's order is not the program's once it has crossed the wire (a Struct is a hash map).
    environment = sorted(I.mapping(I.get(props, "environment")).items())
    places.update({f"environment.{k}": str(v) for k, v in environment})
    places.update({f"environment.{k}": "K3S_TOKEN=" for k, _ in environment if k in ("K3S_TOKEN", "K3S_AGENT_TOKEN")})
    for where, value in places.items():
        for pattern, what in _CREDENTIALS:
            if pattern.search(value):
                out.append(f"{where} contains {what} in plain text: pass it through stdin as a secret")
    return out


CHECKS = {
    I.EKS_CLUSTER: _eks_cluster,
    I.GKE_CLUSTER: _gke_cluster,
    I.AKS_CLUSTER: _aks_cluster,
    I.EC2_SECURITY_GROUP: _security_group,
    I.EC2_SECURITY_GROUP_RULE: _security_group_rule,
    I.VPC_INGRESS_RULE: _ingress_rule,
    I.GCE_FIREWALL: _firewall,
    I.EC2_LAUNCH_TEMPLATE: _launch_template,
    I.REMOTE_COMMAND: _command,
}


def check(resource_type: str, props) -> list[str]:
    fn = CHECKS.get(resource_type)
    return fn(props) if fn else []


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="No control plane or ingress open to the internet, secrets and volumes encrypted, IMDSv2, no credentials in plain text.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.resource_validator(NAME, check, types=CHECKS),
    config_schema=I.exemptions_schema(),
)
