"""secure-defaults: the cluster is not open to the internet, its secrets and volumes are encrypted,
credentials do not travel in plain text, and no workload pod runs privileged or with added capabilities without
saying why.

"Open to the internet" is judged by the addresses a list of CIDR blocks covers together, however they are
spelled (`0.0.0.0/1` + `128.0.0.0/1` is `0.0.0.0/0`): world-open means more than a /8's worth of globally
reachable addresses in one family (gpufleet/base/cidrs.py, shared with the spec). A value that is not a CIDR
block cannot be judged and is a finding too.

- EKS cluster: no public endpoint open to the internet (endpointPublicAccess defaults to true and
  publicAccessCidrs to 0.0.0.0/0); envelope encryption of `secrets` with a KMS key (encryptionConfig).
- GKE cluster: a public endpoint (no privateClusterConfig.enablePrivateEndpoint) needs
  masterAuthorizedNetworksConfig whose cidrBlocks are not world-open.
- AKS cluster, on pulumi-azure-native (ManagedCluster) or the classic pulumi-azure (KubernetesCluster), each read by
  its own field names (policies/inputs.py AKS_CLUSTERS): a private API server, or authorized IP ranges that are not
  world-open (none set admits 0.0.0.0/0); Microsoft Entra ID integration; local accounts disabled; Kubernetes RBAC
  not turned off.
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
- Serving endpoints (issue 48): a Gateway of an internet-facing GKE class (serving.EXTERNAL_CLASSES: GKE "GatewayClass
  capabilities") or whose listeners admit routes from every namespace (`allowedRoutes.namespaces.from: All`); an Envoy
  Gateway GatewayClass without parametersRef (Envoy Gateway then publishes each Gateway through a LoadBalancer
  Service), or an agentgateway Gateway without `infrastructure.parametersRef` (agentgateway does the same); an
  EnvoyProxy, AgentgatewayParameters or Service whose load balancer is not internal: type LoadBalancer (the EnvoyProxy's default)
  without a cloud's internal annotation or class (gpufleet/base/labels.py: AWS's two, Azure's, GKE's) and without
  loadBalancerSourceRanges that are not world-open. An external endpoint on purpose carries its reason as
  `gpufleet.io/exempt-secure-defaults` (gpufleet writes it from serving.gateway.externalReason). Limits: which cloud
  serves a Service is not in its inputs, so any cloud's internal annotation counts (on k3s, ServiceLB ignores them and
  binds a host port on every node: gpufleet uses ClusterIP there); NodePort Services are not judged.
- Model servers (vLLM in a LeaderWorkerSet, Deployment or StatefulSet): an API key (`--api-key`, or VLLM_API_KEY) is
  required, and it comes from a Secret (env valueFrom), not a literal in the command or env, which the pod spec and
  Pulumi's state show in plain text.
- Privileged pods: a container or init container of a LeaderWorkerSet (leader and worker templates), Deployment,
  StatefulSet, Job or JobSet (each replicated Job's pod template) that runs `securityContext.privileged: true` (named
  with allowPrivilegeEscalation when that is set true too) or adds any Linux capability (`capabilities.add`, whatever
  it is: "beyond none"), unless its pod template's metadata carries why in the annotation
  `gpufleet.io/rdma-capabilities-reason` (labels.RDMA_CAPABILITIES_REASON) with a non-empty value: the reason is the
  record. gpufleet writes it on every serving pod it grants capabilities or privilege (gpufleet:serving.models[i].rdma
  with its reason: GKE GPUDirect's rxdm sidecars and A3 Ultra's privileged workload, IPC_LOCK on RDMA pools). The
  resource-wide exemption (`gpufleet.io/exempt-secure-defaults` on the workload's metadata, or the policy config's
  `exemptions`) also passes it, with every other check of this rule on that resource. allowPrivilegeEscalation true
  alone is not judged (Kubernetes' default for an unprivileged container), nor is hostNetwork/hostPID/hostPath.
  DaemonSets are not judged: node agents (GPU operators' operands, exporters, node-problem-detector) are privileged by
  design on every node; nor are a Helm release's rendered pods, which the release's inputs do not show.
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.base import cidrs
from gpufleet.base import labels as L
from gpufleet.base.spec.features.serving import AGENTGATEWAY_CLASS, ENVOY_CONTROLLER, EXTERNAL_CLASSES
from gpufleet.policies import inputs as I

NAME = "secure-defaults"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
GATEWAY_BETA = "kubernetes:gateway.networking.k8s.io/v1beta1:Gateway"
GATEWAY_CLASS = "kubernetes:gateway.networking.k8s.io/v1:GatewayClass"
ENVOY_PROXY = "kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy"
AGENTGATEWAY_PARAMETERS = "kubernetes:agentgateway.dev/v1alpha1:AgentgatewayParameters"
SERVICE = "kubernetes:core/v1:Service"
LEADER_WORKER_SET = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
JOB = "kubernetes:batch/v1:Job"
JOB_SET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"  # the version the JobSet CRD serves at versions.JOBSET
# GKE's internal passthrough load balancer class (docs.cloud.google.com/kubernetes-engine/docs/concepts/
# service-load-balancer-parameters); the legacy spelling of its annotation.
GKE_INTERNAL_LB_CLASS = "networking.gke.io/l4-regional-internal"
GKE_LEGACY_LB_TYPE_ANNOTATION = "cloud.google.com/load-balancer-type"
_VLLM_SERVER = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints\.openai\.api_server")
_API_KEY_FLAG = re.compile(r"--api-key(?:[= ]\s*(\S+))?")
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


def _aks_cluster(kind: I.AksClusterType, props) -> list[str]:
    """AKS (pulumi-azure-native ManagedCluster or classic pulumi-azure KubernetesCluster, each read by its type's fields:
    policies/inputs.py AKS_CLUSTERS): a private API server or authorized IP ranges that are not open; Microsoft Entra
    ID with local accounts off (a local account's static credential bypasses Entra ID and its audit:
    articles/aks/manage-local-accounts-managed-azure-ad.md); Kubernetes RBAC on."""
    out = []
    if I.get(props, *kind.private) is not True:
        where, listed = kind.ranges(props)
        problem = _open(f"public API server: {where}", listed or ["0.0.0.0/0"])
        if problem:
            out.append(f"{problem}: set {kind.named(kind.private)}=true, or list your networks")
    if not I.mapping(I.get(props, *kind.entra)):
        out.append(f"no Microsoft Entra ID integration ({kind.named(kind.entra)}): users authenticate with cluster "
                   "certificates instead of Entra ID")
    local = kind.named(kind.local_accounts_disabled)
    if I.get(props, *kind.local_accounts_disabled) is not True:
        out.append(f"local accounts are enabled ({local} is not true): the cluster-admin certificate "
                   f"bypasses Entra ID; set {local}=true")
    if I.get(props, *kind.rbac) is False:
        out.append(f"Kubernetes RBAC is off ({kind.named(kind.rbac)}=false)")
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


def _gateway(props) -> list[str]:
    out = []
    klass = I.get(props, "spec", "gatewayClassName")
    if klass in EXTERNAL_CLASSES:
        out.append(f"gatewayClassName {klass} is an internet-facing load balancer: use an internal class (gke-l7-rilb), "
                   "or say why it must face the internet in gpufleet.io/exempt-secure-defaults")
    if klass == AGENTGATEWAY_CLASS and not I.mapping(I.get(props, "spec", "infrastructure", "parametersRef")):
        # agentgateway's controller creates the class itself (no parametersRef gpufleet could set there) and publishes
        # each Gateway through a LoadBalancer Service unless an AgentgatewayParameters says otherwise.
        out.append("an agentgateway Gateway without infrastructure.parametersRef: agentgateway publishes it through a "
                   "LoadBalancer Service (internet-facing on most clouds); point it at an AgentgatewayParameters whose "
                   "service is internal")
    for i, listener in enumerate(I.items(I.get(props, "spec", "listeners"))):
        if I.get(listener, "allowedRoutes", "namespaces", "from") == "All":
            out.append(f"listeners[{i}] ({I.get(listener, 'name', default='?')}) admits HTTPRoutes from every namespace "
                       "(allowedRoutes.namespaces.from: All): anyone who can write a route anywhere publishes through it; "
                       "use Same or a Selector")
    return out


def _gateway_class(props) -> list[str]:
    if I.get(props, "spec", "controllerName") != ENVOY_CONTROLLER or I.mapping(I.get(props, "spec", "parametersRef")):
        return []
    return ["an Envoy Gateway class without parametersRef: Envoy Gateway publishes each of its Gateways through a "
            "LoadBalancer Service (internet-facing on most clouds, a host port on every k3s node); point parametersRef "
            "at an EnvoyProxy whose envoyService is internal"]


def _internal(annotations: dict, lb_class) -> bool:
    """Whether a LoadBalancer Service's annotations or class ask a cloud for an internal load balancer
    (gpufleet/base/labels.py names each cloud's)."""
    scheme = annotations.get(L.AWS_LB_SCHEME_ANNOTATION)
    if scheme is not None:  # the AWS Load Balancer Controller prefers it over the deprecated internal annotation
        return scheme == "internal"
    aws = annotations.get(L.AWS_LB_INTERNAL_ANNOTATION)
    return (lb_class == GKE_INTERNAL_LB_CLASS
            or (isinstance(aws, str) and aws != "false")  # cloud-provider-aws: any value but "false"
            or annotations.get(L.AZURE_LB_INTERNAL_ANNOTATION) == "true"
            or annotations.get(L.GKE_LB_TYPE_ANNOTATION) == "Internal"
            or annotations.get(GKE_LEGACY_LB_TYPE_ANNOTATION) == "Internal")


def _load_balancer(where: str, service, default_type: str) -> list[str]:
    if I.get(service, "type", default=default_type) != "LoadBalancer":
        return []
    annotations = {k: v for k, v in I.mapping(I.get(service, "annotations")).items() if isinstance(k, str)}
    if _internal(annotations, I.get(service, "loadBalancerClass")):
        return []
    ranges = I.items(I.get(service, "loadBalancerSourceRanges"))
    if ranges and _open(f"{where}.loadBalancerSourceRanges", ranges) is None:
        return []
    return [f"{where}: a LoadBalancer with no internal annotation or class is internet-facing: add the cloud's "
            "internal annotation (service.beta.kubernetes.io/aws-load-balancer-scheme: internal, "
            "service.beta.kubernetes.io/azure-load-balancer-internal: \"true\", networking.gke.io/load-balancer-type: "
            "Internal), use ClusterIP, or list your networks in loadBalancerSourceRanges"]


def _envoy_proxy(props) -> list[str]:
    service = I.get(props, "spec", "provider", "kubernetes", "envoyService")
    return _load_balancer("spec.provider.kubernetes.envoyService", service, "LoadBalancer")  # Envoy Gateway's default


def _agentgateway_parameters(props) -> list[str]:
    """agentgateway's Service overrides (`spec.service.metadata`, `spec.service.spec`); its default type is
    LoadBalancer (controller/test/deployer/testdata/*-out.yaml at the agentgateway release gpufleet pins, versions.AGENTGATEWAY)."""
    spec = I.get(props, "spec", "service", "spec")
    service = {"type": I.get(spec, "type"), "loadBalancerClass": I.get(spec, "loadBalancerClass"),
               "loadBalancerSourceRanges": I.get(spec, "loadBalancerSourceRanges"),
               "annotations": I.get(props, "spec", "service", "metadata", "annotations")}
    return _load_balancer("spec.service", service, "LoadBalancer")


def _service(props) -> list[str]:
    spec = I.get(props, "spec")
    service = {"type": I.get(spec, "type"), "loadBalancerClass": I.get(spec, "loadBalancerClass"),
               "loadBalancerSourceRanges": I.get(spec, "loadBalancerSourceRanges"),
               "annotations": I.get(props, "metadata", "annotations")}
    return _load_balancer("spec", service, "ClusterIP")


def _pod_templates(resource_type: str, props) -> list[tuple[str, object]]:
    """(where, pod template) of a workload: an LWS's leader and worker templates, a JobSet's replicated Jobs' pod
    templates (spec.replicatedJobs[].template.spec.template, the JobSet CRD at versions.JOBSET), else spec.template."""
    if resource_type == LEADER_WORKER_SET:
        template = I.get(props, "spec", "leaderWorkerTemplate")
        return [(f"spec.leaderWorkerTemplate.{role}", I.get(template, role))
                for role in ("leaderTemplate", "workerTemplate") if I.mapping(I.get(template, role))]
    if resource_type == JOB_SET:
        return [(f"spec.replicatedJobs[{i}] ({I.get(job, 'name', default='?')}).template.spec.template",
                 I.get(job, "template", "spec", "template"))
                for i, job in enumerate(I.items(I.get(props, "spec", "replicatedJobs")))]
    return [("spec.template", I.get(props, "spec", "template"))]


def _model_server(resource_type: str, props) -> list[str]:
    out = []
    for where, template in _pod_templates(resource_type, props):
        pod = I.get(template, "spec")
        for container in I.items(I.get(pod, "containers")):
            argv = [a for a in I.items(I.get(container, "command")) + I.items(I.get(container, "args")) if isinstance(a, str)]
            line = " ".join(argv)
            if not _VLLM_SERVER.search(line):
                continue
            at = f"{where} container {I.get(container, 'name', default='?')}"
            env = {I.get(e, "name"): e for e in I.items(I.get(container, "env"))}
            key = env.get("VLLM_API_KEY")
            flag = _API_KEY_FLAG.search(line)
            if key is None and flag is None:
                out.append(f"{at}: vLLM's OpenAI server without an API key: anyone who reaches it runs the model; set "
                           "VLLM_API_KEY from a Secret (env valueFrom.secretKeyRef)")
            if key is not None and I.get(key, "value") is not None:
                out.append(f"{at}: env VLLM_API_KEY is a literal value, shown in plain text in the pod spec and the "
                           "stack's state: take it from a Secret (valueFrom.secretKeyRef)")
            if flag is not None and flag.group(1) and not flag.group(1).startswith("$"):
                out.append(f"{at}: --api-key on the command line is shown in plain text in the pod spec and the "
                           "stack's state: take it from a Secret through VLLM_API_KEY")
    return out


def _privileges(container) -> list[str]:
    """What a container is granted beyond an unprivileged one's: privileged (with allowPrivilegeEscalation when it
    says so too), and each capability it adds (Kubernetes' SecurityContext: capabilities.add, privileged,
    allowPrivilegeEscalation, k8s.io/api core/v1)."""
    security = I.get(container, "securityContext")
    granted = []
    if I.get(security, "privileged") is True:
        granted.append("privileged")
        if I.get(security, "allowPrivilegeEscalation") is True:
            granted.append("allowPrivilegeEscalation")
    added = [c if isinstance(c, str) else repr(c) for c in I.items(I.get(security, "capabilities", "add"))]
    if added:
        granted.append(f"capabilities {', '.join(added)}")
    return granted


def _privileged(resource_type: str, props) -> list[str]:
    """Containers and init containers that run privileged or add Linux capabilities, unless their pod template carries
    why (L.RDMA_CAPABILITIES_REASON, non-empty: gpufleet writes it from serving.models[i].rdma.reason)."""
    out = []
    for where, template in _pod_templates(resource_type, props):
        pod = I.get(template, "spec")
        found = [f"{where} {kind} {I.get(container, 'name', default='?')}: runs with {'; '.join(granted)} without a "
                 f"recorded reason: drop it, or state why in the pod template's annotation {L.RDMA_CAPABILITIES_REASON}: "
                 "<why> (a gpufleet stack: gpufleet:serving.models[i].rdma.reason)"
                 for kind, key in (("init container", "initContainers"), ("container", "containers"))
                 for container in I.items(I.get(pod, key)) for granted in [_privileges(container)] if granted]
        # The reason is read only when something is granted: pod annotations still unknown at preview then stop nothing.
        reason = I.get(template, "metadata", "annotations", L.RDMA_CAPABILITIES_REASON) if found else None
        if not (isinstance(reason, str) and reason.strip()):
            out += found
    return out


CHECKS = {
    I.EKS_CLUSTER: _eks_cluster,
    I.GKE_CLUSTER: _gke_cluster,
    **{token: functools.partial(_aks_cluster, kind) for token, kind in I.AKS_CLUSTERS.items()},
    I.EC2_SECURITY_GROUP: _security_group,
    I.EC2_SECURITY_GROUP_RULE: _security_group_rule,
    I.VPC_INGRESS_RULE: _ingress_rule,
    I.GCE_FIREWALL: _firewall,
    I.EC2_LAUNCH_TEMPLATE: _launch_template,
    I.REMOTE_COMMAND: _command,
    GATEWAY: _gateway,
    GATEWAY_BETA: _gateway,
    GATEWAY_CLASS: _gateway_class,
    ENVOY_PROXY: _envoy_proxy,
    AGENTGATEWAY_PARAMETERS: _agentgateway_parameters,
    SERVICE: _service,
}
# Model servers are judged in these; privileges in these and Jobs. DaemonSets are not: node agents (GPU operators'
# operands, exporters) run privileged by design, on every node.
WORKLOADS = (LEADER_WORKER_SET, DEPLOYMENT, STATEFUL_SET)
PRIVILEGE_WORKLOADS = (*WORKLOADS, JOB, JOB_SET)


def check(resource_type: str, props) -> list[str]:
    if resource_type in PRIVILEGE_WORKLOADS:
        return (_model_server(resource_type, props) if resource_type in WORKLOADS else []) + \
            _privileged(resource_type, props)
    fn = CHECKS.get(resource_type)
    return fn(props) if fn else []


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="No control plane, ingress or serving endpoint open to the internet, secrets and volumes encrypted, "
                "IMDSv2, model servers behind an API key, no privileged or added-capability pods without a reason, no "
                "credentials in plain text.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.resource_validator(NAME, check, types=(*CHECKS, *PRIVILEGE_WORKLOADS)),
    config_schema=I.exemptions_schema(),
)
