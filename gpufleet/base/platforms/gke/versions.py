"""gke: versions traits (gpufleet/base/platforms/contract/versions.py says what each one means)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from gpufleet.base import versions
from gpufleet.base.catalog import charges
from gpufleet.base.catalog import kubernetes as k8s_catalog
from gpufleet.base.platforms.contract.versions import CONTROL_PLANE, NODE_POOL, MoveRule, VersionTraits
from gpufleet.base.spec.checks.lifecycle_checks import calendar_warnings
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.platforms.gke import GkePoolSpec, driver_branch_for

NAMESPACE = "gpufleet"
# What follows a GKE pool's nodes outside any change of the stack, with the GKE documents that say so:
# - node auto-upgrade: GKE upgrades a pool's nodes to the control plane's version, which the release channel moves;
#   pools of a cluster enrolled in a release channel always have it ("Auto-upgrading nodes",
#   docs.cloud.google.com/kubernetes-engine/docs/concepts/node-auto-upgrades; "About release channels": node
#   auto-upgrade cannot be disabled for clusters enrolled in a release channel);
# - the driver: with GKE's driver installation, nodes get the DEFAULT or LATEST driver of their GKE version ("Run GPUs in
#   Standard node pools", gpu-driver-version; gcp_machines.yaml gke_driver_branches records the branch per minor), so a
#   node upgrade can move the driver, and a new minor its branch;
# - the maintenance window: GKE's daily window is "a four-hour timeframe", "upgrades can occur on any day of the week",
#   and "GKE reserves the right to roll out unplanned, emergency upgrades outside of maintenance windows" ("Maintenance
#   Window", docs.cloud.google.com/kubernetes-engine/docs/how-to/maintenance-window); automatic changes happen "when
#   there is an open maintenance window and no active maintenance exclusion" ("Maintenance windows and exclusions",
#   concepts/maintenance-windows-and-exclusions), so without a window they may start at any time;
# - exclusion scopes (GKE API MaintenanceExclusionOptions.Scope): NO_UPGRADES "excludes all upgrades, including patch
#   upgrades and minor upgrades across control planes and nodes" (at most 30 days); NO_MINOR_UPGRADES "only patches are
#   allowed"; NO_MINOR_OR_NODE_UPGRADES "also exclude all node pool upgrades. Only control plane patches are allowed".
GKE_DOCS = ("GKE 'Auto-upgrading nodes', 'About release channels', 'Run GPUs in Standard node pools', 'Maintenance "
            "windows and exclusions'")
SCOPE_HOLDS = {
    "NO_UPGRADES": "every upgrade (the pool's nodes and driver stay)",
    "NO_MINOR_OR_NODE_UPGRADES": "node upgrades (the pool's nodes and driver stay) and minor upgrades",
    "NO_MINOR_UPGRADES": "minor upgrades only: node patch upgrades, with the driver of the new patch, still come",
}


def _exclusions(gke: Any, day: dt.date) -> str:
    if not gke.maintenance_exclusions:
        return ("no maintenance exclusion holds them back (cluster.gke.maintenanceExclusions, e.g. scope "
                "NO_MINOR_OR_NODE_UPGRADES around a training run)")
    parts = []
    for x in gke.maintenance_exclusions:
        end = "until the minor's end of support" if x.until_end_of_support else f"until {x.end_time}"
        ended = (not x.until_end_of_support and x.end_time is not None
                 and dt.datetime.fromisoformat(x.end_time.replace("Z", "+00:00")).date() < day)
        parts.append(f"exclusion '{x.name}' ({x.scope}, from {x.start_time} {end}) holds back {SCOPE_HOLDS[x.scope]}"
                     + (" (ended)" if ended else ""))
    return "; ".join(parts)


class GkeVersions(VersionTraits):
    kubernetes_versions = versions.GKE_KUBERNETES_VERSIONS
    unknown_version = "is not a GKE version gpufleet plans for"
    move_rules = (
        MoveRule(CONTROL_PLANE, "no-downgrade",
                 source="GKE 'Manually upgrading a cluster or node pool' "
                        "(docs.cloud.google.com/kubernetes-engine/docs/how-to/upgrading-a-cluster), downgrading: a "
                        "control plane goes back only to an earlier patch of its minor (or rolls back a two-step minor "
                        "upgrade still in its soak), never to an earlier minor",
                 instead="a lower minor needs a new cluster (and a migration of the workloads)"),
        MoveRule(CONTROL_PLANE, "step", limit=1,
                 source="GKE 'About GKE cluster upgrades' and 'Manually upgrading a cluster': control plane upgrades are "
                        "sequential, one minor version at a time (node pools may then skip a minor)"),
        # GKE's own limit, stricter than the kubelet skew (three).
        MoveRule(NODE_POOL, "skew", limit=2,
                 source="GKE 'GKE versioning and support' (docs.cloud.google.com/kubernetes-engine/versioning): nodes "
                        "can't run a newer version than the control plane and may trail it by at most two minor versions"),
    )

    def driver_key(self, spec: Any) -> str:
        """With GKE's own GPU stack each pool chooses GKE's driver (as catalog_checks._drivers finds it)."""
        return "nodePools[*].gke.gpuDriverVersion" if spec.cluster.gke.managed_gpu_stack else super().driver_key(spec)

    def node_image_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """A note per GPU pool whose nodes GKE upgrades itself (node auto-upgrade: always in a release channel): the
        node version and, with GKE's driver, the NVIDIA driver follow the channel outside any change of the stack, and
        when the maintenance window and exclusions let them (GKE_DOCS). Pools with auto-upgrade off (releaseChannel
        UNSPECIFIED and gke.autoUpgrade false, or queued capacity) move only with the stack: no note."""
        gke = spec.cluster.gke
        channel = gke.release_channel
        if "maintenance_window" in gke.model_fields_set:
            window = (f"GKE starts them in the daily 4-hour maintenance window from {gke.maintenance_window} UTC, any day "
                      "of the week")
        else:
            window = (f"the stack sets no maintenance window (cluster.gke.maintenanceWindow), so gpufleet sets GKE's daily "
                      f"4-hour window from {gke.maintenance_window} UTC, any day of the week (without a window GKE could "
                      "start them at any time)")
        window += "; GKE may still roll out emergency upgrades outside it"
        out = []
        for i, pool in enumerate(spec.node_pools):
            opts = pool.gke or GkePoolSpec()
            if (not opts.auto_upgrade and channel == "UNSPECIFIED") or pool.capacity == "queued":
                continue
            follows = (f"its node version follows release channel {channel} outside any change of this stack (the "
                       "channel keeps node auto-upgrade on" if channel != "UNSPECIFIED" else
                       "its node version follows the control plane's outside any change of this stack (no release "
                       "channel, node auto-upgrade on")
            if gke.managed_gpu_stack:
                branch = driver_branch_for(spec, pool)
                today = f"branch {branch} on GKE {spec.cluster.kubernetes_version} today" if branch else "branch not recorded"
                driver = (f"the NVIDIA driver is GKE's {opts.gpu_driver_version} for the node's GKE version ({today}): a "
                          "node upgrade can move it, a new minor its branch (check workloads.cudaVersions)")
            else:
                driver = "the NVIDIA driver is the GPU Operator's (gpuOperator.driver), which a node upgrade does not move"
            up = opts.upgrade
            pace = (f"{up.max_surge} extra and {up.max_unavailable} unavailable node(s) at a time" if up.strategy == "surge"
                    else "blue-green: a new set of nodes beside the old")
            out.append(Problem(stack, f"{NAMESPACE}:nodePools[{i}].gke.autoUpgrade",
                               f"pool '{pool.name}': {follows}: GKE upgrades the nodes to the control plane's version, "
                               f"{pace}); {driver}. When: {window}; {_exclusions(gke, day)} ({GKE_DOCS})"))
        return out

    def kubernetes_warnings(self, stack: str, spec: Any, day: dt.date) -> list:
        """GKE's calendar (catalog kubernetes.yaml), with the Extended channel's fee, or GKE's upgrade on the other
        channels."""
        channel = spec.cluster.gke.release_channel
        extended = f"USD {charges.gke_extended_hourly():.2f} per cluster-hour instead of {charges.gke_cluster_fee().value:.2f}"
        if channel == "EXTENDED":
            cost = f"; in extended support the cluster management fee is {extended} (Extended channel)"
        else:
            cost = (f"; on the {channel} channel GKE upgrades the cluster at the end of standard support (only the "
                    f"Extended channel keeps the minor, at {extended})")
        return calendar_warnings(stack, spec, day, "GKE", k8s_catalog.gke_kubernetes_version, cost)
