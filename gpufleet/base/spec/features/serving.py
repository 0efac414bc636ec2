"""gpufleet:serving — inference serving: multi-node model servers (LeaderWorkerSet), a Gateway, the Inference
Extension's InferencePool and endpoint picker, and scaling on the model server's own metrics (docs/inference.md).

Facts behind the checks, each with its source:
- GKE's gateway classes that route to an InferencePool: `gke-l7-regional-external-managed` and `gke-l7-rilb` (GKE,
  "Deploy GKE Inference Gateway", cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway; the
  same two in llm-d.ai/docs/resources/gateway/gke). The Kubernetes minor GKE needs for them and the Inference Extension
  releases its controller routes for are GKE's traits (gpufleet/base/platforms/gke/scheduling.py).
- agentgateway (versions.AGENTGATEWAY) implements InferencePool v1 (the Inference Extension's guides at the pinned
  release list it beside GKE, Istio and NGINX Gateway Fabric, site-src/guides/index.md; its go.mod pins the same Gateway
  API and Inference Extension releases gpufleet installs). It is the default gateway where the platform has no managed
  one: docs/inference.md ("Which gateway") has the comparison with Istio and Envoy AI Gateway.
- Envoy Gateway (versions.ENVOY_GATEWAY) has no InferencePool backend of its own: at the pinned tag the word appears only in
  examples/extension-server (an extension server such as Envoy AI Gateway adds it), and the Inference Extension's
  the pinned release guides (site-src/guides/index.md) list GKE, Istio, Agentgateway and NGINX Gateway Fabric, not Envoy Gateway.
  So on the `envoy` class the HTTPRoute goes to the model servers' Service and no endpoint picker runs.
- The metric names: the Inference Extension the pinned release model-server protocol
  (docs/proposals/003-model-server-protocol/README.md at the tag): vLLM's queue `vllm:num_requests_waiting`, KV-cache
  `vllm:kv_cache_usage_perc` (vLLM's older `vllm:gpu_cache_usage_perc` is what the EPP no longer reads).
- Scale to zero: the endpoint picker's Flow Control layer holds requests while no model server is ready and exports
  its queue depth (FLOW_CONTROL_QUEUE_METRIC) for KEDA (site-src/guides/flow-control.md at the pinned release, "Autoscaling:
  KEDA and Scale-to-Zero"; kubernetes-sigs/gateway-api-inference-extension#1952). Without an endpoint picker nothing
  holds a request: a Service with no ready endpoint refuses it.
- Exposure (issue 48): internal unless the stack says `gateway.exposure: external` with a reason. GKE's classes decide
  it by name (GKE "GatewayClass capabilities", docs.cloud.google.com/kubernetes-engine/docs/how-to/gatewayclass-capabilities:
  the `-external-` and `gxlb` classes are internet-facing, `rilb` and `cross-regional-internal` internal); on Envoy
  Gateway the proxy's Service does, which is each platform's trait (`gateway_service`). HTTPS needs a certificate,
  which no platform hands out without one named: `gateway.tls.certificateSecret` (a kubernetes.io/tls Secret; GKE
  "Secure a Gateway", docs.cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway; Gateway API
  `listeners[].tls.certificateRefs`), required for an external endpoint.
- The model server's API key: vLLM checks `Authorization: Bearer <key>` on every path under /v1 when `--api-key` or the
  `VLLM_API_KEY` environment variable is set (vllm/entrypoints/openai/api_server.py, `args.api_key or
  envs.VLLM_API_KEY`; /health and /metrics stay open, so probes, the endpoint picker and scrapers need no key).
"""

from typing import Annotated, Any, Literal, Optional

from pydantic import Field

from gpufleet.base import platforms, versions
from gpufleet.base.spec import ids
from gpufleet.base.spec.base import DNS_LABEL, LABEL_KEY, LABEL_VALUE, Model
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
AT = f"{NS}:serving"

# Gateway classes that can carry the serving path (see the module docstring). Which of them a platform provides, and
# which Inference Extension releases its controller routes for, are the platform's scheduling traits
# (`gateway_classes`, `inference_extension_releases`: gpufleet/base/platforms/<name>/scheduling.py). `envoy` is the
# GatewayClass gpufleet creates for Envoy Gateway on the platforms without a managed one.
ENVOY_CLASS = "envoy"
# Envoy Gateway's controller name: the chart's `config.envoyGateway.gateway.controllerName` default (values.yaml at
# the pinned chart, versions.ENVOY_GATEWAY).
ENVOY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
# agentgateway (versions.AGENTGATEWAY): the GatewayClass its controller creates and owns (wellknown.DefaultAgwClassName
# and controllerName in controller/pkg/wellknown/controller.go at the pinned tag; gpufleet creates no GatewayClass for
# it), routing to an InferencePool with the chart's `inferenceExtension.enabled` (env AGW_ENABLE_INFER_EXT).
AGENTGATEWAY_CLASS = "agentgateway"
AGENTGATEWAY_CONTROLLER = "agentgateway.dev/agentgateway"
# The classes whose controller routes to an InferencePool (an endpoint picker runs for them): GKE's Inference Gateway,
# and agentgateway where gpufleet installs it (EKS, k3s, AKS, existing).
GKE_INFERENCE_POOL_CLASSES = ("gke-l7-regional-external-managed", "gke-l7-rilb")
INFERENCE_POOL_CLASSES = (*GKE_INFERENCE_POOL_CLASSES, AGENTGATEWAY_CLASS)
# What the gateways gpufleet installs route for (go.mod at their pinned tags, gpufleet/base/versions.py), by class: the
# platforms that offer the class declare these as their `inference_extension_releases`.
AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES = (versions.AGENTGATEWAY_INFERENCE_EXTENSION,)
# The classes whose load balancer is a regional Envoy-based one, which needs an active proxy-only subnet
# (purpose REGIONAL_MANAGED_PROXY) in the Gateway's region and VPC: GKE "Deploying Gateways" (docs.cloud.google.com/
# kubernetes-engine/docs/how-to/deploying-gateways, "Configure a proxy-only subnet": required by the regional external
# and internal classes) and "Proxy-only subnets for Envoy-based load balancers" (docs.cloud.google.com/load-balancing/
# docs/proxy-only-subnets: one active REGIONAL_MANAGED_PROXY subnet per network and region, shared by every regional
# Envoy-based load balancer there).
REGIONAL_PROXY_CLASSES = ("gke-l7-regional-external-managed", "gke-l7-rilb")
# GKE's classes whose load balancer is internet-facing, and those reachable only from the VPC (GKE "GatewayClass
# capabilities", docs.cloud.google.com/kubernetes-engine/docs/how-to/gatewayclass-capabilities). A class in neither
# (`envoy`) is as internal as the Service its controller publishes it through.
EXTERNAL_CLASSES = ("gke-l7-global-external-managed", "gke-l7-global-external-managed-mc",
                    "gke-l7-regional-external-managed", "gke-l7-regional-external-managed-mc", "gke-l7-gxlb",
                    "gke-l7-gxlb-mc")
INTERNAL_CLASSES = ("gke-l7-rilb", "gke-l7-rilb-mc", "gke-l7-cross-regional-internal-managed-mc")
# The vLLM API key's default Secret and key in each model namespace (created by the operator, never by gpufleet, so
# the key never passes through the stack file or Pulumi's state).
API_KEY_SECRET = "vllm-api-key"
API_KEY_KEY = "api-key"
# A Secret's data key (k8s.io/apimachinery IsConfigMapKey).
SECRET_KEY = r"^[-._a-zA-Z0-9]+$"
# A reason gpufleet writes as an annotation and policy messages echo: printable, one line.
REASON = r"^[^\x00-\x1f\x7f]*\S[^\x00-\x1f\x7f]*$"


# What each endpoint picker requests: the picker chart's default (the router library's values.yaml
# `epp.resources.requests` at versions.ENDPOINT_PICKER: cpu "8", memory 8Gi, memory limit 16Gi, no CPU limit; gpufleet
# does not override it), one pod per InferencePool (`epp.replicas: 1`), on the system nodes.
# tests/upstream/test_serving_upstream.py reads the archive.
EPP_REQUESTS = {"cpu": "8", "memory": "8Gi"}


def _traits(platform: str):
    return platforms.get(platform).scheduling


def resolved_class(spec: Any) -> str:
    """The GatewayClass of the stack's serving Gateway (`className`, or what `auto` picks on the platform)."""
    return spec.serving.gateway.resolved(spec.cluster.platform)


def routes_to_inference_pool(spec: Any) -> bool:
    """Whether the serving Gateway's class routes to an InferencePool (an endpoint picker runs per model server)."""
    return resolved_class(spec) in INFERENCE_POOL_CLASSES


def needs_proxy_only_subnet(spec: Any) -> bool:
    """Whether the stack's Gateway is a regional Envoy-based load balancer (REGIONAL_PROXY_CLASSES)."""
    return spec.serving.enabled and resolved_class(spec) in REGIONAL_PROXY_CLASSES


# The metrics a model server exports, by server type, and the scaling signals gpufleet maps to them. vLLM at
# versions.VLLM_IMAGE exports all three (vllm/v1/metrics/loggers.py of the PyPI wheel of versions.VLLM_VERSION,
# cp38-abi3-manylinux_2_28_x86_64, sha256 4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa, lines 528,
# 538, 620: gauges vllm:num_requests_running, vllm:num_requests_waiting, vllm:kv_cache_usage_perc; the deprecated
# vllm:gpu_cache_usage_perc is gone there). The endpoint picker reads the same three for a vLLM server (PICKER_READS).
EXPORTED_METRICS = {"vllm": ("vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:num_requests_running")}
# What the endpoint picker scrapes from a vLLM server: llm-d/llm-d-router at versions.ENDPOINT_PICKER,
# pkg/epp/framework/plugins/datalayer/extractor/metrics/factories.go lines 92-94 (QueuedRequestsSpec,
# RunningRequestsSpec, KVUsageSpec) and pkg/epp/server/options.go lines 143-145. A server that does not export them
# breaks routing: tests/unit/test_serving_metrics.py checks them against EXPORTED_METRICS.
PICKER_READS = {"vllm": ("vllm:num_requests_waiting", "vllm:num_requests_running", "vllm:kv_cache_usage_perc")}
SIGNALS = {"queue": "vllm:num_requests_waiting", "kvCache": "vllm:kv_cache_usage_perc"}
# The endpoint picker's flow-control queue depth (labels include inference_pool): llm-d-router's canonical name at
# versions.ENDPOINT_PICKER (docs/metrics.md "flow_control_queue_size" under the `llm_d_epp_` subsystem; the older
# `inference_extension_` twin is still emitted there but deprecated).
FLOW_CONTROL_QUEUE_METRIC = "llm_d_epp_flow_control_queue_size"
# Pod labels: Kubernetes label keys and values (k8s.io/apimachinery validation, 63-character values).
Labels = dict[Annotated[str, Field(pattern=LABEL_KEY, max_length=316)], Annotated[str, Field(pattern=LABEL_VALUE, max_length=63)]]
# A Prometheus metric name (prometheus.io/docs/concepts/data_model: [a-zA-Z_:][a-zA-Z0-9_:]*).
METRIC_NAME = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"


class TlsSpec(Model):
    certificate_secret: str = Field(pattern=DNS_LABEL, max_length=253)
    """A kubernetes.io/tls Secret in the Gateway's namespace (gpufleet-serving) holding the certificate and key the
    Gateway's HTTPS listener (port 443) presents; you create it (cert-manager or your CA). No default."""


class GatewaySpec(Model):
    class_name: str = Field(default="auto", pattern=DNS_LABEL, max_length=63)
    """The GatewayClass of the serving Gateway. auto: on GKE gke-l7-rilb (regional internal Application Load Balancer),
    or gke-l7-regional-external-managed with exposure: external; `agentgateway` (InferencePool and endpoint picker) on
    EKS, k3s, AKS and existing clusters, where `envoy` (Envoy Gateway to a Service, no picker) is offered too."""
    inference_extension: str = Field(default=versions.INFERENCE_EXTENSION, pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+$")
    """The Inference Extension release the gateway must route for; checked against what the class supports."""
    exposure: Literal["internal", "external"] = "internal"
    """internal (default): reachable from the cluster's network only (GKE's internal class; Envoy's Service internal
    on EKS and AKS, ClusterIP on k3s). external: from the internet, only with `externalReason` and `tls`."""
    external_reason: Optional[str] = Field(default=None, pattern=REASON, max_length=200)
    """Why the endpoint faces the internet, recorded on the Gateway as its secure-defaults exemption. Required with
    exposure: external; refused otherwise."""
    tls: Optional[TlsSpec] = None
    """HTTPS on 443 with a certificate you provide; default: none (HTTP on 80, inside the network only)."""

    def resolved(self, platform: str) -> str:
        if self.class_name != "auto":
            return self.class_name
        fitting = [c for c in _traits(platform).gateway_classes if fits_exposure(c, self.exposure)]
        return (fitting or [ENVOY_CLASS])[0]


def fits_exposure(gateway_class: str, exposure: str) -> bool:
    """Whether a class can carry a Gateway of this exposure: GKE's classes are one or the other by name; a class in
    neither list is as exposed as its Service."""
    if gateway_class in EXTERNAL_CLASSES:
        return exposure == "external"
    if gateway_class in INTERNAL_CLASSES:
        return exposure == "internal"
    return True


class ApiKeySpec(Model):
    secret_name: str = Field(default=API_KEY_SECRET, pattern=DNS_LABEL, max_length=253)
    """The Secret in each model namespace whose key the model servers require (`Authorization: Bearer <key>`); you
    create it. Default: vllm-api-key."""
    key: str = Field(default=API_KEY_KEY, pattern=SECRET_KEY, max_length=253)
    """The Secret's data key holding the API key. Default: api-key."""


class InferencePoolSpec(Model):
    selector: Labels = {}
    """Pod labels the pool selects; default: the model server's `app` label (`app: <model name>`)."""
    flow_control: bool = True
    """The endpoint picker's Flow Control layer (queues requests centrally; needed for scale to zero)."""
    profile: Literal["default", "pd"] = "default"
    """The picker's scheduling profiles: default (queue, KV-cache and prefix-cache scorers), or pd (llm-d's
    prefill/decode disaggregation: a prefill and a decode profile, each filtering its role; needs `roles`)."""


class ScalingSpec(Model):
    signal: str = Field(default="queue", pattern=METRIC_NAME, max_length=200)
    """queue (vllm:num_requests_waiting per replica), kvCache (vllm:kv_cache_usage_perc), or an exported metric name."""
    target: float = Field(default=5, gt=0)
    """The per-replica value KEDA scales out above (queue: waiting requests; kvCache: a fraction, 0-1)."""
    min_replicas: int = Field(default=1, ge=0, le=1000)
    """0 only where a router holds requests while no replica runs (a gateway class with an endpoint picker)."""
    max_replicas: int = Field(default=2, ge=1, le=1000)


# A Kubernetes quantity as gpufleet accepts it for a server's requests: a whole or decimal number with an optional
# binary or decimal suffix (k8s.io/apimachinery resource.Quantity; "500m" CPU, "64Gi" memory).
QUANTITY = r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$"
# One engine argument: printable, one line (argv, never shell text).
ENGINE_ARG = r"^[^\x00-\x1f\x7f]{1,512}$"
# The Hugging Face token's default key in its Secret: the name llm-d's model service reads (llm-d-modelservice v0.4.12
# templates/_helpers.tpl "hfEnv": env HF_TOKEN from secretKeyRef key HF_TOKEN), which huggingface_hub reads as HF_TOKEN.
HF_TOKEN_KEY = "HF_TOKEN"
# Hugging Face organisations whose models are gated (the hub serves their files only to an account that accepted the
# licence, with its token): meta-llama (every Llama model page, e.g. huggingface.co/meta-llama/Llama-3.3-70B-Instruct,
# "You need to agree to share your contact information to access this model"). Another gated model is declared with
# `gated: true`.
GATED_PREFIXES = ("meta-llama/",)


class ResourcesSpec(Model):
    cpu: Optional[str] = Field(default=None, pattern=QUANTITY, max_length=32)
    """CPU each pod requests (e.g. "32"); default: none requested."""
    memory: Optional[str] = Field(default=None, pattern=QUANTITY, max_length=32)
    """Memory each pod requests, and its limit (e.g. "256Gi"); default: none."""
    ephemeral_storage: Optional[str] = Field(default=None, pattern=QUANTITY, max_length=32)
    """Ephemeral storage each pod requests (weights downloaded to the container's disk); default: none."""


class SecretKeySpec(Model):
    secret_name: str = Field(pattern=DNS_LABEL, max_length=253)
    """A Secret in the model's namespace; you create it (the token never passes through the stack or Pulumi's state)."""
    key: str = Field(default=HF_TOKEN_KEY, pattern=SECRET_KEY, max_length=253)
    """The Secret's data key. Default: HF_TOKEN."""


class ParallelismSpec(Model):
    tensor: int = Field(ge=1, le=72)
    """vLLM --tensor-parallel-size: GPUs one shard of the model spans, inside a pod."""
    pipeline: int = Field(default=1, ge=1, le=72)
    """--pipeline-parallel-size: stages, one per pod of a replica (over Ray). Default 1."""
    data: int = Field(default=1, ge=1, le=1024)
    """--data-parallel-size: engine ranks of one replica; with more than one pod, spread over its pods (vLLM's
    multi-node data parallel: the leader serves, the workers run --headless). Default 1."""
    expert: bool = False
    """--enable-expert-parallel (MoE experts spread over the TP x DP ranks, the wide expert-parallel layout)."""


class PlacementSpec(Model):
    level: str = Field(pattern=LABEL_KEY, max_length=316)
    """A level of the pool's Kueue Topology (gpufleet:addons.kueue.topology.pools; e.g. nvidia.com/gpu.clique, the
    NVLink domain, or cloud.google.com/gce-topology-block) every pod of one replica lands in."""
    required: bool = True
    """true: Kueue admits a replica only inside one domain of the level (podset-required-topology); false: it prefers
    one (podset-preferred-topology). Default: required."""


class RdmaSpec(Model):
    capabilities: list[Literal["IPC_LOCK", "NET_ADMIN", "NET_BIND_SERVICE"]] = Field(default=[], max_length=3)
    """Linux capabilities granted for RDMA. IPC_LOCK, on the server container, lets it pin (register) memory for the
    NIC beyond the memlock limit, as the NVIDIA Network Operator's RDMA test pod asks (rdma-gpu-test-pod1.yml at
    versions.NETWORK_OPERATOR: `capabilities.add: [IPC_LOCK]`) and GKE's GPUDirect-TCPX manifest gives its workload.
    NET_ADMIN and NET_BIND_SERVICE go to the receive-datapath manager sidecar of a GKE GPUDirect-TCPX/TCPXO pool, and
    only there (gpufleet/base/platforms/gke/gpudirect_pods.py). A pool whose interfaces need some of them refuses a
    model server without them (the platform's `serving_rdma_needs`). Default: none."""
    privileged: bool = False
    """Run the server container privileged: only where the pool's fabric needs it (GKE's GPUDirect-RDMA manifest for
    a3-ultragpu-8g runs its workload privileged); refused elsewhere. Default: false."""
    reason: Optional[str] = Field(default=None, pattern=REASON, max_length=200)
    """Why (required with capabilities or privileged): written on the pods as gpufleet.io/rdma-capabilities-reason."""


# The role label llm-d's picker filters prefill and decode pods by (llm-d-router docs/disaggregation.md at
# versions.ENDPOINT_PICKER: "By default, llm-d uses the label key `llm-d.ai/role`"; llm-d-modelservice sets it too).
ROLE_LABEL = "llm-d.ai/role"


class RoleSpec(Model):
    replicas: int = Field(default=1, ge=1, le=1000)
    """Replicas of this role (each a LeaderWorkerSet group) when it does not scale. Default 1."""
    scaling: Optional[ScalingSpec] = None
    """KEDA scaling of this role's LeaderWorkerSet on its own pods' metrics (a ScaledObject `<model>-<role>`), between
    minReplicas (at least 1) and maxReplicas; replaces `replicas`. Default: none (fixed at `replicas`)."""

    def bounds(self) -> tuple[int, int]:
        """(fewest, most) replicas of the role."""
        return (self.scaling.min_replicas, self.scaling.max_replicas) if self.scaling else (self.replicas, self.replicas)


ROLES = ("prefill", "decode")


class RolesSpec(Model):
    prefill: RoleSpec = RoleSpec()
    decode: RoleSpec = RoleSpec()
    kv_connector: Literal["NixlConnector"] = "NixlConnector"
    """vLLM's KV-transfer connector between the roles (`--kv-transfer-config`, kv_role kv_both on both); the decode
    pods' routing sidecar speaks it as `--kv-connector nixlv2` (llm-d-router docs/disaggregation.md, "KV Connector")."""


class ModelServerSpec(Model):
    name: str = Field(pattern=DNS_LABEL, max_length=40)
    """The model server's name (LeaderWorkerSet, Service, InferencePool)."""
    namespace: str = Field(default="serving", pattern=DNS_LABEL, max_length=63)
    pool: str = Field(pattern=DNS_LABEL, max_length=63)
    """The GPU node pool (nodePools[].name) its pods run on."""
    model: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]*$", max_length=256)
    """The model vLLM serves (a Hugging Face id or a path in a model cache)."""
    server: Literal["vllm"] = "vllm"
    nodes_per_replica: int = Field(default=1, ge=1, le=72)
    """Pods per model replica (LeaderWorkerSet size: one leader and nodes-1 workers, one per node)."""
    gpus_per_node: int = Field(default=1, ge=1, le=16)
    """GPUs each pod asks for (tensor parallel within a node)."""
    labels: Labels = {}
    """Extra pod labels."""
    compute_domain: Optional[Annotated[str, Field(pattern=DNS_LABEL, max_length=40)]] = None
    """On a DRA pool (nodePools[].allocation: dra): a ComputeDomain (gpufleet:dra.computeDomains) in the model's
    namespace whose IMEX channel every pod of a replica claims, so one replica spans an NVLink domain. Default: none."""
    inference_pool: InferencePoolSpec = InferencePoolSpec()
    scaling: Optional[ScalingSpec] = None
    """KEDA scaling on the server's metrics; default: none (fixed at one replica)."""
    image: Optional[str] = Field(default=None, pattern=ids.IMAGE_REF, max_length=255)
    """The server image; default: the pinned vLLM image (versions.VLLM_IMAGE), pulled from the mirror where one is set."""
    args: list[Annotated[str, Field(pattern=ENGINE_ARG)]] = Field(default=[], max_length=64)
    """Extra engine arguments appended to `vllm serve` (argv: no shell parses them); default: none."""
    resources: Optional[ResourcesSpec] = None
    """CPU, memory and ephemeral-storage requests of each pod; default: none (GPUs only)."""
    shm: Optional[str] = Field(default=None, pattern=QUANTITY, max_length=32)
    """Size of /dev/shm (a memory-backed emptyDir): needed by tensor parallelism; default: the runtime's (64Mi)."""
    hf_token: Optional[SecretKeySpec] = None
    """A Hugging Face token from a Secret (env HF_TOKEN), for gated models; default: none."""
    gated: Optional[bool] = None
    """Whether the model needs a Hugging Face token; default: known gated organisations (GATED_PREFIXES)."""
    parallelism: Optional[ParallelismSpec] = None
    """Tensor x pipeline x data parallelism; default: tensor = gpusPerNode, pipeline = nodesPerReplica."""
    placement: Optional[PlacementSpec] = None
    """Kueue Topology Aware Scheduling of each replica (the LeaderWorkerSet queued to the LocalQueue named after the
    pool, its leader and workers one PodSet group): a multi-node replica in one block or NVLink domain. Default: none
    (the scheduler places pods one by one)."""
    rdma: Optional[RdmaSpec] = None
    """On an RDMA pool (nodePools[].rdma: true) the pods always get the pool's RDMA interfaces (EKS: every EFA device
    of a node; k3s: the Network Operator's RDMA device and network); capabilities only when asked here, with a
    reason. Default: none."""
    roles: Optional[RolesSpec] = None
    """Prefill/decode disaggregation: a LeaderWorkerSet per role (`<name>-prefill`, `<name>-decode`, labelled
    llm-d.ai/role) with its own replicas, the KV connector on both, the routing sidecar in the decode pods; needs
    inferencePool.profile: pd. Default: none (one aggregated server)."""

    def parallel(self) -> ParallelismSpec:
        return self.parallelism or ParallelismSpec(tensor=self.gpus_per_node, pipeline=self.nodes_per_replica)

    def needs_token(self) -> bool:
        return self.gated if self.gated is not None else self.model.startswith(GATED_PREFIXES)

    def pod_labels(self) -> dict[str, str]:
        return {"app": self.name, **self.labels}

    def selector(self) -> dict[str, str]:
        return dict(self.inference_pool.selector) or {"app": self.name}


class ServingSpec(Model):
    enabled: bool = False
    gateway: GatewaySpec = GatewaySpec()
    api_key: ApiKeySpec = ApiKeySpec()
    """Every model server requires this API key (vLLM's VLLM_API_KEY from a secretKeyRef; the pod does not start
    without the Secret)."""
    models: list[ModelServerSpec] = Field(default=[], max_length=32)


def check(stack: str, spec) -> list[Problem]:
    """Every problem of the serving block, each naming its key."""
    serving = spec.serving
    if not serving.enabled:
        return [Problem(stack, f"{AT}.models", "models listed but serving is not enabled: set serving.enabled: true")] \
            if serving.models else []
    platform = spec.cluster.platform
    traits = _traits(platform)
    problems: list[Problem] = []
    klass = resolved_class(spec)
    provided = traits.gateway_classes
    if klass not in provided:
        problems.append(Problem(stack, f"{AT}.gateway.className", f"{platform} provides no such gateway class for "
                                f"serving (allowed: auto, {', '.join(provided)})", klass))
    problems += traits.gateway_problems(stack, spec, klass)
    problems += _exposure(stack, serving.gateway, klass)
    ext = serving.gateway.inference_extension
    supported = traits.inference_extension_releases
    pooled = routes_to_inference_pool(spec)
    if ext != versions.INFERENCE_EXTENSION:
        problems.append(Problem(stack, f"{AT}.gateway.inferenceExtension", f"gpufleet installs the Inference Extension "
                                f"{versions.INFERENCE_EXTENSION} (its InferencePool CRD, which the gateway and the endpoint picker are built "
                                "against); another release needs "
                                "the pin changed in gpufleet/base/versions.py", ext))
    elif pooled and klass in provided and ext not in supported:
        problems.append(Problem(stack, f"{AT}.gateway.inferenceExtension", f"gateway class {klass} supports Inference "
                                f"Extension {', '.join(supported)}", ext))
    pools = {p.name: p for p in spec.node_pools}
    backend = spec.observability.backend(platform)
    seen: set[tuple[str, str]] = set()
    for i, m in enumerate(serving.models):
        at = f"{AT}.models[{i}]"
        if (m.namespace, m.name) in seen:
            problems.append(Problem(stack, f"{at}.name", "duplicate model server in its namespace", m.name))
        seen.add((m.namespace, m.name))
        if m.pool not in pools:
            problems.append(Problem(stack, f"{at}.pool", f"no such node pool (allowed: {', '.join(pools) or 'none'})", m.pool))
        pool = pools.get(m.pool)
        problems += _dra(stack, at, m, pool, spec)
        if pooled:
            sel = m.selector()
            matched = [o for o in serving.models if o.namespace == m.namespace and sel.items() <= o.pod_labels().items()]
            if not matched:
                problems.append(Problem(stack, f"{at}.inferencePool.selector", "the InferencePool selects no model "
                                        f"server in namespace {m.namespace} (its pods carry "
                                        f"{m.pod_labels()})", sel))
        problems += _scaling(stack, f"{at}.scaling", m.scaling, m, spec, backend, pooled)
        for role in ROLES if m.roles is not None else ():
            r = getattr(m.roles, role)
            key = f"{at}.roles.{role}"
            if r.scaling is not None and "replicas" in r.model_fields_set:
                problems.append(Problem(stack, f"{key}.replicas", "KEDA owns the role's replica count when it scales: "
                                        "remove replicas (the role starts at scaling.minReplicas)", r.replicas))
            if r.scaling is not None and r.scaling.min_replicas == 0:
                problems.append(Problem(stack, f"{key}.scaling.minReplicas", "a prefill/decode role does not scale to "
                                        "zero in gpufleet: the wake-up trigger (the picker's flow-control queue) counts "
                                        "the whole InferencePool, not the role a queued request waits for; use 1", 0))
            problems += _scaling(stack, f"{key}.scaling", r.scaling, m, spec, backend, pooled, zero=False)
    return problems


def _exposure(stack: str, gateway: GatewaySpec, klass: str) -> list[Problem]:
    """An external endpoint only on purpose: exposure external with a reason and HTTPS; a class that fits it."""
    problems = []
    external = gateway.exposure == "external"
    if external and not gateway.external_reason:
        problems.append(Problem(stack, f"{AT}.gateway.externalReason", "an external endpoint needs a recorded reason "
                                "(it becomes the Gateway's secure-defaults exemption): say why the models face the "
                                "internet, or use exposure: internal"))
    if not external and gateway.external_reason:
        problems.append(Problem(stack, f"{AT}.gateway.externalReason", "a reason for an external endpoint, but "
                                "exposure is internal: set exposure: external or remove it", gateway.external_reason))
    if external and gateway.tls is None:
        problems.append(Problem(stack, f"{AT}.gateway.tls", "an external endpoint would carry the API key and every "
                                "prompt in plain HTTP: set tls.certificateSecret (a kubernetes.io/tls Secret in "
                                "gpufleet-serving)"))
    if not fits_exposure(klass, gateway.exposure):
        other = "internal" if gateway.exposure == "external" else "external"
        problems.append(Problem(stack, f"{AT}.gateway.className", f"{klass} is an {other} load balancer but exposure "
                                f"is {gateway.exposure}: use className auto, or set exposure to match", klass))
    return problems


def _dra(stack, at, m, pool, spec) -> list[Problem]:
    """A DRA pool's pods claim GPUs through the pool's ResourceClaimTemplate `<pool>-node`, which gpufleet creates in
    each of gpufleet:dra.namespaces (docs/dra.md)."""
    problems = []
    dra = pool is not None and getattr(pool, "allocation", None) == "dra"
    if dra and m.namespace not in spec.dra.namespaces:
        problems.append(Problem(stack, f"{at}.namespace", f"the DRA pool {m.pool}'s claim templates exist only in "
                                f"gpufleet:dra.namespaces ({', '.join(spec.dra.namespaces)}): add it there", m.namespace))
    if m.compute_domain is not None:
        domains = [d.name for d in spec.dra.compute_domains if d.namespace == m.namespace and d.pool == m.pool]
        if not dra:
            problems.append(Problem(stack, f"{at}.computeDomain", "a ComputeDomain needs a DRA pool "
                                    "(nodePools[].allocation: dra)", m.compute_domain))
        elif m.compute_domain not in domains:
            problems.append(Problem(stack, f"{at}.computeDomain", f"no ComputeDomain of pool {m.pool} in namespace "
                                    f"{m.namespace} (allowed: {', '.join(domains) or 'none in gpufleet:dra.computeDomains'})",
                                    m.compute_domain))
    return problems


def _scaling(stack, key, s, m, spec, backend, pooled, zero: bool = True) -> list[Problem]:
    """The problems of one ScalingSpec `s` at `key` (a model's `scaling`, or a role's `roles.<role>.scaling`);
    `zero`: judge minReplicas 0 here (a role's is refused by the caller)."""
    if s is None:
        return []
    problems = []
    metric = SIGNALS.get(s.signal, s.signal)
    if metric not in EXPORTED_METRICS[m.server]:
        problems.append(Problem(stack, f"{key}.signal", f"{m.server} exports no such metric (allowed: queue, "
                                f"kvCache, {', '.join(EXPORTED_METRICS[m.server])})", s.signal))
    if backend == "amp":
        problems.append(Problem(stack, key, "the AMP scraper's configuration gpufleet writes does not scrape "
                                "model servers yet (docs/inference.md): use kube-prometheus-stack for serving metrics"))
    if backend == "none":
        problems.append(Problem(stack, key, "scaling on the model server's metrics needs them scraped: set "
                                "observability.metrics.backend (kube-prometheus-stack, amp on EKS, gke-managed on GKE)"))
    if not spec.addons.keda.enabled:
        problems.append(Problem(stack, key, "scaling needs KEDA: set addons.keda.enabled: true"))
    if metric == SIGNALS["kvCache"] and s.target > 1:
        problems.append(Problem(stack, f"{key}.target", "kv-cache use is a fraction (0-1]", s.target))
    if s.min_replicas > s.max_replicas:
        problems.append(Problem(stack, f"{key}.minReplicas", f"above maxReplicas ({s.max_replicas})", s.min_replicas))
    if zero and s.min_replicas == 0 and not (pooled and m.inference_pool.flow_control):
        why = ("the endpoint picker's flow control is off" if pooled else
               "without an endpoint picker nothing holds a request while no replica runs (a Service with no ready "
               "endpoint refuses it)")
        problems.append(Problem(stack, f"{key}.minReplicas", f"scale to zero needs a router that holds requests: "
                                f"{why}; use 1, or a gateway class with an InferencePool and flow control", 0))
    return problems


def serving_path(spec, capacity) -> list[str]:
    """The plan's serving lines: per model server, gateway -> pool -> model servers -> GPU pool, and what the server
    costs while idle (its minimum replicas x nodes per replica x the pool's node price). `capacity`: the plan's
    PoolCapacity rows (their price per node-hour). With an endpoint picker, the line adds the CPU and memory its pod
    requests on the system nodes (EPP_REQUESTS), which the system pool must hold while the model idles: gpufleet has no
    per-CPU price for a share of a system node, so it is named, not priced."""
    serving = spec.serving
    if not serving.enabled:
        return []
    klass = resolved_class(spec)
    pooled = routes_to_inference_pool(spec)
    prices = {c.pool: c.price_per_node_hour for c in capacity}
    gateway = serving.gateway
    listener = "HTTPS 443" if gateway.tls else "HTTP 80"
    out = [f"serving: Gateway inference-gateway (class {klass}, {gateway.exposure}, {listener}; API key from Secret "
           f"{serving.api_key.secret_name})"]
    picker = f" + endpoint picker {EPP_REQUESTS['cpu']} CPU / {EPP_REQUESTS['memory']} requested on system nodes"
    for m in serving.models:
        via = f"InferencePool {m.name} + endpoint picker" if pooled else f"Service {m.name} (no endpoint picker)"
        replicas = m.scaling.min_replicas if m.scaling else 1
        top = m.scaling.max_replicas if m.scaling else 1
        if m.roles is not None:
            replicas = sum(getattr(m.roles, r).bounds()[0] for r in ROLES)
            top = sum(getattr(m.roles, r).bounds()[1] for r in ROLES)
        nodes = replicas * m.nodes_per_replica
        price = prices.get(m.pool)
        idle = "unpriced" if price is None else f"{nodes * price:.2f} USD/h"
        scale = (f"KEDA on {SIGNALS.get(m.scaling.signal, m.scaling.signal)} > {m.scaling.target:g} per replica, "
                 f"{replicas}-{top} replicas" if m.scaling else "fixed 1 replica")
        servers = (f"LeaderWorkerSets {m.name}-prefill x{_count(m.roles.prefill)} + {m.name}-decode "
                   f"x{_count(m.roles.decode)} ({m.roles.kv_connector})" if m.roles is not None
                   else f"LeaderWorkerSet {m.name}")
        if m.roles is not None:
            scale = "; ".join(_role_scale(r, getattr(m.roles, r)) for r in ROLES)
        out.append(f"  {m.namespace}/{m.name}: gateway -> {via} -> {servers} "
                   f"({m.nodes_per_replica} pod(s) x {m.gpus_per_node} GPU) -> pool {m.pool}; {scale}; "
                   f"idle: {nodes} node(s), {idle}" + (picker if pooled else "") + ("; scales to zero (flow control holds requests)" if replicas == 0 else ""))
    return out


def _count(role: RoleSpec) -> str:
    low, high = role.bounds()
    return str(low) if low == high else f"{low}-{high}"


def _role_scale(name: str, role: RoleSpec) -> str:
    s = role.scaling
    if s is None:
        return f"{name} fixed {role.replicas} replica(s)"
    return (f"{name}: KEDA on {SIGNALS.get(s.signal, s.signal)} > {s.target:g} per replica, "
            f"{s.min_replicas}-{s.max_replicas} replicas")
