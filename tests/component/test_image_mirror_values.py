"""components/image_mirror.py on small values (issue 56: the registry mirror's mutants all survived, since no test
called it with a mirror). One chart per way a values block spells an image (images.yaml `mirror` fields), each
expected value built from the catalog's own image so no version is spelled here."""

from __future__ import annotations

import pytest

from gpufleet.base.catalog import images
from gpufleet.components.image_mirror import MIRROR_FACT, mirrored_image, mirrored_values

M = "mirror.example.com:5000"


def _only(chart: str, fields: str, path: str = ""):
    """(version, slot) of the chart's mirror row spelled `fields` (at `path` when given)."""
    table = images._load("images.yaml")["mirror"][chart]
    for version, rows in table.items():
        for row in rows:
            if row.get("fields", "image") == fields and (not path or row["values"] == path):
                return version, images.ImageSlot(**row)
    raise AssertionError(f"{chart} has no {fields} row")


def _at(values: dict, path: str):
    for part in path.split("."):
        values = values[part]
    return values


def test_without_a_mirror_the_values_are_returned_as_given():
    values = {"operator": {"repository": "x"}}
    version, _ = _only("gpu-operator", "repository/image/version")
    assert mirrored_values(values, "gpu-operator", version, None) is values
    assert mirrored_values(values, "gpu-operator", version, "") is values


def test_a_chart_without_a_mirror_list_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="no mirror image list for chart no-such-chart 0.0.0 "):
        mirrored_values({}, "no-such-chart", "0.0.0", M)


def test_repository_image_version_keeps_the_image_and_version_fields():
    version, slot = _only("gpu-operator", "repository/image/version", "operator")
    given = {"operator": {"version": "keep-me", "image": "gpu-operator"}, "driver": {"enabled": False}}
    out = mirrored_values(given, "gpu-operator", version, M)
    repository, _ = images.split(slot.image)
    assert out["operator"] == {"version": "keep-me", "image": "gpu-operator",
                               "repository": f"{M}/{repository.rpartition('/')[0]}"}
    assert out["operator"]["repository"].startswith(f"{M}/nvcr.io/")
    assert given == {"operator": {"version": "keep-me", "image": "gpu-operator"}, "driver": {"enabled": False}}  # a copy
    assert out["driver"]["enabled"] is False  # its own image blocks are mirrored beside the switch


def test_repository_image_tag():
    version, slot = _only("network-operator", "repository/image/tag", "operator")
    out = mirrored_values({}, "network-operator", version, M)
    assert out["operator"]["repository"] == f"{M}/{images.split(slot.image)[0].rpartition('/')[0]}"


def test_repository_tag_names_the_whole_repository():
    version, slot = _only("gpu-operator", "repository/tag", "node-feature-discovery.image")
    out = mirrored_values({}, "gpu-operator", version, M)
    assert out["node-feature-discovery"]["image"] == {"repository": f"{M}/{images.split(slot.image)[0]}"}


def test_a_templated_tag_is_the_repository_before_it():
    version, slot = _only("cluster-autoscaler", "repository/tag", "image")
    assert "{" in slot.image
    out = mirrored_values({}, "cluster-autoscaler", version, M)
    assert out["image"]["repository"] == f"{M}/{slot.image.partition('{')[0].rstrip(':')}"


def test_a_digest_stays_in_the_chart_s_own_field():
    version, slot = _only("karpenter", "repository/tag/digest", "controller.image")
    assert "@sha256:" in slot.image
    out = mirrored_values({"controller": {"image": {"digest": "sha256:abc"}}}, "karpenter", version, M)
    assert out["controller"]["image"] == {"digest": "sha256:abc",
                                          "repository": f"{M}/{images.split(slot.image.partition('@')[0])[0]}"}


def test_registry_repository_sets_only_the_registry():
    version, slot = _only("keda", "registry/repository", "image.keda")
    out = mirrored_values({"image": {"keda": {"repository": "kedacore/keda"}}}, "keda", version, M)
    assert out["image"]["keda"] == {"repository": "kedacore/keda", "registry": f"{M}/{images.source_registry(slot.image)}"}


def test_a_reference_is_the_whole_image_and_a_given_one_wins():
    version, slot = _only("gateway-helm", "reference", "global.images.envoyGateway.image")
    out = mirrored_values({}, "gateway-helm", version, M)
    assert _at(out, slot.values) == images.mirrored(slot.image, M)
    assert _at(out, slot.values).startswith(f"{M}/docker.io/envoyproxy/")
    pinned = {"global": {"images": {"envoyGateway": {"image": "ghcr.io/me/gateway@sha256:abc"}}}}
    assert _at(mirrored_values(pinned, "gateway-helm", version, M), slot.values) == f"{M}/ghcr.io/me/gateway@sha256:abc"


def test_an_image_field_and_a_subchart_left_off():
    version, slot = _only("gpu-operator-charts", "image", "remediation.controller")
    assert slot.enabled_by == "remediation.enabled"
    on = mirrored_values({}, "gpu-operator-charts", version, M)
    assert on["remediation"]["controller"] == {"image": images.mirrored(slot.image, M)}
    off = mirrored_values({"remediation": {"enabled": False}}, "gpu-operator-charts", version, M)
    assert off["remediation"] == {"enabled": False}
    given = mirrored_values({"remediation": {"enabled": True, "controller": {"image": "quay.io/me/wf:1"}}},
                            "gpu-operator-charts", version, M)
    assert given["remediation"]["controller"] == {"image": f"{M}/quay.io/me/wf:1"}


def test_every_listed_slot_of_every_chart_is_written():
    """Every slot after the first too (a `continue` turned `break` after a reference slot left the rest unmirrored)."""
    for chart, versions in images._load("images.yaml")["mirror"].items():
        for version in versions:
            out = mirrored_values({}, chart, version, M)
            for slot in images.mirror_slots(chart, version):
                block = _at(out, slot.values)
                written = block if isinstance(block, str) else next(
                    v for k, v in block.items() if k in ("repository", "registry", "image"))
                assert written.startswith(f"{M}/"), (chart, version, slot)


def test_an_image_gpufleet_writes_comes_from_the_mirror_when_the_cluster_has_one():
    assert mirrored_image("nvcr.io/nvidia/cuda:tag", {MIRROR_FACT: M}) == f"{M}/nvcr.io/nvidia/cuda:tag"
    assert mirrored_image("nvcr.io/nvidia/cuda:tag", {}) == "nvcr.io/nvidia/cuda:tag"
    assert mirrored_image("nvcr.io/nvidia/cuda:tag", {MIRROR_FACT: None}) == "nvcr.io/nvidia/cuda:tag"


def test_a_switched_off_image_leaves_the_images_after_it_mirrored():
    """Issue 56: `continue` -> `break` on a slot its values switch off left every later slot unmirrored."""
    checked = 0
    for chart, versions in images._load("images.yaml")["mirror"].items():
        for version in versions:
            slots = images.mirror_slots(chart, version)
            for i, off in enumerate(slots):
                if not off.enabled_by or i == len(slots) - 1:
                    continue
                values: dict = {}
                node = values
                *parents, last = off.enabled_by.split(".")
                for part in parents:
                    node = node.setdefault(part, {})
                node[last] = False
                out = mirrored_values(values, chart, version, M)
                later = [s for s in slots[i + 1:] if s.rendered(values)]
                for slot in later:
                    block = _at(out, slot.values)
                    written = block if isinstance(block, str) else next(
                        v for k, v in block.items() if k in ("repository", "registry", "image"))
                    assert written.startswith(f"{M}/"), (chart, off.enabled_by, slot)
                checked += bool(later)
    assert checked  # images.yaml has a switched-off image with others after it
