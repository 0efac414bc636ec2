"""GKE pools say when their node version and driver follow the release channel, and what the maintenance window and
exclusions allow (issue 50): a plan warning per GPU pool that GKE upgrades itself, which the review lists with the
head plan's warnings."""

from __future__ import annotations

import datetime as dt

from gpufleet.base.platforms.gke.versions import GkeVersions
from gpufleet.base.spec.checks.catalog_checks import catalog_warnings
from tests.helpers import example_config, load_config

DAY = dt.date(2026, 12, 5)
DOCS = ("(GKE 'Auto-upgrading nodes', 'About release channels', 'Run GPUs in Standard node pools', 'Maintenance windows "
        "and exclusions')")


def _notes(config: dict) -> list[tuple[str, str]]:
    return [(w.path, w.message) for w in GkeVersions().node_image_warnings("s", load_config(config, "s"), DAY)]


def test_a_pool_in_a_release_channel_says_its_version_and_driver_follow_it_and_when():
    (first, second) = _notes(example_config("prod-gke"))
    assert first == ("gpufleet:nodePools[0].gke.autoUpgrade",
                     "pool 'h100-train': its node version follows release channel REGULAR outside any change of this "
                     "stack (the channel keeps node auto-upgrade on: GKE upgrades the nodes to the control plane's "
                     "version, 0 extra and 1 unavailable node(s) at a time); the NVIDIA driver is GKE's LATEST for the "
                     "node's GKE version (branch 580 on GKE 1.35 today): a node upgrade can move it, a new minor its "
                     "branch (check workloads.cudaVersions). When: GKE starts them in the daily 4-hour maintenance window "
                     "from 03:00 UTC, any day of the week; GKE may still roll out emergency upgrades outside it; no "
                     "maintenance exclusion holds them back (cluster.gke.maintenanceExclusions, e.g. scope "
                     f"NO_MINOR_OR_NODE_UPGRADES around a training run) {DOCS}")
    assert second[0] == "gpufleet:nodePools[1].gke.autoUpgrade" and second[1].startswith("pool 'l4-infer': ")


def test_a_stack_without_a_maintenance_window_is_told_what_that_means():
    c = example_config("prod-gke")
    del c["gpufleet:cluster"]["gke"]["maintenanceWindow"]
    (_, message), _ = _notes(c)
    assert ("When: the stack sets no maintenance window (cluster.gke.maintenanceWindow), so gpufleet sets GKE's daily "
            "4-hour window from 03:00 UTC, any day of the week (without a window GKE could start them at any time); "
            "GKE may still roll out emergency upgrades outside it;") in message


def test_exclusions_say_what_they_hold_back_and_an_ended_one_says_so():
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["gke"]["maintenanceExclusions"] = [
        {"name": "run", "startTime": "2026-12-01T00:00:00Z", "endTime": "2026-12-20T00:00:00Z", "scope": "NO_UPGRADES"},
        {"name": "old", "startTime": "2026-10-01T00:00:00Z", "endTime": "2026-11-01T00:00:00Z"},
        {"name": "minors", "startTime": "2026-12-01T00:00:00Z", "untilEndOfSupport": True, "scope": "NO_MINOR_UPGRADES"},
    ]
    (_, message), _ = _notes(c)
    assert message.endswith(
        "exclusion 'run' (NO_UPGRADES, from 2026-12-01T00:00:00Z until 2026-12-20T00:00:00Z) holds back every upgrade "
        "(the pool's nodes and driver stay); exclusion 'old' (NO_MINOR_OR_NODE_UPGRADES, from 2026-10-01T00:00:00Z until "
        "2026-11-01T00:00:00Z) holds back node upgrades (the pool's nodes and driver stay) and minor upgrades (ended); "
        "exclusion 'minors' (NO_MINOR_UPGRADES, from 2026-12-01T00:00:00Z until the minor's end of support) holds back "
        f"minor upgrades only: node patch upgrades, with the driver of the new patch, still come {DOCS}")


def test_pools_with_auto_upgrade_off_move_only_with_the_stack_and_get_no_note():
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["gke"]["releaseChannel"] = "UNSPECIFIED"
    c["gpufleet:nodePools"][0]["gke"]["autoUpgrade"] = False
    ((path, message),) = _notes(c)
    assert path == "gpufleet:nodePools[1].gke.autoUpgrade"
    assert message.startswith("pool 'l4-infer': its node version follows the control plane's outside any change of "
                              "this stack (no release channel, node auto-upgrade on: ")


def test_with_the_gpu_operator_the_driver_does_not_follow_the_node():
    c = example_config("prod-gke")
    c["gpufleet:cluster"]["gke"]["gpuStack"] = "operator"
    c["gpufleet:gpuOperator"] = {"enabled": True, "driver": {"source": "operator"}}
    for pool in c["gpufleet:nodePools"]:
        pool["gke"].pop("gpuDriverVersion", None)
        pool["rdma"] = False  # GPUDirect needs COS nodes, the operator runs Ubuntu
    (_, message), _ = _notes(c)
    assert ("; the NVIDIA driver is the GPU Operator's (gpuOperator.driver), which a node upgrade does not move. When:"
            in message)


def test_the_notes_are_plan_warnings():
    paths = [w.path for w in catalog_warnings("s", load_config(example_config("prod-gke"), "s"), DAY)]
    assert paths.count("gpufleet:nodePools[0].gke.autoUpgrade") == 1
