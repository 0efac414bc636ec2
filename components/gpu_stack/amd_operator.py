"""AmdGpuOperator: the AMD GPU Operator by Helm, one DeviceConfig per AMD pool, and the Device Config Manager's
partition profiles (issue 17).

Upstream (ROCm/gpu-operator at versions.AMD_GPU_OPERATOR; ../shared/reference/amd-gpu-operator/):
- The chart installs the operator (and KMM, NFD); the operands come from `DeviceConfig` custom resources
  (`amd.com/v1alpha1`), each on the nodes its `selector` matches. gpufleet writes one per AMD pool, selecting the
  pool's `gpufleet.io/pool` label, and turns off the chart's default DeviceConfig (`crds.defaultCR.install`), which
  would select every AMD node a second time.
- Driver: inbox (`driver.enable: false`) or built and loaded by KMM at a pinned version (`driver.enable: true`,
  `blacklist: true` so the inbox module does not load first).
- Device plugin with the `single` resource naming strategy: whole GPUs and partitions alike are `amd.com/gpu`
  (docs/device_plugin/device-plugin.md), node labeller, metrics exporter (the KEDA trigger's source).
- Partitions: the Device Config Manager (`configManager.enable`) applies the profile a node's
  `dcm.amd.com/gpu-config-profile` label names, from the ConfigMap `configManager.config.name`
  (docs/dcm/device-config-manager-configmap.md, applying-partition-profiles.rst). gpufleet writes one profile
  per partitioned pool, named after it, and labels the pool's nodes with it (gpufleet/base/node_labels.py).
- Mixed clusters: one node-feature-discovery per cluster. With the NVIDIA GPU Operator present its NFD serves both
  (its worker tolerates the AMD pools' taint, GpuOperatorArgs.nfd_extra_taints) and this chart's is off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base import labels, sharing, versions
from gpufleet.base.catalog import images
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.gpu_stack.operator import tolerations
from gpufleet.components.helm_chart import pinned_release
from gpufleet.components.image_mirror import MIRROR_FACT
from gpufleet.base.node_labels import pool_taints
from gpufleet.base.spec import AmdGpuOperatorSpec, NodePoolSpec

NAMESPACE = "kube-amd-gpu"  # the namespace AMD's docs install the operator in
DCM_CONFIG_MAP = "gpufleet-dcm-config"
DCM_KEY = "config.json"  # the key DCM reads under /etc/config-manager/
DEVICE_CONFIG_API = "amd.com/v1alpha1"
DEVICE_CONFIG_PREFIX = "gpufleet-"
# The chart's NFD worker tolerations (values.yaml node-feature-discovery.worker.tolerations): a list in values
# replaces the chart's, so gpufleet repeats them next to the AMD pools' taints.
_CHART_NFD_TOLERATIONS = [
    {"key": labels.AMD_DCM_TAINT_KEY, "operator": "Equal", "value": "up", "effect": "NoExecute"},
    {"key": "amd-gpu-unhealthy", "operator": "Exists", "effect": "NoSchedule"},
]
# Node labeller flags that label partition capabilities and the current partition (device-plugin.md).
_PARTITION_LABELLER_ARGS = ["compute-partitioning-supported", "memory-partitioning-supported", "compute-memory-partition"]


@dataclass(frozen=True)
class AmdGpuOperatorArgs:
    spec: AmdGpuOperatorSpec
    """Release and driver choice from the stack spec (gpufleet:amdGpuOperator)."""
    pools: list[NodePoolSpec]
    """The stack's AMD pools: one DeviceConfig each, a DCM profile for each partitioned one."""
    namespace: str = NAMESPACE
    """Namespace the operator, its DeviceConfigs and their operands run in."""
    own_nfd: bool = True
    """Run the chart's node-feature-discovery; False when another one serves the cluster (the NVIDIA GPU
    Operator's, in a mixed cluster): two NFD masters fight over the same node labels."""
    rocm_versions: tuple[str, ...] = ()
    """ROCm releases the workloads use (gpufleet:workloads.rocmVersions), declared on the namespace for the policy
    pack (gpu-driver-cuda-alignment); default: none declared."""
    patch_nodes: bool = True
    """k3s: also patch the DCM profile label onto the partitioned pools' existing nodes (k3s applies `node-label`
    only when a node first registers); default: on."""


def pool_tolerations(pool: NodePoolSpec) -> list[dict]:
    """What the pool's operands tolerate: its own taints (amd.com/gpu and the pool's extra ones), never amd-dcm (the
    DCM docs: operands must restart after partitioning, so they must not tolerate the DCM's NoExecute taint)."""
    return tolerations(pool_taints(pool))


def device_config_name(pool: NodePoolSpec) -> str:
    return f"{DEVICE_CONFIG_PREFIX}{pool.name}"


def dcm_config(pools: list[NodePoolSpec]) -> Optional[dict]:
    """The DCM config.json: one profile per partitioned pool; None without partitioned pools."""
    parted = sharing.partitioned_amd_pools(pools)
    if not parted:
        return None
    return {"gpu-config-profiles": {sharing.dcm_profile_name(p): sharing.dcm_profile(p) for p in parted}}


def device_config_spec(pool: NodePoolSpec, spec: AmdGpuOperatorSpec, mirror: Optional[str] = None) -> dict:
    """The DeviceConfig `spec` for one AMD pool (every field in the DeviceConfig CRD of the pinned release). With a
    registry `mirror`, every operand image the operator starts for it is named from the mirror
    (versions.AMD_DEVICE_CONFIG_IMAGES; the config manager's only on partitioned pools, where it runs)."""
    tol = pool_tolerations(pool)
    driver: dict = {"enable": spec.driver.source == "operator"}
    if driver["enable"]:
        driver.update({"blacklist": True, "version": spec.driver_version(), "tolerations": tol})
        if spec.driver.image:
            driver["image"] = spec.driver.image
    partitioned = pool.sharing.mode == "partition"
    plugin: dict = {
        "enableDevicePlugin": True,
        "devicePluginArguments": {"resource_naming_strategy": "single"},
        "devicePluginTolerations": tol,
        "enableNodeLabeller": True,
        "nodeLabellerTolerations": tol,
    }
    if partitioned:
        plugin["nodeLabellerArguments"] = list(_PARTITION_LABELLER_ARGS)
    out: dict = {
        "selector": {labels.POOL_LABEL: pool.name},
        "driver": driver,
        "devicePlugin": plugin,
        "metricsExporter": {"enable": True, "tolerations": tol},
    }
    if partitioned:
        out["configManager"] = {"enable": True, "config": {"name": DCM_CONFIG_MAP}, "configManagerTolerations": tol}
    if mirror:
        for path, image in versions.AMD_DEVICE_CONFIG_IMAGES.items():
            if path.startswith("configManager.") and not partitioned:
                continue
            node = out
            *parents, key = path.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[key] = images.mirrored(image, mirror)
    return out


def operator_values(args: AmdGpuOperatorArgs) -> dict:
    """Helm values for gpu-operator-charts; every key path exists in the chart's values.yaml."""
    amd_taints = [t for p in args.pools for t in pool_taints(p)]
    nfd: dict = {"enabled": args.own_nfd}
    if args.own_nfd:
        nfd["worker"] = {"tolerations": [*_CHART_NFD_TOLERATIONS, *tolerations(amd_taints)]}
    return {
        "crds": {"defaultCR": {"install": False}},
        "node-feature-discovery": nfd,
        # The chart's NodeFeatureRule labels AMD GPU nodes feature.node.kubernetes.io/amd-gpu (works with any NFD).
        "installdefaultNFDRule": True,
        # KMM builds and loads the driver; only needed when the operator manages it.
        "kmm": {"enabled": args.spec.driver.source == "operator"},
        # The remediation workflow controller (Argo Workflows' workflow-controller) and Argo's CRDs serve a
        # DeviceConfig's spec.remediationWorkflow, which the DeviceConfigs gpufleet writes leave off (the pinned
        # chart's values.yaml deviceConfig.spec.remediationWorkflow.enable: false): off, so the chart's CRDs gpufleet
        # applies (versions.AMD_GPU_OPERATOR crd_dirs) are its own, NFD's and KMM's (docs/upgrades.md).
        "remediation": {"enabled": False, "installCRDs": False},
        # One writer of the CRDs: gpufleet applies them from the pinned archive before the release. The chart's own
        # pre-upgrade/pre-rollback hook (its templates/pre-upgrade-hook.yaml, `upgradeCRD`) would re-apply them with
        # --force-conflicts from the operator image, unseen by the review; off, as the NVIDIA GPU Operator's.
        # Its post-delete hook (templates/post-delete-hook.yaml) deletes those CRDs on uninstall and no value turns it
        # off, nor does any option of Pulumi's Release on delete: the pin says where and why
        # (versions.AMD_GPU_OPERATOR crds_deleted_on_uninstall), the plan warns, docs/upgrades.md says what to do.
        "upgradeCRD": False,
    }


def policy_annotations(args: AmdGpuOperatorArgs) -> dict[str, str]:
    out = {}
    if args.rocm_versions:
        out[labels.ROCM_VERSIONS_ANNOTATION] = ",".join(args.rocm_versions)
    driver = args.spec.driver_version()
    if driver:
        out[labels.AMD_DRIVER_ANNOTATION] = driver
    return out


class AmdGpuOperator(pulumi.ComponentResource):
    """The AMD GPU Operator's namespace and Helm release, a DeviceConfig per AMD pool and the DCM profiles."""

    def __init__(
        self, name: str, args: AmdGpuOperatorArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:AmdGpuOperator", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        self.values = operator_values(args)
        # Operands are privileged (driver, device plugin, exporter): the namespace must allow it.
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns",
            metadata={
                "name": args.namespace,
                "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
                "annotations": policy_annotations(args),
            },
            opts=child,
        )
        chart = versions.AMD_GPU_OPERATOR
        if args.spec.version != chart.version:
            chart = versions.HelmChart(chart.name, chart.repo, args.spec.version, args.spec.version)
        self.release = pinned_release(
            name, chart, self.namespace.metadata["name"], self.values, access, parent=self, timeout=900
        )
        self.dcm_config = None
        config = dcm_config(args.pools)
        if config is not None:
            self.dcm_config = k8s.core.v1.ConfigMap(
                f"{name}-dcm-config",
                metadata={"name": DCM_CONFIG_MAP, "namespace": self.namespace.metadata["name"]},
                data={DCM_KEY: json.dumps(config, indent=2)},
                opts=child,
            )
        # The DeviceConfig CRD comes with the chart: each DeviceConfig waits for the release.
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.release]))
        self.device_configs = [
            k8s.apiextensions.CustomResource(
                f"{name}-device-config-{pool.name}",
                api_version=DEVICE_CONFIG_API,
                kind="DeviceConfig",
                metadata={"name": device_config_name(pool), "namespace": self.namespace.metadata["name"]},
                spec=device_config_spec(pool, args.spec, access.facts.get(MIRROR_FACT)),
                opts=after,
            )
            for pool in args.pools
        ]
        # k3s applies `node-label` only when a node first registers: a pool whose partition changes later keeps its
        # old profile label, so patch it onto the existing nodes too (as GpuSharing does for NVIDIA selectors).
        self.label_patches = [
            k8s.core.v1.NodePatch(
                f"{name}-labels-{host.name}",
                metadata={
                    "name": host.name,
                    "labels": {labels.AMD_DCM_PROFILE_LABEL: sharing.dcm_profile_name(pool)},
                    "annotations": {"pulumi.com/patchForce": "true"},
                },
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=access.ready or [])),
            )
            for pool in (sharing.partitioned_amd_pools(args.pools) if args.patch_nodes else [])
            for host in pool.hosts
        ]
        self.register_outputs({
            "namespace": args.namespace,
            "chartVersion": args.spec.version,
            "deviceConfigs": [device_config_name(p) for p in args.pools],
        })
