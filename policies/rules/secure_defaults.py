"""secure-defaults: the cluster is not open to the internet, its secrets and volumes are encrypted, and
credentials do not travel in plain text.

- EKS cluster: no public endpoint open to 0.0.0.0/0 (endpointPublicAccess defaults to true and
  publicAccessCidrs to 0.0.0.0/0); envelope encryption of `secrets` with a KMS key (encryptionConfig).
- GKE cluster: a public endpoint (no privateClusterConfig.enablePrivateEndpoint) needs
  masterAuthorizedNetworksConfig without 0.0.0.0/0.
- EC2 launch templates: EBS volumes encrypted; IMDSv2 required (metadataOptions.httpTokens: required),
  so pods cannot steal the node role through IMDSv1.
- k3s over SSH (command:remote:Command): the join token and private keys are never written into the
  command line or environment, which Pulumi stores and shows in plain text; they belong in stdin or the
  connection, as secrets. (Whether an input is a secret is not visible to a Python policy under the
  CLI; gpufleet's spec refuses a plain-text sshPrivateKey before anything is planned.)
"""

from __future__ import annotations

import re

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.policies import inputs as I

NAME = "secure-defaults"
OPEN = ("0.0.0.0/0", "::/0")
_CREDENTIALS = (
    (re.compile(r"K3S_TOKEN\s*=|--token[= ]\s*\S|--agent-token[= ]\s*\S"), "a k3s join token"),
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"), "a private key"),
)


def _eks_cluster(props) -> list[str]:
    out = []
    vpc = I.get(props, "vpcConfig")
    public = I.get(vpc, "endpointPublicAccess", default=True) is not False
    cidrs = [c for c in I.items(I.get(vpc, "publicAccessCidrs"))] or ["0.0.0.0/0"]
    if public and any(c in OPEN for c in cidrs):
        out.append("public API endpoint open to 0.0.0.0/0: set vpcConfig.publicAccessCidrs to your networks, or endpointPublicAccess=false")
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
    cidrs = [I.get(b, "cidrBlock") for b in I.items(I.get(networks, "cidrBlocks"))]
    if any(c in OPEN for c in cidrs):
        return ["masterAuthorizedNetworksConfig allows 0.0.0.0/0: list your networks instead"]
    return []


def _launch_template(props) -> list[str]:
    out = []
    for i, m in enumerate(I.items(I.get(props, "blockDeviceMappings"))):
        ebs = I.get(m, "ebs")
        if I.mapping(ebs) and not I.truthy(I.get(ebs, "encrypted")):
            out.append(f"blockDeviceMappings[{i}] ({I.get(m, 'deviceName', default='?')}): EBS volume not encrypted (ebs.encrypted: \"true\")")
    if I.get(props, "metadataOptions", "httpTokens") != "required":
        out.append("IMDSv2 not required: set metadataOptions.httpTokens=required (and httpPutResponseHopLimit as pods need)")
    return out


def _command(props) -> list[str]:
    out = []
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
    I.EC2_LAUNCH_TEMPLATE: _launch_template,
    I.REMOTE_COMMAND: _command,
}


def check(resource_type: str, props) -> list[str]:
    fn = CHECKS.get(resource_type)
    return fn(props) if fn else []


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="No control plane open to 0.0.0.0/0, secrets and volumes encrypted, IMDSv2, no credentials in plain text.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.resource_validator(NAME, check, types=CHECKS),
    config_schema=I.exemptions_schema(),
)
