"""GpuSharing: the device-plugin config (time-slicing / MPS / MIG strategy per pool) and, for custom MIG
layouts, a mig-parted config, as ConfigMaps in the GPU Operator's namespace.

The GPU Operator reads them through its values (`devicePlugin.config`, `migManager.config`, `mig.strategy`,
see `operator_settings`), and each node picks its entry by label (`nvidia.com/device-plugin.config`,
`nvidia.com/mig.config`, set by gpufleet/base/node_labels.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s
import yaml

from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.base.node_labels import sharing_labels
from gpufleet.base import sharing
from gpufleet.base.spec import NodePoolSpec

DEVICE_PLUGIN_CONFIG_MAP = "gpufleet-device-plugin-config"
MIG_PARTED_CONFIG_MAP = "gpufleet-mig-parted-config"
# The MIG manager reads a custom ConfigMap only from this key (chart values: migManager.config).
MIG_PARTED_KEY = "config.yaml"


@dataclass(frozen=True)
class GpuSharingArgs:
    pools: list[NodePoolSpec]
    """Every GPU pool of the stack (pools without sharing get no entry; nodes without a label use the default)."""
    namespace: pulumi.Input[str]
    """The GPU Operator's namespace (pass the operator's Namespace output so the ConfigMaps wait for it)."""


def device_plugin_data(pools: list[NodePoolSpec]) -> dict[str, str]:
    """ConfigMap data: a default entry (no sharing) and one `version: v1` entry per sharing pool, by pool name."""
    data = {sharing.DEFAULT_ENTRY: _dump({"version": "v1", "flags": {"migStrategy": "none"}})}
    for pool in pools:
        if sharing.shares(pool):
            data[pool.name] = _dump(sharing.device_plugin_entry(pool))
    return data


def mig_parted_data(pools: list[NodePoolSpec]) -> Optional[dict[str, str]]:
    """ConfigMap data of the custom mig-parted config, or None when every layout is an upstream one."""
    if not sharing.needs_custom_mig_config(pools):
        return None
    return {MIG_PARTED_KEY: _dump(sharing.mig_parted_config(pools))}


def operator_settings(pools: list[NodePoolSpec]) -> dict:
    """GpuOperatorArgs fields that point the GPU Operator at these ConfigMaps ({} when no pool shares)."""
    if not any(sharing.shares(p) for p in pools):
        return {}
    out: dict = {"device_plugin_config": {"name": DEVICE_PLUGIN_CONFIG_MAP, "default": sharing.DEFAULT_ENTRY}}
    strategy = sharing.mig_strategy(pools)
    if strategy:
        out["mig_strategy"] = strategy
    if sharing.needs_custom_mig_config(pools):
        out["mig_parted_config"] = MIG_PARTED_CONFIG_MAP
    return out


def _dump(doc: dict) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


class GpuSharing(pulumi.ComponentResource):
    """The sharing ConfigMaps the GPU Operator's device plugin and MIG manager read."""

    def __init__(
        self, name: str, args: GpuSharingArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:GpuSharing", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        # The operator's device plugin waits for this ConfigMap (its config-manager sidecar retries), so
        # it may land after the Helm release starts; no ordering against the release is needed.
        self.device_plugin_config = k8s.core.v1.ConfigMap(
            f"{name}-device-plugin-config",
            metadata={"name": DEVICE_PLUGIN_CONFIG_MAP, "namespace": args.namespace},
            data=device_plugin_data(args.pools),
            opts=child,
        )
        self.mig_parted_config = None
        mig_data = mig_parted_data(args.pools)
        if mig_data is not None:
            self.mig_parted_config = k8s.core.v1.ConfigMap(
                f"{name}-mig-parted-config",
                metadata={"name": MIG_PARTED_CONFIG_MAP, "namespace": args.namespace},
                data=mig_data,
                opts=child,
            )
        # k3s applies `node-label` only when a node first registers, so a pool whose sharing changes later
        # would keep its old selectors: patch them onto the pool's existing nodes as well (k3s docs, "Node
        # Labels and Taints"). patchForce: the kubelet owns the labels it registered with.
        self.label_patches = [
            k8s.core.v1.NodePatch(
                f"{name}-labels-{host.name}",
                metadata={
                    "name": host.name,
                    "labels": sharing_labels(pool),
                    "annotations": {"pulumi.com/patchForce": "true"},
                },
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=access.ready or [])),
            )
            for pool in args.pools
            if sharing.shares(pool)
            for host in pool.hosts
        ]
        self.register_outputs({
            "devicePluginConfig": DEVICE_PLUGIN_CONFIG_MAP,
            "migPartedConfig": MIG_PARTED_CONFIG_MAP if mig_data is not None else None,
        })
