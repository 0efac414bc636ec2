"""Label, taint and annotation keys shared by components and policies, so they cannot drift."""

from __future__ import annotations

import re

# The extended resource the NVIDIA device plugin advertises, and the taint key that keeps
# non-GPU work off GPU nodes (the GPU Operator's daemonsets tolerate it by default).
GPU_RESOURCE = "nvidia.com/gpu"
# With MIG's mixed strategy the device plugin advertises one resource per profile: nvidia.com/mig-<profile>.
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "true"
GPU_TAINT_EFFECT = "NoSchedule"

# AMD Instinct pools (issue 17): the AMD device plugin advertises `amd.com/gpu` (with the `single` resource naming
# strategy gpufleet uses, also for every partition; ROCm/gpu-operator docs/device_plugin/device-plugin.md), and AMD
# pools carry the NoSchedule taint of the same key. The AMD GPU Operator's Device Config Manager applies the
# partition profile a node's `dcm.amd.com/gpu-config-profile` label names, and taints a node `amd-dcm=up:NoExecute`
# while it partitions (docs/dcm/applying-partition-profiles.rst).
AMD_GPU_RESOURCE = "amd.com/gpu"
AMD_GPU_TAINT_KEY = "amd.com/gpu"
AMD_DCM_PROFILE_LABEL = "dcm.amd.com/gpu-config-profile"
AMD_DCM_TAINT_KEY = "amd-dcm"
# What the GPU operators' node discovery (NFD) labels: PCI vendor 1002 (AMD), 10de (NVIDIA); the AMD chart's
# default NodeFeatureRule labels AMD GPU nodes `feature.node.kubernetes.io/amd-gpu: "true"`.
AMD_NFD_LABEL = "feature.node.kubernetes.io/amd-gpu"

# Labels gpufleet puts on every GPU node so schedulers, queues and policies can select them.
POOL_LABEL = "gpufleet.io/pool"
GPU_MODEL_LABEL = "gpufleet.io/gpu-model"
CAPACITY_TYPE_LABEL = "gpufleet.io/capacity-type"  # on-demand | spot
GPU_NODE_LABEL = "gpufleet.io/gpu"  # "true" on GPU nodes

# k3s GPU hosts: the block and rack the stack declares for each (gpufleet:nodePools[].hosts[].block / .rack),
# written as node labels at join, the levels of the pool's Kueue Topology (docs/topology.md).
TOPOLOGY_BLOCK_LABEL = "gpufleet.io/topology-block"
TOPOLOGY_RACK_LABEL = "gpufleet.io/topology-rack"
# On a topology-aware team queue's LocalQueue, gpufleet.io/podset-required-topology or -preferred-topology: the
# Kueue pod-template annotation (kueue.x-k8s.io/podset-...) its jobs should carry, and its value.
QUEUE_TOPOLOGY_ANNOTATION_PREFIX = "gpufleet.io/podset-"

# Namespaces gpufleet creates for a team (gpufleet:addons.kueue.teams) carry the team's name.
TEAM_LABEL = "gpufleet.io/team"

# `gpufleet verify`: the run id on every object a run creates (gpufleet/app/verify/), so cleanup finds them all.
VERIFY_RUN_LABEL = "gpufleet.io/verify"

# Tag on every cloud resource gpufleet creates for a cluster (EKS: cluster, roles, security groups, file systems).
CLUSTER_TAG = "gpufleet.io/cluster"

# Reserved pools: what the stack declares its reservation holds, tagged on the EKS launch template (and as GCE
# resource labels on GKE pools, `gpufleet-reservation-*`): the policy `reservation-placement` reads them.
RESERVATION_TAG_PREFIX = "gpufleet.io/reservation-"
GKE_RESERVATION_LABEL_PREFIX = "gpufleet-reservation-"
# GKE DWS: queued-provisioning nodes carry this taint (GKE adds it) and label (gpufleet adds it, as
# cluster-toolkit's gke-node-pool does: only the taint is automatic); flex-start nodes this label (GKE adds it).
GKE_QUEUED_KEY = "cloud.google.com/gke-queued"
GKE_FLEX_START_LABEL = "cloud.google.com/gke-flex-start"
# GKE DWS: the ProvisioningRequest class of queued provisioning (GKE "Run a large-scale workload with
# flex-start with queued provisioning").
GKE_QUEUED_PROVISIONING_CLASS = "queued-provisioning.gke.io"

# Spot nodes carry this taint in addition to the GPU taint: only interruption-tolerant work lands.
SPOT_TAINT_KEY = "gpufleet.io/spot"
# AKS labels and taints every Spot node pool itself: `kubernetes.azure.com/scalesetpriority=spot:NoSchedule`
# (MicrosoftDocs/azure-aks-docs @fb060abe articles/aks/spot-node-pool.md, Limitations; read 2026-12-04).
AKS_SPOT_KEY = "kubernetes.azure.com/scalesetpriority"
AKS_SPOT_VALUE = "spot"

# Keys gpufleet sets itself on GPU nodes: a pool's own `labels`/`taints` may not use them (a user label
# `gpufleet.io/capacity-type: on-demand` on a spot pool would send on-demand-only work to spot nodes).
RESERVED_LABEL_PREFIX = "gpufleet.io/"
RESERVED_TAINT_KEYS = (GPU_TAINT_KEY, SPOT_TAINT_KEY, AMD_GPU_TAINT_KEY, AMD_DCM_TAINT_KEY)

# Per-node selectors read by the GPU Operator (device plugin sharing config, MIG layout).
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_CONFIG_LABEL = "nvidia.com/mig.config"

# DRA pools (nodePools[*].allocation: dra, issue 34): gpufleet labels their nodes so NVIDIA's DRA driver's kubelet
# plugin runs there only, and sets the GPU Operator's per-node deploy label of its device plugin to "false" there
# only: the operator runs its device-plugin DaemonSet on nodes labelled nvidia.com/gpu.deploy.device-plugin=true and
# stops it where the label says false (the same label NVIDIA/mig-parted's reconfigure sets to false to stop the
# device plugin on a node), and the DRA driver's GPU kubelet plugin must not run beside the device plugin
# (dra-driver-nvidia-gpu templates/validation.yaml at the pinned release).
GPU_ALLOCATION_LABEL = "gpufleet.io/gpu-allocation"  # "dra" on DRA pools' nodes
# Kueue quota resources of DRA pools (Kueue Configuration resources.deviceClassMappings, Kueue at the pin,
# site/content/en/docs/tasks/manage/setup_dra.md): what a ResourceClaimTemplate's device request of NVIDIA's DeviceClasses
# charges. A pod on a DRA pool requests no nvidia.com/gpu, so the pool's ClusterQueues count these instead.
DRA_GPU_RESOURCE = "dra.gpufleet.io/gpu"  # DeviceClass gpu.nvidia.com: whole GPUs
DRA_MIG_RESOURCE_PREFIX = "dra.gpufleet.io/mig-"  # + profile: DeviceClass mig-<profile>.gpufleet.io, MIG devices of one profile
DRA_CHANNEL_RESOURCE = "dra.gpufleet.io/imex-channel"  # compute-domain-default-channel.nvidia.com: ComputeDomain channels


def dra_mig_suffix(profile: str) -> str:
    """A MIG profile as a DNS label (1g.10gb -> 1g-10gb): DRA pools' claim templates are `<pool>-mig-<suffix>`."""
    return re.sub(r"[^a-z0-9-]+", "-", profile.lower()).strip("-")


def dra_mig_class(profile: str) -> str:
    """gpufleet's DeviceClass for the MIG devices of one profile on DRA pools (1g.10gb -> mig-1g-10gb.gpufleet.io):
    Kueue counts claims per DeviceClass, so one class per profile lets a quota count each profile."""
    return f"mig-{dra_mig_suffix(profile)}.gpufleet.io"


DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"

# Nodes of RDMA pools: the Network Operator's daemons (RDMA device plugin, Multus, CNI plugins, IPAM)
# are pinned to them by node affinity.
RDMA_NODE_LABEL = "gpufleet.io/rdma"  # "true" on RDMA pools' nodes

# Declarations the policy pack reads off a Kubernetes object (the GPU Operator's namespace), so
# `pulumi preview --policy-pack policies` judges driver/CUDA alignment without extra policy config.
CUDA_VERSIONS_ANNOTATION = "gpufleet.io/cuda-versions"  # "12.8,13.0"
PREINSTALLED_DRIVER_ANNOTATION = "gpufleet.io/preinstalled-driver-version"  # "580.95.05"
# The same for AMD pools, on the AMD GPU Operator's namespace: the ROCm releases the workloads use and the AMD GPU
# Driver the nodes run (inbox: as declared; operator-managed: the DeviceConfig's spec.driver.version).
ROCM_VERSIONS_ANNOTATION = "gpufleet.io/rocm-versions"  # "7.2,7.0"
AMD_DRIVER_ANNOTATION = "gpufleet.io/amd-driver-version"  # "30.30.3"

# The Kubernetes provider waits on a custom resource until this annotation's condition holds (pulumi-kubernetes
# >= 4.18.0, "pulumi.com/waitFor": "jsonpath={.status.state}=ready" or "condition=Ready").
PULUMI_WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"
# pulumi-kubernetes: "true" skips every await of the object (its waitFor too; provider pkg/metadata/overrides.go).
PULUMI_SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
# The StorageClass a claim without `storageClassName` gets: "true" on at most one class
# (kubernetes.io/docs/concepts/storage/storage-classes/#default-storageclass).
DEFAULT_STORAGE_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

# Every namespace carries its own name as this label, set by the API server and not writable by its users
# (kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name, GA in 1.22): the serving
# Gateway admits routes by it (components/serving/gateway.py).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# A LoadBalancer Service's internal scheme, per cloud (the serving Gateway's Envoy Service; the secure-defaults rule):
# AWS: the in-tree/cloud-provider-aws controller reads `aws-load-balancer-internal` (any value but "false"), the AWS Load
# Balancer Controller `aws-load-balancer-scheme` (internal | internet-facing), which it prefers and for which it
# deprecates the other (kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/service/annotations);
# Azure: `azure-load-balancer-internal: "true"` (learn.microsoft.com/azure/aks/internal-lb); GKE:
# `networking.gke.io/load-balancer-type: Internal` (docs.cloud.google.com/kubernetes-engine/docs/concepts/service-load-balancer-parameters).
AWS_LB_INTERNAL_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-internal"
AWS_LB_SCHEME_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-scheme"
AZURE_LB_INTERNAL_ANNOTATION = "service.beta.kubernetes.io/azure-load-balancer-internal"
GKE_LB_TYPE_ANNOTATION = "networking.gke.io/load-balancer-type"

# Exemptions are visible: a label/tag `gpufleet.io/exempt-<policy>: "<reason>"`.
EXEMPT_PREFIX = "gpufleet.io/exempt-"


# The policy pack's rule names (policies/pack.py; a test keeps the two equal), for validating exemptions.
POLICY_NAMES = (
    "gpu-pool-scale-to-zero",
    "gpu-driver-cuda-alignment",
    "gpu-operator-version-support",
    "gpu-operator-driver-conflict",
    "gpu-sharing-valid",
    "gpu-pool-taint",
    "spot-pool-safety",
    "spot-pool-diversified",
    "rdma-placement",
    "secure-defaults",
    "gpu-cuda-minor-version-compat",
    "stateful-resource-protection",
    "reservation-placement",
    "gpu-observability",
)
# The rule that wants stateful resources protected: components carry a stack's reason for turning protection
# off as this rule's exemption.
STATEFUL_PROTECTION_POLICY = "stateful-resource-protection"
# The rule that wants Secrets encrypted at rest: a k3s stack's reason for turning it off is this rule's exemption.
SECURE_DEFAULTS_POLICY = "secure-defaults"


def label_safe(text: str) -> str:
    """`text` as a Kubernetes label value (at most 63 of A-Z a-z 0-9 - _ ., alphanumeric at both ends; k8s.io/apimachinery
    IsValidLabelValue): every other run of characters becomes '-', then cut. A reason as a GKE node label, whose full
    text the plan keeps (capacity `exemptions`)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", text.strip())
    slug = slug[:63]
    slug = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", slug)
    return slug or "exempt"


def exempt_key(policy_name: str) -> str:
    """The label/tag key that exempts a resource from one policy (its value is the reason)."""
    return f"{EXEMPT_PREFIX}{policy_name}"


def gcp_exempt_key(policy_name: str) -> str:
    """The same key spelled as a GCP label allows ([a-z0-9_-], no "." or "/"): gpufleet-exempt-<policy>."""
    return "gpufleet-exempt-" + policy_name


def gpu_taint(vendor: str = "nvidia") -> dict[str, str]:
    """The GPU taint in Kubernetes' own shape (nvidia.com/gpu, or amd.com/gpu on AMD pools)."""
    key = AMD_GPU_TAINT_KEY if vendor == "amd" else GPU_TAINT_KEY
    return {"key": key, "value": GPU_TAINT_VALUE, "effect": GPU_TAINT_EFFECT}


GPU_RESOURCE_PREFIXES = ("nvidia.com/", "amd.com/")


def is_gpu_resource(resource: str) -> bool:
    """Whether an extended resource counts GPUs (whole, shared, MIG slices or AMD partitions) of either vendor."""
    return resource.startswith(GPU_RESOURCE_PREFIXES)


def gpu_resource(vendor: str = "nvidia") -> str:
    """The extended resource a vendor's device plugin advertises whole GPUs (or AMD partitions) as."""
    return AMD_GPU_RESOURCE if vendor == "amd" else GPU_RESOURCE


def taint_string(key: str, value: str, effect: str) -> str:
    """A taint as kubelet/k3s flags spell it: key=value:Effect."""
    return f"{key}={value}:{effect}"


# EKS (issue 3). The EFA device plugin advertises this resource; EFA pools carry the label so the
# plugin's daemonset and training jobs can select them (mixing EFA and non-EFA nodes breaks NCCL).
EFA_RESOURCE = "vpc.amazonaws.com/efa"
EFA_LABEL = "gpufleet.io/efa"
# The pool label value of the EKS system (CPU) node group: operators and the autoscaler run there.
SYSTEM_POOL = "system"
# Cluster autoscaler discovery and scale-from-zero node-template tags on EKS node groups
# (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md).
CA_ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"
CA_OWNED_TAG = "k8s.io/cluster-autoscaler/{cluster}"
CA_PREFIX = "k8s.io/cluster-autoscaler/"
CA_TEMPLATE_PREFIX = "k8s.io/cluster-autoscaler/node-template/"
CA_TEMPLATE_LABEL = "k8s.io/cluster-autoscaler/node-template/label/"
CA_TEMPLATE_TAINT = "k8s.io/cluster-autoscaler/node-template/taint/"
CA_TEMPLATE_RESOURCE = "k8s.io/cluster-autoscaler/node-template/resources/"
# Per node group overrides of the autoscaler's scale-down flags (same README, "autoscaling-options"): read from the
# Auto Scaling group's tags, like the node template.
CA_TEMPLATE_OPTION = "k8s.io/cluster-autoscaler/node-template/autoscaling-options/"
# GKE: the value GKE gives the nvidia.com/gpu taint on GPU node pools (gpufleet declares the same
# taint, so the pool's taints are explicit and do not depend on GKE's cluster composition rule).
GKE_GPU_TAINT_VALUE = "present"
# GKE: the taint GKE puts on every node of an Arm node pool by default (GKE "Prepare an Arm workload for deployment":
# "placing a taint (kubernetes.io/arch=arm64:NoSchedule) on all Arm nodes"; the node pool API's
# TaintConfig.ArchitectureTaintBehavior: "unspecified, defaults to ARM"). DaemonSets and flavors that must run there
# tolerate it (gpufleet/base/platforms/gke/nodes.py).
ARCH_TAINT_KEY = "kubernetes.io/arch"
ARM_ARCH_TAINT = {"key": ARCH_TAINT_KEY, "value": "arm64", "effect": "NoSchedule"}
# GKE multi-networking pod annotations (GKE "Set up multi-network support for Pods"; Google's GPUDirect NCCL tests,
# container-engine-accelerators gpudirect-tcpx/nccl-test-latest.yaml @fee88336): the pod's default interface and
# its interfaces, a JSON list of {interfaceName, network} naming Network objects (components/gke GkeGpuDirectWiring).
GKE_DEFAULT_INTERFACE_ANNOTATION = "networking.gke.io/default-interface"
GKE_INTERFACES_ANNOTATION = "networking.gke.io/interfaces"
# GKE's NRI device injector: `devices.gke.io/container.<container name>` lists device nodes to inject into that
# container (container-engine-accelerators nri_device_injector/README.md @bd4a7491).
GKE_DEVICES_ANNOTATION_PREFIX = "devices.gke.io/container."
# Multus: the pod annotation naming the NetworkAttachmentDefinitions to attach as extra interfaces (Kubernetes
# Network Plumbing Working Group, "Kubernetes Network Custom Resource Definition De-facto Standard" v1, section 4.1.2,
# which Multus implements); the k3s NCCL pair attaches the pool's RDMA network with it (gpufleet/app/verify/nccl/allreduce.py).
MULTUS_NETWORKS_ANNOTATION = "k8s.v1.cni.cncf.io/networks"
# GKE: this node label turns off GKE's own device plugin (set when the GPU Operator runs the stack).
GKE_NO_DEFAULT_DEVICE_PLUGIN_LABEL = "gke-no-default-nvidia-gpu-device-plugin"
# GKE DRA pools (GKE set-up-dra; GoogleCloudPlatform/ai-on-gke gpu-fungibility tutorial): `cloud.google.com/gke-nvidia-
# gpu-dra-driver=true` lets GKE's cluster autoscaler know the pool's GPUs come through the DRA driver (so it scales the
# pool for pods with ResourceClaims, from zero too); `nvidia.com/gpu.present=true` is what the DRA driver's kubelet
# plugin's nodeAffinity matches where neither NFD nor the GPU Operator labels nodes (chart values.yaml kubeletPlugin.affinity).
GKE_DRA_DRIVER_LABEL = "cloud.google.com/gke-nvidia-gpu-dra-driver"
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# GPU Operator: a node labelled `<operand deploy label>=false` keeps that operand off (the operator only sets the
# label where it is absent or empty: NVIDIA/gpu-operator at the pinned release (versions.GPU_OPERATOR, commit 10ee5b36)
# controllers/state_manager.go lines 476-485; the
# device plugin DaemonSet selects `...device-plugin: "true"`, assets/state-device-plugin/0500_daemonset.yaml line 20).
# Bottlerocket's NVIDIA variants run their own device plugin, so gpufleet sets it to "false" on those pools.
GPU_OPERATOR_DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# EKS: the cluster autoscaler's AWS GPU label (cloudprovider/aws GPULabel). A ready node carrying it but no
# allocatable nvidia.com/gpu yet is treated as still starting, so the autoscaler does not add a second GPU
# node while the device plugin comes up (core/.../customresources/gpu_processor.go).
EKS_CA_GPU_LABEL = "k8s.amazonaws.com/accelerator"

# Labels a kubelet may give its own node (`--node-labels`, k3s `node-label`): in the kubernetes.io / k8s.io
# namespaces only these keys and the two namespaces below; any other such key stops the kubelet at start
# ("unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels", k3s-io/k3s#10916;
# kubernetes k8s.io/kubelet/pkg/apis/well_known_labels.go).
KUBELET_ALLOWED_LABELS = frozenset({
    "beta.kubernetes.io/arch", "beta.kubernetes.io/instance-type", "beta.kubernetes.io/os",
    "failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
    "kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os", "node.kubernetes.io/instance-type",
    "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
})
KUBELET_ALLOWED_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")


def kubelet_may_set(key: str) -> bool:
    """Whether a kubelet may register its node with this label key (the kubelet's own rule)."""
    namespace = key.split("/", 1)[0] if "/" in key else ""

    def within(ns: str) -> bool:
        return namespace == ns or namespace.endswith("." + ns)

    if not (within("kubernetes.io") or within("k8s.io")) or key in KUBELET_ALLOWED_LABELS:
        return True
    return any(within(ns) for ns in KUBELET_ALLOWED_LABEL_NAMESPACES)

# node-problem-detector's node condition on k3s GPU nodes whose kernel log shows an XID of a broken-GPU class
# (components/k3s/xid_monitor.py sets it, components/observability/alerts.py alerts on it, docs/observability.md).
GPU_UNHEALTHY_CONDITION = "GpuUnhealthy"

# KEDA (gpufleet:addons.keda) on a managed Prometheus (amp on EKS, gke-managed on GKE): the ClusterTriggerAuthentication
# gpufleet creates with the cloud's pod identity for KEDA's operator; a ScaledObject's prometheus trigger names it
# (`authenticationRef: {kind: ClusterTriggerAuthentication, name: gpufleet-prometheus}`, examples/).
KEDA_PROMETHEUS_AUTH = "gpufleet-prometheus"
# Why a serving pod was granted Linux capabilities for RDMA (gpufleet:serving.models[].rdma.reason, issue 52).
RDMA_CAPABILITIES_REASON = "gpufleet.io/rdma-capabilities-reason"

# Annotations that keep a running training pod's node (issue 51, docs/upgrades.md). Karpenter: a pod annotated
# do-not-disrupt "true" blocks consolidation of its node and drift (unless the NodeClaim sets a
# terminationGracePeriod), not expiration (karpenter.sh/docs/reference/annotations, "karpenter.sh/do-not-disrupt", GA).
# Cluster Autoscaler: a pod annotated safe-to-evict "false" keeps its node from scale-down (kubernetes/autoscaler
# cluster-autoscaler/FAQ.md, "What types of pods can prevent CA from removing a node?").
DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
SAFE_TO_EVICT_ANNOTATION = "cluster-autoscaler.kubernetes.io/safe-to-evict"
TRAINING_POD_ANNOTATIONS = {DO_NOT_DISRUPT_ANNOTATION: "true", SAFE_TO_EVICT_ANNOTATION: "false"}
