"""Unit tests: the XID table (gpufleet/base/catalog/xid.yaml) against NVIDIA's Xid Catalog
(docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, sheet 'Xids', read 2026-12-03)."""

import pytest

from gpufleet.base import catalog


@pytest.mark.parametrize(
    "code, immediate, investigatory",
    [
        # The catalog's Resolution Bucket (Immediate Action) and (Investigatory Action) columns, row by row.
        (8, "RESTART_APP", "CONTACT_SUPPORT"),
        (13, "RESTART_APP", "WORKFLOW_XID_13"),
        (31, "RESTART_APP", "WORKFLOW_XID_31"),
        (43, "IGNORE", "CONTACT_SUPPORT"),
        (46, "RESET_GPU", "CONTACT_SUPPORT"),
        (48, "WORKFLOW_XID_48", "WORKFLOW_XID_48"),
        (62, "RESET_GPU", "CONTACT_SUPPORT"),
        (63, "IGNORE", "IGNORE"),
        (64, "RESET_GPU", "CONTACT_SUPPORT"),
        (69, "RESTART_APP", "CHECK_APP/CUDA"),
        (74, "WORKFLOW_NVLINK_ERR", "CONTACT_SUPPORT"),
        (79, "RESTART_BM", "CONTACT_SUPPORT"),
        (92, "IGNORE", "CONTACT_SUPPORT"),
        (94, "RESTART_APP", "IGNORE (sympathetic)"),
        (95, "RESET_GPU", "IGNORE (sympathetic)"),
        (109, "RESET_GPU", "CONTACT_SUPPORT"),
        (119, "RESET_GPU", "INVESTIGATE_SW"),
        (120, "RESET_GPU", "INVESTIGATE_SW"),
        (136, "RESET_GPU", "INVESTIGATE_LINK_SI"),
        (140, "RESET_GPU", "CONTACT_SUPPORT"),
        (143, "RESET_GPU", "CONTACT_SUPPORT"),
        (149, "WORKFLOW_NVLINK5_ERR", "WORKFLOW_NVLINK5_ERR"),
        (154, "XID_154", "N/A Informational only regarding another Xid"),
        (158, "RESET_GPU", "CONTACT_SUPPORT"),
    ],
)
def test_nvidia_actions_per_xid(code, immediate, investigatory):
    x = catalog.xids()[code]
    assert (x.action.name, x.investigate) == (immediate, investigatory)


def test_every_row_is_read_from_the_xid_catalog():
    assert all("xid_catalog" in x.sources for x in catalog.xids().values())
    # NVLink 5 XIDs exist on Blackwell only; XID 74 on A100/H100 only; 136 (ALI link training) on H100 only.
    assert {catalog.xids()[c].applies for c in range(144, 151)} == {("B100", "GB200")}
    assert catalog.xids()[74].applies == ("A100", "H100")
    assert catalog.xids()[136].applies == ("H100",)


def test_unsourced_or_no_action_xids_stay_out():
    # 61 is "Unused" on every GPU the catalog covers; 45 follows another XID; 121 is GB200-only and IGNORE.
    assert not {45, 61, 121} & set(catalog.xids())


def test_severity_follows_nvidias_action_not_the_class():
    b = catalog.xid_buckets()
    assert (b["RESET_GPU"].severity, b["RESTART_BM"].severity, b["RESTART_APP"].severity, b["IGNORE"].severity) == \
        ("critical", "critical", "warning", "info")
    memory = catalog.xid_classes()["memory"].by_action()
    assert [x.code for x in memory["RESTART_APP"]] == [94]
    assert [x.code for x in memory["IGNORE"]] == [63, 92]


def test_every_class_has_xids_and_every_xid_a_class():
    classes = catalog.xid_classes()
    assert all(c.xids for c in classes.values())
    assert sorted(c for cls in classes.values() for c in cls.xids) == sorted(catalog.xids())
