"""One model server: a LeaderWorkerSet of vLLM pods on a GPU pool, its route from the Gateway (to an InferencePool
with the endpoint picker where the gateway class supports it, else to a Service), its metrics scraped, and a KEDA
ScaledObject on the server's queue or KV-cache use.

Multi-node vLLM follows LeaderWorkerSet's vLLM example (kubernetes-sigs/lws docs/examples/vllm at the pinned tag, versions.LWS): the leader
starts a Ray head and `vllm serve` with pipeline parallelism across the group, each worker joins the head at
$(LWS_LEADER_ADDRESS), the address LWS injects; a group restarts as a whole (`RecreateGroupOnPodRestart`).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import pinned_release
from gpufleet.components.image_mirror import mirrored_image
from gpufleet.base import labels as L
from gpufleet.base import versions
from gpufleet.base.spec.features.serving import (API_KEY_KEY, API_KEY_SECRET, FLOW_CONTROL_QUEUE_METRIC, ROLE_LABEL,
                                                  SIGNALS, ModelServerSpec)

PORT = 8000  # vLLM's OpenAI server port (`vllm serve --port` default), the picker chart's targetPorts default
# The endpoint picker's default plugins (the router chart's default-plugins.yaml, config/charts/routerlib/templates/
# _config.yaml at versions.ENDPOINT_PICKER, for a vLLM server over HTTP) with the Flow Control feature gate
# (`featureGates: ["flowControl"]`, llm-d/llm-d-router docs/architecture.md at the same tag).
FLOW_CONTROL_CONFIG = """apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
featureGates:
- flowControl
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
- type: metrics-data-source
  parameters:
    scheme: http
    path: /metrics
    insecureSkipVerify: true
- type: core-metrics-extractor
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
"""


@dataclass(frozen=True)
class ModelServerArgs:
    model: ModelServerSpec
    gpu_vendor_taints: tuple[dict, ...] = ()
    """The pool's taints the pods tolerate."""
    dra_claim_template: Optional[str] = None
    """On a DRA pool: the pool's ResourceClaimTemplate (`<pool>-node`, all GPUs of a node) each pod claims instead of
    `nvidia.com/gpu`; default: none (the device plugin's resource)."""
    api_key: Optional[tuple[str, str]] = (API_KEY_SECRET, API_KEY_KEY)
    """(Secret, key) in the model's namespace whose value the server requires as `Authorization: Bearer <key>` on /v1
    (vLLM's VLLM_API_KEY from a secretKeyRef; the pod does not start until the Secret exists). Default: vllm-api-key,
    api-key; None: no key (anyone who reaches the server uses it)."""
    gateway: Optional[tuple[str, str]] = None
    """(namespace, name) of the Gateway the route attaches to; default: no route."""
    inference_pool: bool = False
    """Route through an InferencePool and the endpoint picker (the gateway class supports it)."""
    provider_name: str = "none"
    """The picker chart's `provider.name` (gke: its HealthCheckPolicy, GCPBackendPolicy and EPP monitoring)."""
    epp_monitoring: bool = False
    """Turn on the chart's monitoring of the endpoint picker when the model server scales (the provider's: gke's
    metrics-reader token and ClusterPodMonitoring for the flow-control queue KEDA wakes a pool at zero on); default:
    off (the platform's `inference_pool_monitoring` trait says where it is on)."""
    metrics: Optional[str] = None
    """How the model server's metrics are scraped: `pod-monitor` (prometheus-operator), `pod-monitoring` (GKE managed
    collection) or None."""
    prometheus_url: Optional[pulumi.Input[str]] = None
    """KEDA's Prometheus address (the KEDA component's `prometheus_server_address`)."""
    prometheus_auth: Optional[str] = None
    """A ClusterTriggerAuthentication for a managed Prometheus."""
    rdma: Optional[dict] = None
    """On an RDMA pool: what each pod asks for to get the pool's RDMA interfaces, `{"resources": {name: count},
    "annotations": {...}}`, and on GKE GPUDirect pools also `env`, `mounts`, `volumes`, `sidecars`,
    `sidecar_capabilities` and `command_prefix` (layer.py builds it per the platform's `serving_rdma_fabric`;
    gpufleet/base/platforms/gke/gpudirect_pods.py serving_pod); default: none."""
    depends_on: list = field(default_factory=list)


# vLLM's data-parallel RPC port between a replica's ranks (`--data-parallel-rpc-port`, vllm/engine/arg_utils.py line
# 1271 in the wheel of versions.VLLM_VERSION; the value llm-d's wide-EP guide uses).
DP_RPC_PORT = 5555


def serve_command(m: ModelServerSpec) -> list[str]:
    """The leader's command as argv: the model name is one argument, never shell text. One node per replica runs
    `vllm serve` itself; a multi-node replica either starts the Ray head first (pipeline parallel across pods, through
    a fixed shell script that passes `vllm serve` its arguments as the positional parameters "$@", so no stack value
    is parsed by the shell), or, data parallel across pods, serves as rank 0 of vLLM's multi-node data parallelism
    (`--data-parallel-address` the leader's own address, LWS_LEADER_ADDRESS, which LWS sets in every pod)."""
    p = m.parallel()
    size = m.nodes_per_replica
    serve = [m.model, "--port", str(PORT), "--tensor-parallel-size", str(p.tensor)]
    if size > 1 and p.data > 1:
        serve += _data_parallel(m) + ["--data-parallel-start-rank", "0"]
        return ["vllm", "serve", *serve, *_expert(m), *m.args]
    if p.data > 1:
        serve += ["--data-parallel-size", str(p.data)]
    if size == 1:
        return ["vllm", "serve", *serve, *_expert(m), *m.args]
    serve += ["--pipeline-parallel-size", str(p.pipeline), "--distributed-executor-backend", "ray"]
    return ["sh", "-c", 'ray start --head --port=6379 && exec vllm serve "$@"', "vllm-leader", *serve, *_expert(m), *m.args]


def _expert(m: ModelServerSpec) -> list[str]:
    return ["--enable-expert-parallel"] if m.parallel().expert else []


def _data_parallel(m: ModelServerSpec) -> list[str]:
    p = m.parallel()
    local = p.data // m.nodes_per_replica
    return ["--data-parallel-size", str(p.data), "--data-parallel-size-local", str(local),
            "--data-parallel-address", "$(LWS_LEADER_ADDRESS)", "--data-parallel-rpc-port", str(DP_RPC_PORT)]


def worker_command(m: ModelServerSpec) -> list[str]:
    """A worker's command. Pipeline parallel: join the leader's Ray head (no shell: the kubelet expands
    $(LWS_LEADER_ADDRESS)). Data parallel across pods: `vllm serve --headless` as ranks LWS_WORKER_INDEX x local
    size onward (LWS sets LWS_WORKER_INDEX, api/leaderworkerset/v1 at versions.LWS); the rank is computed by a fixed
    script, every stack value passes as a positional parameter."""
    p = m.parallel()
    if p.data > 1:
        local = p.data // m.nodes_per_replica
        serve = [m.model, "--port", str(PORT), "--tensor-parallel-size", str(p.tensor), *_data_parallel(m),
                 "--headless", *_expert(m), *m.args]
        return ["sh", "-c", f'exec vllm serve "$@" --data-parallel-start-rank $((LWS_WORKER_INDEX * {local}))',
                "vllm-worker", *serve]
    return ["ray", "start", "--address=$(LWS_LEADER_ADDRESS):6379", "--block"]


def pod_template(m: ModelServerSpec, role: str, taints: tuple[dict, ...], claim: Optional[str] = None,
                 image: str = versions.VLLM_IMAGE, api_key: Optional[tuple[str, str]] = (API_KEY_SECRET, API_KEY_KEY),
                 pd_role: Optional[str] = None, sidecar_image: str = versions.DISAGG_SIDECAR_IMAGE,
                 rdma: Optional[dict] = None) -> dict:
    """`image`: the vLLM image as the nodes pull it (the stack's mirror copy with gpufleet:registry.mirror); `api_key`:
    the (Secret, key) the leader's server reads VLLM_API_KEY from (ModelServerArgs.api_key). `pd_role`: prefill or
    decode of a disaggregated server (ModelServerSpec.roles): the role label, the KV connector on vLLM, and on decode
    pods vLLM on DECODE_VLLM_PORT behind llm-d's routing sidecar on the serving port."""
    port = DECODE_VLLM_PORT if pd_role == "decode" else PORT
    if role == "leader":
        command = serve_command(m)
        labels = m.pod_labels()
        ports = [{"name": "http", "containerPort": port}]
        if pd_role:
            labels[ROLE_LABEL] = pd_role
            if port != PORT:
                command = [str(port) if a == str(PORT) and command[i - 1] == "--port" else a for i, a in enumerate(command)]
            command += ["--kv-transfer-config", json.dumps({"kv_connector": m.roles.kv_connector, "kv_role": "kv_both"},
                                                           separators=(",", ":"))]
    else:
        command = worker_command(m)
        labels = {"app": f"{m.name}-worker"}
        ports = []
    claims = []
    if claim:
        claims = [{"name": "gpus", "resourceClaimTemplateName": claim}]
        if m.compute_domain:
            claims.append({"name": "channel", "resourceClaimTemplateName": f"{m.compute_domain}-channel"})
    resources = ({"claims": [{"name": c["name"]} for c in claims]} if claims
                 else {"limits": {"nvidia.com/gpu": str(m.gpus_per_node)}})
    if m.resources is not None:
        requests = {k: v for k, v in (("cpu", m.resources.cpu), ("memory", m.resources.memory),
                                      ("ephemeral-storage", m.resources.ephemeral_storage)) if v}
        if requests:
            resources["requests"] = requests
        if m.resources.memory:
            resources.setdefault("limits", {})["memory"] = m.resources.memory
    annotations: dict = {}
    rdma = rdma or {}
    # The pool's RDMA interfaces (issue 52): its extended resources on limits and requests, its network annotations,
    # and on GKE GPUDirect pools the mounts, environment, rxdm sidecar and command prefix GKE's manifests give a
    # workload (gpufleet/base/platforms/gke/gpudirect_pods.py).
    for name, count in sorted(rdma.get("resources", {}).items()):
        resources.setdefault("limits", {})[name] = str(count)
        resources.setdefault("requests", {})[name] = str(count)
    annotations.update(rdma.get("annotations", {}))
    command = [*rdma.get("command_prefix", []), *command]
    container = {
        "name": "vllm", "image": image, "command": command, "resources": resources,
        **({"ports": ports} if ports else {}),
    }
    if m.rdma is not None and (m.rdma.capabilities or m.rdma.privileged):
        # Granted only as the stack asks, with its reason on the pod; the rxdm sidecar's own capabilities stay on it.
        security: dict = {}
        caps = [c for c in m.rdma.capabilities if c not in rdma.get("sidecar_capabilities", ())]
        if caps:
            security["capabilities"] = {"add": caps}
        if m.rdma.privileged:
            security["privileged"] = True
        if security:
            container["securityContext"] = security
        annotations[L.RDMA_CAPABILITIES_REASON] = m.rdma.reason
    env: list[dict] = [{"name": n, "value": v} for n, v in rdma.get("env", ())]
    if m.hf_token is not None:
        # Every pod that loads weights reads the token (huggingface_hub's HF_TOKEN), from the Secret, never a literal.
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
            "name": m.hf_token.secret_name, "key": m.hf_token.key, "optional": False}}})
    volumes = []
    mounts = []
    if m.shm:
        # /dev/shm as memory-backed emptyDir of the stack's size (LWS's vLLM example at versions.LWS: `dshm`).
        mounts = [{"name": "dshm", "mountPath": "/dev/shm"}]
        volumes = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": m.shm}}]
    mounts += [{"name": v, "mountPath": p} for v, p in rdma.get("mounts", ())]
    volumes += [json.loads(json.dumps(v)) for v in rdma.get("volumes", ())]
    if mounts:
        container["volumeMounts"] = mounts
    if role == "leader":
        container["readinessProbe"] = {"httpGet": {"path": "/health", "port": port}, "periodSeconds": 10}
    # The key on every pod that runs `vllm serve`: the leader, and data-parallel workers (--headless: no API server,
    # but one process of the same engine, so the same setting).
    if role == "leader" or m.parallel().data > 1:
        if api_key:
            # From the Secret, never on the command line (which the pod spec and Pulumi's state show); not optional,
            # so a missing Secret keeps the server from starting open.
            env.insert(0, {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {
                "name": api_key[0], "key": api_key[1], "optional": False}}})
    if env:
        container["env"] = env
    init = [json.loads(json.dumps(c)) for c in rdma.get("sidecars", ())]
    if pd_role == "decode" and role == "leader":
        # llm-d's routing sidecar as a native sidecar (an init container that keeps running, restartPolicy Always), as
        # llm-d-router deploys it (deploy/components/vllm-decode/deployment.yaml at versions.ENDPOINT_PICKER): it takes
        # the serving port, asks the prefill pod the picker chose (header x-prefiller-host-port) for the KV cache, then
        # decodes on the local vLLM.
        init += [{"name": "routing-sidecar", "image": sidecar_image, "restartPolicy": "Always",
                 "args": [f"--port={PORT}", f"--vllm-port={port}", "--secure-proxy=false",
                          f"--kv-connector={SIDECAR_CONNECTORS[m.roles.kv_connector]}"],
                 "ports": [{"name": "sidecar-http", "containerPort": PORT}]}]
    if m.placement is not None:
        # Kueue TAS for a LeaderWorkerSet: the topology annotation and one PodSet group on the leader and worker
        # templates, so the leader and its workers share one domain (kueue docs/tasks/run/leaderworkerset.md at
        # versions.KUEUE, "Configure Topology Aware Scheduling").
        key = "required" if m.placement.required else "preferred"
        annotations[f"kueue.x-k8s.io/podset-{key}-topology"] = m.placement.level
        annotations["kueue.x-k8s.io/podset-group-name"] = "replica"
    return {"metadata": {"labels": labels, **({"annotations": annotations} if annotations else {})}, "spec": {
        "nodeSelector": {L.POOL_LABEL: m.pool},
        "tolerations": list(taints),
        **({"initContainers": init} if init else {}),
        "containers": [container],
        **({"resourceClaims": claims} if claims else {}),
        **({"volumes": volumes} if volumes else {}),
    }}


def leader_worker_set(m: ModelServerSpec, taints: tuple[dict, ...] = (), claim: Optional[str] = None,
                      image: str = versions.VLLM_IMAGE,
                      api_key: Optional[tuple[str, str]] = (API_KEY_SECRET, API_KEY_KEY), pd_role: Optional[str] = None,
                      sidecar_image: str = versions.DISAGG_SIDECAR_IMAGE, rdma: Optional[dict] = None) -> dict:
    """The LeaderWorkerSet (leaderworkerset.x-k8s.io/v1, the CRD in the lws chart at the pinned tag, versions.LWS);
    with `pd_role`, that role's (`<name>-<role>`, its own replicas)."""
    pod = functools.partial(pod_template, m, taints=taints, claim=claim, image=image, api_key=api_key, pd_role=pd_role,
                            sidecar_image=sidecar_image, rdma=rdma)
    template: dict = {"size": m.nodes_per_replica, "restartPolicy": "RecreateGroupOnPodRestart",
                      "workerTemplate": pod("leader" if m.nodes_per_replica == 1 else "worker")}
    if m.nodes_per_replica > 1:
        template["leaderTemplate"] = pod("leader")
    replicas = getattr(m.roles, pd_role).bounds()[0] if pd_role else (m.scaling.min_replicas if m.scaling else 1)
    # Queued to Kueue (the LocalQueue gpufleet names after the pool in each team's namespace) when placed by topology.
    queue = {"labels": {"kueue.x-k8s.io/queue-name": m.pool}} if m.placement is not None else {}
    return {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
            "metadata": {"name": f"{m.name}-{pd_role}" if pd_role else m.name, "namespace": m.namespace, **queue},
            "spec": {"replicas": replicas, "leaderWorkerTemplate": template}}


# The picker's prefill/decode profiles: llm-d-router's sample P/D configuration (deploy/config/pd-epp-config.yaml at
# versions.ENDPOINT_PICKER) with the Flow Control gate as above: a prefill and a decode profile, each filtering its
# role (prefill-filter / decode-filter on llm-d.ai/role), and the disagg profile handler running prefill only when the
# prefix-based decider says the uncached part is worth it.
PD_CONFIG = """apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
featureGates:
- flowControl
plugins:
- type: approx-prefix-cache-producer
  parameters:
    maxPrefixTokensToMatch: 16384
    lruCapacityPerServer: 31250
- type: prefix-cache-scorer
- type: queue-scorer
- type: prefill-filter
- type: decode-filter
- type: max-score-picker
- type: disagg-profile-handler
  parameters:
    deciders:
      prefill: prefix-based-pd-decider
- type: prefix-based-pd-decider
  parameters:
    nonCachedTokens: 16
schedulingProfiles:
- name: prefill
  plugins:
  - pluginRef: prefill-filter
  - pluginRef: max-score-picker
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: queue-scorer
    weight: 1
- name: decode
  plugins:
  - pluginRef: decode-filter
  - pluginRef: max-score-picker
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: queue-scorer
    weight: 1
"""
# vLLM's port behind the decode pods' routing sidecar, which takes the serving port (the sidecar's defaults, pkg/
# sidecar/proxy/options.go at versions.ENDPOINT_PICKER: --port 8000, --vllm-port 8200).
DECODE_VLLM_PORT = 8200
# The sidecar's name for vLLM's NixlConnector (docs/disaggregation.md "KV Connector" at the same tag).
SIDECAR_CONNECTORS = {"NixlConnector": "nixlv2"}


def picker_values(m: ModelServerSpec, provider_name: str, monitored: bool) -> dict:
    """The endpoint picker chart's values (keys of llm-d-router-gateway's values.yaml and its `router` library
    subchart's at versions.ENDPOINT_PICKER): the InferencePool's selector, port and server type, the gateway provider,
    the EPP's plugins. `monitored`: the EPP's metrics are scraped (ModelServerArgs.epp_monitoring on a scaled server):
    by the provider's monitoring (gke: Managed Service for Prometheus, a metrics-reader token and a PodMonitoring), else
    by prometheus-operator (a ServiceMonitor and a service-account token Secret)."""
    router: dict = {"modelServers": {"matchLabels": m.selector(), "targetPorts": [{"number": PORT}], "type": m.server}}
    epp: dict = {}
    if m.inference_pool.profile == "pd":
        config = PD_CONFIG if m.inference_pool.flow_control else PD_CONFIG.replace("featureGates:\n- flowControl\n", "")
        epp["pluginsCustomConfig"] = {"pd.yaml": config}
        epp["pluginsConfigFile"] = "pd.yaml"
    elif m.inference_pool.flow_control:
        epp["pluginsCustomConfig"] = {"flow-control.yaml": FLOW_CONTROL_CONFIG}
        epp["pluginsConfigFile"] = "flow-control.yaml"
    if epp:
        router["epp"] = epp
    if monitored:
        router["monitoring"] = {"prometheus": {"enabled": True}}
        if provider_name == "none":
            # The token Secret's default name (inference-gateway-sa-metrics-reader-secret) is one for every release:
            # two model servers in a namespace would own one Secret. One per release instead.
            router["monitoring"]["prometheus"]["auth"] = {"secretName": f"{m.name}-epp-metrics-reader"}
    return {"router": router, "provider": {"name": provider_name}}


def scaled_object(m: ModelServerSpec, prometheus_url: str, auth: Optional[str], pooled: bool,
                  role: Optional[str] = None) -> dict:
    """A KEDA ScaledObject on the LeaderWorkerSet (it has the scale subresource) from the model server's metric; with
    `role` (prefill or decode), that role's: `<name>-<role>` on the role's LeaderWorkerSet, from its own pods' metric
    and its own bounds (roles.<role>.scaling)."""
    s = getattr(m.roles, role).scaling if role else m.scaling
    target = f"{m.name}-{role}" if role else m.name
    metric = SIGNALS.get(s.signal, s.signal)
    # Leader pods are `<lws>-<group>`; workers `<lws>-<group>-<index>` and export no serving metrics.
    query = f'sum(avg_over_time({metric}{{namespace="{m.namespace}",pod=~"{target}-[0-9]+"}}[1m]))'
    auth_ref = {"authenticationRef": {"name": auth, "kind": "ClusterTriggerAuthentication"}} if auth else {}
    triggers = [{"type": "prometheus", "metricType": "AverageValue", "metadata": {
        "serverAddress": prometheus_url, "query": query, "threshold": str(s.target)}, **auth_ref}]
    if s.min_replicas == 0 and pooled:
        # While no replica runs the server exports nothing: the endpoint picker's flow-control queue wakes the pool
        # (the Inference Extension's site-src/guides/flow-control.md at versions.INFERENCE_EXTENSION, "Autoscaling: KEDA
        # and Scale-to-Zero"; the metric as llm-d's EPP names it: FLOW_CONTROL_QUEUE_METRIC).
        triggers.append({"type": "prometheus", "metadata": {
            "serverAddress": prometheus_url,
            "query": f'sum({FLOW_CONTROL_QUEUE_METRIC}{{inference_pool="{m.name}"}})',
            "threshold": "1", "activationThreshold": "0"}, **auth_ref})
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": {"name": target, "namespace": m.namespace},
            "spec": {"scaleTargetRef": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
                                        "name": target},
                     "minReplicaCount": s.min_replicas, "maxReplicaCount": s.max_replicas, "triggers": triggers}}


def http_route(m: ModelServerSpec, gateway: tuple[str, str], pooled: bool) -> dict:
    backend = ({"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": m.name} if pooled
               else {"kind": "Service", "name": m.name, "port": PORT})
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": m.name, "namespace": m.namespace},
            "spec": {"parentRefs": [{"name": gateway[1], "namespace": gateway[0]}],
                     "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": f"/{m.name}"}}],
                                "filters": [{"type": "URLRewrite", "urlRewrite": {
                                    "path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
                                "backendRefs": [backend]}]}}


def monitoring_name(m: ModelServerSpec) -> str:
    """The name of the model server's GKE PodMonitoring: `<model>-server` (the chart's own is `<model>`)."""
    return f"{m.name}-server"


def metrics_monitor(m: ModelServerSpec, kind: str) -> dict:
    select = {"matchLabels": m.pod_labels()}
    if kind == "pod-monitor":
        return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
                "metadata": {"name": m.name, "namespace": m.namespace},
                "spec": {"selector": select, "podMetricsEndpoints": [{"port": "http", "path": "/metrics"}]}}
    # Not `m.name`: the picker chart's GKE monitoring renders a PodMonitoring named after its release (the model's
    # name) in the same namespace for the endpoint picker's metrics (routerlib templates/_gke.yaml at
    # versions.ENDPOINT_PICKER), and two owners of one object fail the second apply. Each scrapes its own pods.
    return {"apiVersion": "monitoring.googleapis.com/v1", "kind": "PodMonitoring",
            "metadata": {"name": monitoring_name(m), "namespace": m.namespace},
            "spec": {"selector": select, "endpoints": [{"port": "http", "path": "/metrics", "interval": "30s"}]}}


class ModelServer(pulumi.ComponentResource):
    """`gpufleet:serving:ModelServer`: one model server: a LeaderWorkerSet of vLLM pods on a GPU pool, its route from
    the Gateway (to an InferencePool, `<name>-pool`, or a Service, `<name>-service`), its metrics scraped and a
    KEDA ScaledObject on its queue or KV-cache use."""

    def __init__(self, name: str, args: ModelServerArgs, access: ClusterAccess,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:serving:ModelServer", name, None, opts)
        m = args.model
        child = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=list(args.depends_on))

        def custom(role: str, obj: dict, after: Optional[list] = None) -> k8s.apiextensions.CustomResource:
            o = child if after is None else pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=after))
            return k8s.apiextensions.CustomResource(f"{name}-{role}", api_version=obj["apiVersion"], kind=obj["kind"],
                                                    metadata=obj["metadata"], spec=obj["spec"], opts=o)

        # With gpufleet:registry.mirror the pods pull vLLM from the mirror (issue 38; `gpufleet images` lists it).
        image = mirrored_image(m.image or versions.VLLM_IMAGE, access.facts)
        if m.roles is None:
            self.lws = custom("lws", leader_worker_set(m, args.gpu_vendor_taints, args.dra_claim_template, image,
                                                       args.api_key, rdma=args.rdma))
        else:
            # Prefill/decode (issue 52): one LeaderWorkerSet per role, both selected by the model's InferencePool.
            sidecar = mirrored_image(versions.DISAGG_SIDECAR_IMAGE, access.facts)
            self.roles = {role: custom(f"lws-{role}", leader_worker_set(
                m, args.gpu_vendor_taints, args.dra_claim_template, image, args.api_key, pd_role=role,
                sidecar_image=sidecar, rdma=args.rdma)) for role in ("prefill", "decode")}
            self.lws = self.roles["decode"]
        self.pool_release = self.service = self.route = self.monitor = self.scaler = None
        if args.inference_pool:
            self.pool_release = pinned_release(
                f"{name}-pool", versions.ENDPOINT_PICKER, m.namespace,
                picker_values(m, args.provider_name, args.epp_monitoring and m.scaling is not None), access, parent=self,
                depends_on=list(args.depends_on), release_name=m.name)
        else:
            self.service = k8s.core.v1.Service(
                f"{name}-service", metadata={"name": m.name, "namespace": m.namespace},
                spec={"selector": m.pod_labels(), "ports": [{"name": "http", "port": PORT, "targetPort": PORT}]},
                opts=child)
        if args.gateway:
            after = [self.pool_release] if self.pool_release else [self.service]
            self.route = custom("route", http_route(m, args.gateway, args.inference_pool), after)
        if args.metrics:
            self.monitor = custom("metrics", metrics_monitor(m, args.metrics))
        if m.scaling is not None and args.prometheus_url is not None:
            self.scaler = custom("scaler", scaled_object(m, args.prometheus_url, args.prometheus_auth,
                                                         args.inference_pool), [self.lws])
        # Prefill/decode: each role scales on its own pods' metric (issue 52), a ScaledObject `<name>-<role>`.
        self.role_scalers = {
            role: custom(f"scaler-{role}", scaled_object(m, args.prometheus_url, args.prometheus_auth,
                                                         args.inference_pool, role), [self.roles[role]])
            for role in ("prefill", "decode")
            if m.roles is not None and getattr(m.roles, role).scaling is not None and args.prometheus_url is not None}
        self.register_outputs({"model": m.model, "pool": m.pool, "inferencePool": args.inference_pool})
