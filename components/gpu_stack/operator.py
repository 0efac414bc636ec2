"""GpuOperator: the NVIDIA GPU Operator by Helm, in its own namespace, with values from the spec."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.helm_chart import pinned_release
from gpufleet.components.image_digests import pinned_values
from gpufleet.components.observability import dcgm_metrics
from gpufleet.base import labels, versions
from gpufleet.base.spec import GpuOperatorSpec

NAMESPACE = "gpu-operator"
_CONTROL_PLANE_TOLERATION = {
    "key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule",
}


@dataclass(frozen=True)
class GpuOperatorArgs:
    spec: GpuOperatorSpec
    """Release and driver choice from the stack spec."""
    gpu_node_taints: list[dict] = field(default_factory=list)
    """Taints GPU nodes carry (from every pool): the operator's daemonsets and NFD workers tolerate each."""
    namespace: str = NAMESPACE
    """Namespace the operator and its operands run in."""
    device_plugin_config: Optional[dict] = None
    """devicePlugin.config {name, default}: the sharing ConfigMap (components/gpu_stack/sharing.py); default: none,
    one pod per GPU."""
    mig_strategy: Optional[str] = None
    """mig.strategy (single | mixed) when a pool uses MIG; default: the chart's (single), MIG manager untouched."""
    mig_parted_config: Optional[str] = None
    """migManager.config.name: a custom mig-parted ConfigMap; default: the MIG manager's generated layouts."""
    rdma: bool = False
    """A pool uses RDMA: with the operator's driver, turn on GPUDirect RDMA (driver.rdma) using the host's
    network driver (the Network Operator does not install one here)."""
    nfd_extra_taints: list[dict] = field(default_factory=list)
    """Taints of other vendors' GPU nodes (AMD pools in a mixed cluster) that only the NFD worker tolerates, so the
    cluster's one NFD labels those nodes too while this operator's daemonsets stay off them; default: none."""
    cuda_versions: tuple[str, ...] = ()
    """CUDA versions the workloads use (gpufleet:workloads.cudaVersions), declared on the namespace for the
    policy pack (gpu-driver-cuda-alignment); default: none declared, alignment is not checked."""
    metrics: bool = False
    """The stack runs kube-prometheus-stack (gpufleet:observability): the DCGM exporter's ServiceMonitor keeps the
    exporter's pod/namespace labels (honorLabels) and the exporter publishes the counters gpufleet's alerts read
    (components/observability/dcgm_metrics.py). Default: off, the chart's exporter settings."""
    pin_digests: bool = False
    """gpufleet:images.pinDigests: every image the chart runs that has a recorded digest is written as
    `<tag>@sha256:<digest>` from the catalog (components/image_digests.py); default: off, the chart's tags."""
    service_monitor: bool = True
    """With `metrics`: the DCGM exporter's ServiceMonitor (honorLabels) for a prometheus-operator in the cluster.
    False when an outside collector scrapes the exporter (amp: the AWS managed collector's own configuration keeps
    the same labels) and the ServiceMonitor CRD is absent. Default: on."""


# How the operator's upgrade controller rolls a driver change over the GPU nodes (docs/upgrades.md "Driver upgrades that
# finish"). Keys and the chart's defaults: values.yaml `driver.upgradePolicy` of the pinned release
# (versions.GPU_OPERATOR; the same in the older release in ../shared/reference/gpu-operator): autoUpgrade true,
# maxParallelUpgrades 1, maxUnavailable 25%, waitForCompletion {timeoutSeconds 0, podSelector ""},
# gpuPodDeletion {force false, timeoutSeconds 300, deleteEmptyDir false}, drain {enable false, force false,
# timeoutSeconds 300, deleteEmptyDir false}. Meaning (NVIDIA GPU Operator docs, "GPU Driver Upgrades", upgrade
# controller): per node, cordon; wait for the pods `waitForCompletion.podSelector` selects (0 s = for ever); delete the
# pods that use a GPU (refused for a pod without a controller unless `force`, or one with emptyDir unless
# `deleteEmptyDir`: then the node stays in upgrade-failed); drain only if `drain.enable`; reload the driver; uncordon.
# gpufleet's choices:
# - one node at a time and at most one unavailable, whatever the pool size (25% of a 16-node pool is 4 nodes of jobs);
# - wait up to 24 h for training pods (JobSet's, which TrainJobs and gpufleet's runtimes make: label
#   jobset.sigs.k8s.io/jobset-name) to finish, long enough for a day-long step and its checkpoint, bounded so an upgrade
#   finishes instead of waiting for ever (the chart's 0);
# - then delete the GPU pods even without a controller or with emptyDir data (a job past its wait loses its /dev/shm,
#   not the upgrade): with the chart's false/false one such pod leaves the node upgrade-failed and the rollout stuck;
# - 15 min for the deletion, the longest terminationGracePeriodSeconds a checkpointing trainer is commonly given.
DRIVER_UPGRADE_POLICY = {
    "autoUpgrade": True,
    "maxParallelUpgrades": 1,
    "maxUnavailable": 1,
    "waitForCompletion": {"podSelector": "jobset.sigs.k8s.io/jobset-name", "timeoutSeconds": 24 * 3600},
    "gpuPodDeletion": {"force": True, "timeoutSeconds": 900, "deleteEmptyDir": True},
    "drain": {"enable": False, "force": False, "timeoutSeconds": 900, "deleteEmptyDir": True},
}


def tolerations(taints: list[dict]) -> list[dict]:
    """One `Exists` toleration per distinct taint key/effect, in a stable order."""
    seen = sorted({(t["key"], t["effect"]) for t in taints})
    return [{"key": key, "operator": "Exists", "effect": effect} for key, effect in seen]


def operator_values(args: GpuOperatorArgs, facts: dict) -> dict:
    """Helm values for the gpu-operator chart; every key path exists in the chart's values.yaml. What differs per
    platform comes from the cluster's facts (ClusterAccess.facts): its own containerd, a driver its images ship."""
    spec = args.spec
    operator_driver = spec.driver.source == "operator"
    driver: dict = {"enabled": operator_driver}
    if operator_driver:
        driver["version"] = spec.driver_version()
        driver["upgradePolicy"] = dict(DRIVER_UPGRADE_POLICY)
        if spec.driver.repo_config and not spec.driver.precompiled:
            driver["repoConfig"] = {"configMapName": spec.driver.repo_config}
        if spec.driver.precompiled:
            # Precompiled driver containers are tagged by branch and kernel: `driver.version` names the branch and the
            # operator picks the image for each node's kernel (GPU Operator docs, "Precompiled Driver Containers").
            driver["usePrecompiled"] = True
            driver["version"] = spec.driver_version().split(".", 1)[0]
    gpu_tolerations = tolerations(args.gpu_node_taints)
    values: dict = {
        "driver": driver,
        "toolkit": {"enabled": True},
        "devicePlugin": {"enabled": True},
        "dcgmExporter": {"enabled": True},
        "nfd": {"enabled": True},
        # The chart's CRD-upgrade hook off: gpufleet applies the chart's crds/ itself before the release (versions.
        # GPU_OPERATOR `crds`, docs/upgrades.md); the hook would be a second writer of the same CRDs and skips the
        # ComputeDomain ones (templates/upgrade_crd.yaml; values.yaml `operator.upgradeCRD: true` by default).
        "operator": {"upgradeCRD": False},
        "daemonsets": {"tolerations": gpu_tolerations},
        "node-feature-discovery": {"worker": {"tolerations": [
            _CONTROL_PLANE_TOLERATION, *tolerations([*args.gpu_node_taints, *args.nfd_extra_taints])]}},
    }
    if args.device_plugin_config:
        values["devicePlugin"]["config"] = dict(args.device_plugin_config)
    if args.metrics:
        # dcgmExporter.config {name, create, data}: the chart's templates/dcgm_exporter_config.yaml renders the
        # ConfigMap (values.yaml shows the block commented out; tests/upstream/test_observability_upstream.py).
        values["dcgmExporter"] = {
            "enabled": True,
            **({"serviceMonitor": {"enabled": True, "honorLabels": True}} if args.service_monitor else {}),
            "config": {"name": dcgm_metrics.CONFIGMAP, "create": True, "data": dcgm_metrics.metrics_csv()},
        }
    if args.mig_strategy:
        values["mig"] = {"strategy": args.mig_strategy}
        values["migManager"] = {"enabled": True}
        if args.mig_parted_config:
            values["migManager"]["config"] = {"name": args.mig_parted_config, "default": "all-disabled"}
    if args.rdma and operator_driver:
        # The host's MLNX_OFED/DOCA driver (k3s), or the Network Operator's DOCA driver container where the platform
        # runs it (AKS InfiniBand: fact `ofed_driver_container`; GPU Operator docs, GPUDirect RDMA, useHostMofed).
        driver["rdma"] = {"enabled": True, "useHostMofed": not facts.get("ofed_driver_container", False)}
    if "containerd_config" in facts:
        # A platform that runs its own containerd with its own paths (k3s: NVIDIA/gpu-operator issues 238, 473, 1651).
        # config.toml, not config.toml.tmpl: the template breaks k3s's flannel CNI config (issue 473).
        values["toolkit"]["env"] = [
            {"name": "CONTAINERD_CONFIG", "value": facts["containerd_config"]},
            {"name": "CONTAINERD_SOCKET", "value": facts["containerd_socket"]},
            {"name": "CONTAINERD_RUNTIME_CLASS", "value": "nvidia"},
            {"name": "CONTAINERD_SET_AS_DEFAULT", "value": "true"},
        ]
    if facts.get("driver_preinstalled"):
        # EKS GPU AMIs ship the driver and the container toolkit: installing either again makes the
        # operands crash-loop (DESIGN.md section 7; AMI driver branch in catalog/aws_instances.yaml).
        values["driver"] = {"enabled": False}
        values["toolkit"] = {"enabled": not facts.get("toolkit_preinstalled", False)}
        if facts.get("device_plugin_preinstalled"):
            # Bottlerocket NVIDIA variants run their own device plugin: a second one advertises every GPU twice.
            values["devicePlugin"]["enabled"] = False
    return values


def policy_annotations(args: GpuOperatorArgs) -> dict[str, str]:
    """What the policy pack judges the stack's driver by (policies/README.md, "What reaches the pack")."""
    out = {}
    if args.cuda_versions:
        out[labels.CUDA_VERSIONS_ANNOTATION] = ",".join(args.cuda_versions)
    if args.spec.driver.source == "preinstalled" and args.spec.driver.version:
        out[labels.PREINSTALLED_DRIVER_ANNOTATION] = args.spec.driver.version
    return out


class GpuOperator(pulumi.ComponentResource):
    """The GPU Operator's namespace and Helm release on the cluster's Kubernetes provider."""

    def __init__(
        self, name: str, args: GpuOperatorArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:GpuOperator", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        self.values = operator_values(args, access.facts)
        if args.pin_digests:
            operator_driver = args.spec.driver.source == "operator" and self.values["driver"].get("enabled", False)
            self.values = pinned_values(
                self.values, versions.GPU_OPERATOR.name, args.spec.version,
                when=frozenset({"operator-driver"} if operator_driver else ()),
                fill={"driver": args.spec.driver_version() or ""},
            )
        # Operands are privileged (driver, toolkit, device plugin): the namespace must allow it.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={
                "name": args.namespace,
                "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
                "annotations": policy_annotations(args),
            },
            opts=child,
        )
        extra_deps: list[pulumi.Resource] = []
        if access.facts.get("critical_pods_need_quota"):
            # GKE admits system-node-critical / system-cluster-critical pods outside kube-system only up to a
            # ResourceQuota for those priority classes (NVIDIA GPU Operator docs, google-gke.rst).
            self.quota = k8s.core.v1.ResourceQuota(
                f"{name}-quota",
                metadata={"name": "gpu-operator-quota", "namespace": self.namespace.metadata["name"]},
                spec={
                    "hard": {"pods": "100"},
                    "scopeSelector": {"matchExpressions": [{
                        "operator": "In", "scopeName": "PriorityClass",
                        "values": ["system-node-critical", "system-cluster-critical"],
                    }]},
                },
                opts=child,
            )
            extra_deps.append(self.quota)
        chart = replace(versions.GPU_OPERATOR, version=args.spec.version)  # the stack may pick another known release
        self.release = pinned_release(
            name, chart, self.namespace.metadata["name"], self.values, access, parent=self, depends_on=extra_deps, timeout=900
        )
        self.register_outputs({"namespace": args.namespace, "chartVersion": args.spec.version})
