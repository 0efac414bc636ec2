import pytest

from gpufleet.policies import inputs as I
from tests.policy.fixtures import EKS_CLUSTER_IN, GKE_CLUSTER_IN, K3S_COMMAND_IN, LAUNCH_TEMPLATE_IN, DELETE, findings, messages, res, with_

P = "secure-defaults"


@pytest.mark.parametrize(
    "type_,base,path,value,failed",
    [
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "version", "1.33", False),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0"], True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", DELETE, True),  # AWS default: 0.0.0.0/0
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.endpointPublicAccess", False, False),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "encryptionConfig", DELETE, True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "encryptionConfig.resources", [], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig", DELETE, True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig.cidrBlocks", [{"cidrBlock": "0.0.0.0/0"}], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "privateClusterConfig", {"enablePrivateEndpoint": True}, False),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "blockDeviceMappings.0.ebs.encrypted", "false", True),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "blockDeviceMappings.0.ebs.encrypted", DELETE, True),
        # A volume from a snapshot takes no encryption value (EC2 LaunchTemplateEbsBlockDeviceRequest.Encrypted).
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "blockDeviceMappings.0.ebs",
         {"volumeSize": 100, "volumeType": "gp3", "snapshotId": "snap-0123456789abcdef0"}, False),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "metadataOptions.httpTokens", "optional", True),
        (I.EC2_LAUNCH_TEMPLATE, LAUNCH_TEMPLATE_IN, "metadataOptions", DELETE, True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "curl -sfL https://get.k3s.io | K3S_TOKEN=abc sh -", True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "k3s agent --token s3cr3t --server https://x:6443", True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "environment", {"K3S_TOKEN": "abc"}, True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "echo '-----BEGIN OPENSSH PRIVATE KEY-----' > key", True),
        # k3s servers encrypt Secrets at rest (docs.k3s.io/security/secrets-encryption), or say why not.
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "sudo INSTALL_K3S_EXEC='server' sh install.sh", True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "cat <<'E'\nsecrets-encryption: false\nE\nINSTALL_K3S_EXEC='server' sh i", True),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "cat <<'E'\nsecrets-encryption: true\nE\nINSTALL_K3S_EXEC='server' sh i", False),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create",
         "# gpufleet.io/exempt-secure-defaults: created before encryption\nINSTALL_K3S_EXEC='server' sh i", False),
        (I.REMOTE_COMMAND, K3S_COMMAND_IN, "create", "sudo INSTALL_K3S_EXEC='agent' sh install.sh", False),
    ],
)
def test_one_field(type_, base, path, value, failed):
    assert findings([res(type_, "r", base)], policy=P) == set()  # the valid base passes
    got = findings([res(type_, "r", with_(base, path, value))], policy=P)
    assert got == ({(P, "r", "mandatory")} if failed else set())


def test_eks_public_endpoint_message():
    (message,) = messages([res(I.EKS_CLUSTER, "r", with_(EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0"]))], P)
    assert message.endswith("public API endpoint: vpcConfig.publicAccessCidrs open to the internet (0.0.0.0/0: more than a /8's worth "
                            "of public addresses): set vpcConfig.publicAccessCidrs to your networks, or endpointPublicAccess=false")


def test_gpufleet_k3s_plan_passes(dev_plan):
    assert [v for v in dev_plan.violations if v.policy == P] == []


def test_command_environment_findings_come_in_name_order():
    """A map's order does not survive the wire (the engine's Struct is a hash map): the findings on a
    command's environment are listed by variable name, whatever order the program wrote them in."""
    env = {"ZED": "K3S_TOKEN=abc", "ALPHA": "K3S_TOKEN=def", "K3S_TOKEN": "ghi"}
    found = messages([res(I.REMOTE_COMMAND, "r", with_(K3S_COMMAND_IN, "environment", env))], P)
    assert [m.splitlines()[-1].split(" contains ")[0] for m in found] == ["environment.ALPHA", "environment.K3S_TOKEN", "environment.ZED"]


# Ingress open to the internet, judged by what the blocks cover (gpufleet/base/cidrs.py): the resource types a
# program writes security groups and firewall rules with. Each base passes; one field changes per row.
SECURITY_GROUP_IN = {
    "vpcId": "vpc-0abc",
    "ingress": [{"protocol": "tcp", "fromPort": 443.0, "toPort": 443.0, "cidrBlocks": ["203.0.113.0/24"]},
                {"protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "self": True}],
    "egress": [{"protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "cidrBlocks": ["0.0.0.0/0"]}],
}
SECURITY_GROUP_RULE_IN = {"type": "ingress", "securityGroupId": "sg-1", "protocol": "tcp", "fromPort": 22.0, "toPort": 22.0,
                          "cidrBlocks": ["203.0.113.0/24"]}
INGRESS_RULE_IN = {"securityGroupId": "sg-1", "ipProtocol": "tcp", "fromPort": 22.0, "toPort": 22.0, "cidrIpv4": "203.0.113.0/24"}
FIREWALL_IN = {"network": "net", "direction": "INGRESS", "sourceRanges": ["192.168.0.0/16"],
               "allows": [{"protocol": "tcp", "ports": ["0-65535"]}]}
SPLIT = ["0.0.0.0/1", "128.0.0.0/1"]


@pytest.mark.parametrize(
    "type_,base,path,value,failed",
    [
        # control planes: the same lists, spelled otherwise
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", SPLIT, True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["::/1", "8000::/1"], True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["::ffff:0.0.0.0/96"], True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["1.2.3.4/0"], True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["0.0.0.0/0 "], True),  # cannot be judged
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["000.0.0.0/0"], True),
        (I.EKS_CLUSTER, EKS_CLUSTER_IN, "vpcConfig.publicAccessCidrs", ["10.0.0.0/8", "203.0.113.0/24"], False),
        (I.EKS_CLUSTER, with_(EKS_CLUSTER_IN, "vpcConfig.endpointPublicAccess", False), "vpcConfig.publicAccessCidrs", SPLIT, False),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig.cidrBlocks", [{"cidrBlock": c} for c in SPLIT], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig.cidrBlocks", [{"cidrBlock": "0.0.0.0/1"}], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig.cidrBlocks", [{"displayName": "no block"}], True),
        (I.GKE_CLUSTER, GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig.cidrBlocks",
         [{"cidrBlock": c} for c in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")], False),
        # security groups and their rules
        (I.EC2_SECURITY_GROUP, SECURITY_GROUP_IN, "ingress.0.cidrBlocks", ["0.0.0.0/0"], True),
        (I.EC2_SECURITY_GROUP, SECURITY_GROUP_IN, "ingress.0.cidrBlocks", SPLIT, True),
        (I.EC2_SECURITY_GROUP, SECURITY_GROUP_IN, "ingress.0.ipv6CidrBlocks", ["::/0"], True),
        (I.EC2_SECURITY_GROUP, SECURITY_GROUP_IN, "ingress.0.cidrBlocks", ["0.0.0.0/0\n"], True),
        (I.EC2_SECURITY_GROUP, SECURITY_GROUP_IN, "egress.0.cidrBlocks", SPLIT, False),  # egress is not judged
        (I.EC2_SECURITY_GROUP_RULE, SECURITY_GROUP_RULE_IN, "cidrBlocks", SPLIT, True),
        (I.EC2_SECURITY_GROUP_RULE, SECURITY_GROUP_RULE_IN, "ipv6CidrBlocks", ["::/0"], True),
        (I.EC2_SECURITY_GROUP_RULE, with_(SECURITY_GROUP_RULE_IN, "type", "egress"), "cidrBlocks", ["0.0.0.0/0"], False),
        (I.VPC_INGRESS_RULE, INGRESS_RULE_IN, "cidrIpv4", "0.0.0.0/0", True),
        (I.VPC_INGRESS_RULE, INGRESS_RULE_IN, "cidrIpv6", "::/0", True),
        (I.VPC_INGRESS_RULE, INGRESS_RULE_IN, "cidrIpv4", "0.0.0.0/1", True),
        (I.VPC_INGRESS_RULE, INGRESS_RULE_IN, "cidrIpv4", DELETE, False),  # e.g. from another group
        # firewall rules
        (I.GCE_FIREWALL, FIREWALL_IN, "sourceRanges", SPLIT, True),
        (I.GCE_FIREWALL, FIREWALL_IN, "sourceRanges", ["::/0"], True),
        (I.GCE_FIREWALL, FIREWALL_IN, "sourceRanges", DELETE, True),  # GCE's default source: 0.0.0.0/0
        (I.GCE_FIREWALL, with_(FIREWALL_IN, "sourceTags", ["gpu"]), "sourceRanges", DELETE, False),
        (I.GCE_FIREWALL, FIREWALL_IN, "direction", "EGRESS", False),
        (I.GCE_FIREWALL, with_(FIREWALL_IN, "disabled", True), "sourceRanges", ["0.0.0.0/0"], False),
        (I.GCE_FIREWALL, with_(FIREWALL_IN, "allows", []), "sourceRanges", ["0.0.0.0/0"], False),  # a deny rule
    ],
)
def test_world_open_by_coverage(type_, base, path, value, failed):
    test_one_field(type_, base, path, value, failed)


def test_world_open_messages_name_the_field_and_the_blocks():
    found = messages([res(I.EC2_SECURITY_GROUP, "sg", with_(SECURITY_GROUP_IN, "ingress.0.cidrBlocks", SPLIT)),
                      res(I.GCE_FIREWALL, "fw", with_(FIREWALL_IN, "sourceRanges", ["000.0.0.0/0"]))], P)
    assert sorted(m.splitlines()[-1] for m in found) == [
        "ingress[0] (cidrBlocks, ipv6CidrBlocks) open to the internet (0.0.0.0/1, 128.0.0.0/1: more than a /8's worth of "
        "public addresses): admit your networks or other security groups only",
        "sourceRanges: '000.0.0.0/0' is not a CIDR block: cannot judge who it admits: admit your networks, tags or "
        "service accounts only",
    ]


@pytest.mark.parametrize("stack", ["prod-eks", "p5-efa", "prod-gke", "dws-gke", "ai-on-eks"])
def test_gpufleet_security_groups_and_firewalls_pass(stack):
    """What gpufleet itself writes (the FSx and EFA groups, the GPUDirect firewall rules) admits no one from outside."""
    from tests.helpers import example, plan

    result = plan(example(stack))
    assert [v for v in result.violations if v.policy == P] == []


# Serving endpoints (issue 48): internal load balancers, routes from named namespaces, model servers behind a key. Each
# base is what gpufleet writes (tests/upstream/test_serving_upstream.py checks the plan has these shapes) and passes.
from gpufleet.policies.rules import secure_defaults as SD  # noqa: E402

GATEWAY_IN = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
              "metadata": {"name": "inference-gateway", "namespace": "gpufleet-serving"},
              "spec": {"gatewayClassName": "gke-l7-rilb", "listeners": [
                  {"name": "http", "protocol": "HTTP", "port": 80.0, "allowedRoutes": {"namespaces": {
                      "from": "Selector", "selector": {"matchExpressions": [
                          {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["serving"]}]}}}}]}}
CLASS_IN = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "envoy"},
            "spec": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller", "parametersRef": {
                "group": "gateway.envoyproxy.io", "kind": "EnvoyProxy", "name": "gpufleet-serving",
                "namespace": "envoy-gateway-system"}}}
PROXY_IN = {"apiVersion": "gateway.envoyproxy.io/v1alpha1", "kind": "EnvoyProxy",
            "metadata": {"name": "gpufleet-serving", "namespace": "envoy-gateway-system"},
            "spec": {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": {"type": "LoadBalancer", "annotations": {
                "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
                "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}}}}}}
SERVICE_IN = {"metadata": {"name": "api", "namespace": "serving"},
              "spec": {"type": "ClusterIP", "ports": [{"port": 8000.0}], "selector": {"app": "api"}}}
KEY_ENV = [{"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": "vllm-api-key", "key": "api-key"}}}]
LWS_IN = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
          "metadata": {"name": "qwen3-8b", "namespace": "serving"},
          "spec": {"replicas": 1.0, "leaderWorkerTemplate": {"size": 1.0, "workerTemplate": {"spec": {"containers": [
              {"name": "vllm", "image": "vllm/vllm-openai", "command": ["sh", "-c", "vllm serve Qwen/Qwen3-8B --port 8000"],
               "env": KEY_ENV}]}}}}}
DEPLOYMENT_IN = {"metadata": {"name": "vllm", "namespace": "serving"}, "spec": {"template": {"spec": {"containers": [
    {"name": "vllm", "image": "vllm/vllm-openai", "args": ["--model", "m"],
     "command": ["python3", "-m", "vllm.entrypoints.openai.api_server"], "env": KEY_ENV}]}}}}
INTERNET = "service.beta.kubernetes.io/aws-load-balancer-scheme"
ENVOY_SERVICE = "spec.provider.kubernetes.envoyService"
# agentgateway (issue 52): the Gateway names an AgentgatewayParameters whose Service is internal.
AGW_GATEWAY_IN = with_(with_(GATEWAY_IN, "spec.gatewayClassName", "agentgateway"), "spec.infrastructure", {
    "parametersRef": {"group": "agentgateway.dev", "kind": "AgentgatewayParameters", "name": "gpufleet-serving"}})
AGW_PARAMS_IN = {"apiVersion": "agentgateway.dev/v1alpha1", "kind": "AgentgatewayParameters",
                 "metadata": {"name": "gpufleet-serving", "namespace": "gpufleet-serving"},
                 "spec": {"service": {"metadata": {"annotations": {
                     "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
                     "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}}, "spec": {"type": "LoadBalancer"}}}}


@pytest.mark.parametrize(
    "type_,base,path,value,failed",
    [
        (SD.GATEWAY, GATEWAY_IN, "spec.gatewayClassName", "gke-l7-regional-external-managed", True),
        (SD.GATEWAY, GATEWAY_IN, "spec.gatewayClassName", "gke-l7-global-external-managed", True),
        (SD.GATEWAY, GATEWAY_IN, "spec.gatewayClassName", "envoy", False),
        (SD.GATEWAY, GATEWAY_IN, "spec.listeners.0.allowedRoutes.namespaces.from", "All", True),
        (SD.GATEWAY, GATEWAY_IN, "spec.listeners.0.allowedRoutes", {"namespaces": {"from": "Same"}}, False),
        (SD.GATEWAY, GATEWAY_IN, "spec.listeners.0.allowedRoutes", DELETE, False),  # Gateway API's default: Same
        (SD.GATEWAY, with_(GATEWAY_IN, "metadata.annotations", {"gpufleet.io/exempt-secure-defaults": "public demo"}),
         "spec.gatewayClassName", "gke-l7-gxlb", False),  # external on purpose, with its reason
        (SD.GATEWAY_CLASS, CLASS_IN, "spec.parametersRef", DELETE, True),
        (SD.GATEWAY_CLASS, with_(CLASS_IN, "spec.controllerName", "example.net/gateway"), "spec.parametersRef", DELETE, False),
        (SD.ENVOY_PROXY, PROXY_IN, f"{ENVOY_SERVICE}.annotations", DELETE, True),
        (SD.GATEWAY, AGW_GATEWAY_IN, "spec.infrastructure", DELETE, True),  # agentgateway's default: a LoadBalancer
        (SD.AGENTGATEWAY_PARAMETERS, AGW_PARAMS_IN, "spec.service.metadata", DELETE, True),
        # No type: agentgateway's default, a LoadBalancer (internal by its annotations; internet-facing without them).
        (SD.AGENTGATEWAY_PARAMETERS, AGW_PARAMS_IN, "spec.service.spec", DELETE, False),
        (SD.AGENTGATEWAY_PARAMETERS, with_(with_(AGW_PARAMS_IN, "spec.service.metadata", DELETE), "spec.service.spec",
                                           {"type": "ClusterIP"}), "spec.service.spec", DELETE, True),
        (SD.AGENTGATEWAY_PARAMETERS, AGW_PARAMS_IN, "spec.service", {"spec": {"type": "ClusterIP"}}, False),
        (SD.AGENTGATEWAY_PARAMETERS, AGW_PARAMS_IN, "spec.service.metadata.annotations",
         {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}, True),
        (SD.AGENTGATEWAY_PARAMETERS, with_(AGW_PARAMS_IN, "metadata.annotations", {
            "gpufleet.io/exempt-secure-defaults": "public demo"}), "spec.service.metadata", DELETE, False),
        (SD.ENVOY_PROXY, PROXY_IN, ENVOY_SERVICE, DELETE, True),  # Envoy Gateway's default: a LoadBalancer
        (SD.ENVOY_PROXY, PROXY_IN, ENVOY_SERVICE, {"type": "ClusterIP"}, False),
        (SD.ENVOY_PROXY, PROXY_IN, f"{ENVOY_SERVICE}.annotations", {INTERNET: "internet-facing",
         "service.beta.kubernetes.io/aws-load-balancer-internal": "true"}, True),  # the controller prefers the scheme
        (SD.ENVOY_PROXY, PROXY_IN, f"{ENVOY_SERVICE}.annotations",
         {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}, False),
        (SD.ENVOY_PROXY, PROXY_IN, f"{ENVOY_SERVICE}.annotations", {"networking.gke.io/load-balancer-type": "Internal"}, False),
        (SD.ENVOY_PROXY, PROXY_IN, f"{ENVOY_SERVICE}.annotations",
         {"service.beta.kubernetes.io/aws-load-balancer-internal": "false"}, True),
        (SD.SERVICE, SERVICE_IN, "spec.type", "LoadBalancer", True),
        (SD.SERVICE, with_(SERVICE_IN, "spec.loadBalancerSourceRanges", ["10.0.0.0/8"]), "spec.type", "LoadBalancer", False),
        (SD.SERVICE, with_(SERVICE_IN, "spec.loadBalancerSourceRanges", ["0.0.0.0/1", "128.0.0.0/1"]), "spec.type",
         "LoadBalancer", True),
        (SD.SERVICE, with_(SERVICE_IN, "spec.loadBalancerClass", SD.GKE_INTERNAL_LB_CLASS), "spec.type", "LoadBalancer", False),
        (SD.LEADER_WORKER_SET, LWS_IN, "spec.leaderWorkerTemplate.workerTemplate.spec.containers.0.env", DELETE, True),
        (SD.LEADER_WORKER_SET, LWS_IN, "spec.leaderWorkerTemplate.workerTemplate.spec.containers.0.env",
         [{"name": "VLLM_API_KEY", "value": "sk-plain"}], True),
        (SD.LEADER_WORKER_SET, LWS_IN, "spec.leaderWorkerTemplate.workerTemplate.spec.containers.0.command",
         ["sh", "-c", "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"], False),  # a worker serves nothing
        (SD.DEPLOYMENT, DEPLOYMENT_IN, "spec.template.spec.containers.0.env", DELETE, True),
        (SD.DEPLOYMENT, DEPLOYMENT_IN, "spec.template.spec.containers.0.args", ["--api-key", "sk-plain"], True),
        # --api-key from an environment variable the kubelet expands (from a Secret) passes; without it, no key.
        (SD.DEPLOYMENT, with_(with_(DEPLOYMENT_IN, "spec.template.spec.containers.0.env", DELETE),
                              "spec.template.spec.containers.0.args", ["--api-key", "$(VLLM_KEY_FROM_SECRET)"]),
         "spec.template.spec.containers.0.args", ["--model", "m"], True),
    ],
)
def test_serving_one_field(type_, base, path, value, failed):
    assert findings([res(type_, "r", base)], policy=P) == set()  # the valid base passes
    got = findings([res(type_, "r", with_(base, path, value))], policy=P)
    assert got == ({(P, "r", "mandatory")} if failed else set())


def test_serving_messages_name_the_field_and_the_fix():
    (message,) = messages([res(SD.GATEWAY, "r", with_(GATEWAY_IN, "spec.listeners.0.allowedRoutes.namespaces.from", "All"))], P)
    assert "listeners[0] (http) admits HTTPRoutes from every namespace" in message
    (message,) = messages([res(SD.LEADER_WORKER_SET, "r", with_(
        LWS_IN, "spec.leaderWorkerTemplate.workerTemplate.spec.containers.0.env", DELETE))], P)
    assert "spec.leaderWorkerTemplate.workerTemplate container vllm: vLLM's OpenAI server without an API key" in message


@pytest.mark.parametrize("stack", ["inference-eks", "inference-gke", "inference-k3s"])
def test_the_serving_examples_plan_no_secure_defaults_finding(stack):
    from tests.helpers import planned

    assert [v.message for v in planned(stack).violations if v.policy == P] == []


def test_gke_private_endpoint_turned_off_is_public():
    """enablePrivateEndpoint false keeps the public endpoint: without authorized networks it is open (issue 56: the
    private-endpoint test `is True` -> `is False` survived; only the true case was tested)."""
    public = with_(with_(GKE_CLUSTER_IN, "masterAuthorizedNetworksConfig", DELETE), "privateClusterConfig", {"enablePrivateEndpoint": False})
    (message,) = messages([res(I.GKE_CLUSTER, "r", public)], P)
    assert message.endswith("public control-plane endpoint with no masterAuthorizedNetworksConfig: anyone can reach the API server")


# Privileged and added-capability pods (any workload but DaemonSets): flagged unless the pod template says why in
# gpufleet.io/rdma-capabilities-reason, which gpufleet writes from serving.models[i].rdma.reason.
REASON_KEY = "gpufleet.io/rdma-capabilities-reason"
WORKER = "spec.leaderWorkerTemplate.workerTemplate"
VLLM = f"{WORKER}.spec.containers.0"
FIX = (f" without a recorded reason: drop it, or state why in the pod template's annotation {REASON_KEY}: <why> (a "
       "gpufleet stack: gpufleet:serving.models[i].rdma.reason)")
PRIVILEGED = {"privileged": True}
CAPS = {"capabilities": {"add": ["NET_ADMIN", "IPC_LOCK"]}}
RXDM = {"name": "rxdm", "image": "rxdm", "restartPolicy": "Always", "securityContext": CAPS}
LWS_TWO = with_(with_(LWS_IN, "spec.leaderWorkerTemplate.size", 2.0), "spec.leaderWorkerTemplate.leaderTemplate",
                LWS_IN["spec"]["leaderWorkerTemplate"]["workerTemplate"])
JOB_IN = {"metadata": {"name": "train"}, "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
    {"name": "trainer", "image": "pytorch", "command": ["torchrun", "train.py"]}]}}}}
JOBSET_IN = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "train"},
             "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2.0, "template": JOB_IN}]}}


@pytest.mark.parametrize(
    "type_,base,path,value,failed",
    [
        (SD.LEADER_WORKER_SET, LWS_IN, f"{VLLM}.securityContext", PRIVILEGED, True),
        (SD.LEADER_WORKER_SET, LWS_IN, f"{VLLM}.securityContext", {"privileged": False}, False),
        (SD.LEADER_WORKER_SET, LWS_IN, f"{VLLM}.securityContext", CAPS, True),
        (SD.LEADER_WORKER_SET, LWS_IN, f"{VLLM}.securityContext", {"capabilities": {"add": []}}, False),
        (SD.LEADER_WORKER_SET, LWS_IN, f"{VLLM}.securityContext", {"capabilities": {"drop": ["ALL"]}}, False),
        # Kubernetes' default for an unprivileged container anyway: not a grant by itself.
        (SD.LEADER_WORKER_SET, LWS_IN, f"{VLLM}.securityContext", {"allowPrivilegeEscalation": True}, False),
        (SD.LEADER_WORKER_SET, LWS_IN, f"{WORKER}.spec.initContainers", [RXDM], True),
        # The reason on the pod template passes; empty or blank is no reason; on the workload's own metadata it is not
        # the pod's (the resource-wide exemption is gpufleet.io/exempt-secure-defaults).
        (SD.LEADER_WORKER_SET, with_(LWS_IN, f"{WORKER}.metadata.annotations", {REASON_KEY: "GPUDirect-RDMA"}),
         f"{VLLM}.securityContext", PRIVILEGED, False),
        (SD.LEADER_WORKER_SET, with_(LWS_IN, f"{WORKER}.metadata.annotations", {REASON_KEY: " "}),
         f"{VLLM}.securityContext", PRIVILEGED, True),
        (SD.LEADER_WORKER_SET, with_(LWS_IN, "metadata.annotations", {REASON_KEY: "GPUDirect-RDMA"}),
         f"{VLLM}.securityContext", PRIVILEGED, True),
        (SD.LEADER_WORKER_SET, with_(LWS_IN, "metadata.annotations", {"gpufleet.io/exempt-secure-defaults": "lab"}),
         f"{VLLM}.securityContext", PRIVILEGED, False),
        (SD.LEADER_WORKER_SET, LWS_TWO, "spec.leaderWorkerTemplate.leaderTemplate.spec.containers.0.securityContext",
         CAPS, True),
        (SD.DEPLOYMENT, DEPLOYMENT_IN, "spec.template.spec.containers.0.securityContext", PRIVILEGED, True),
        (SD.DEPLOYMENT, with_(DEPLOYMENT_IN, "spec.template.metadata.annotations", {REASON_KEY: "RoCE"}),
         "spec.template.spec.containers.0.securityContext", CAPS, False),
        (SD.STATEFUL_SET, DEPLOYMENT_IN, "spec.template.spec.initContainers", [RXDM], True),
        (SD.JOB, JOB_IN, "spec.template.spec.containers.0.securityContext", CAPS, True),
        (SD.JOB_SET, JOBSET_IN, "spec.replicatedJobs.0.template.spec.template.spec.containers.0.securityContext",
         PRIVILEGED, True),
        (SD.JOB_SET, with_(JOBSET_IN, "spec.replicatedJobs.0.template.spec.template.metadata.annotations",
                           {REASON_KEY: "NCCL over RoCE pins memory"}),
         "spec.replicatedJobs.0.template.spec.template.spec.containers.0.securityContext", CAPS, False),
        # A Job is judged for privileges only: a vLLM server's API key is judged in the serving workloads.
        (SD.JOB, JOB_IN, "spec.template.spec.containers.0.command", ["vllm", "serve", "m"], False),
        # DaemonSets are not judged (node agents run privileged by design).
        ("kubernetes:apps/v1:DaemonSet", DEPLOYMENT_IN, "spec.template.spec.containers.0.securityContext", PRIVILEGED,
         False),
    ],
)
def test_privileges_one_field(type_, base, path, value, failed):
    assert findings([res(type_, "r", base)], policy=P) == set()  # the valid base passes
    got = findings([res(type_, "r", with_(base, path, value))], policy=P)
    assert got == ({(P, "r", "mandatory")} if failed else set())


def bare(resources: list) -> list[str]:
    """The rule's messages without the policy description the SDK puts before each."""
    return [m.split("\n", 1)[-1] for m in messages(resources, P)]


def test_privilege_messages_name_the_container_what_and_the_fix():
    lws = with_(with_(LWS_TWO, f"{VLLM}.securityContext", {**PRIVILEGED, "allowPrivilegeEscalation": True, **CAPS}),
                f"{WORKER}.spec.initContainers", [RXDM, {**RXDM, "name": "plain", "securityContext": {}}])
    lws = with_(lws, "spec.leaderWorkerTemplate.leaderTemplate.spec.containers.0.securityContext", PRIVILEGED)
    assert bare([res(SD.LEADER_WORKER_SET, "r", lws)]) == [
        "spec.leaderWorkerTemplate.leaderTemplate container vllm: runs with privileged" + FIX,
        f"{WORKER} init container rxdm: runs with capabilities NET_ADMIN, IPC_LOCK" + FIX,
        f"{WORKER} container vllm: runs with privileged; allowPrivilegeEscalation; capabilities NET_ADMIN, IPC_LOCK" + FIX,
    ]
    jobset = with_(JOBSET_IN, "spec.replicatedJobs.0.template.spec.template.spec.containers.0.securityContext", CAPS)
    assert bare([res(SD.JOB_SET, "r", jobset)]) == [
        "spec.replicatedJobs[0] (workers).template.spec.template container trainer: runs with capabilities NET_ADMIN, "
        "IPC_LOCK" + FIX]


def test_the_reason_key_is_the_one_gpufleet_writes():
    from gpufleet.base import labels

    assert REASON_KEY == labels.RDMA_CAPABILITIES_REASON
