"""Chart values that pin images by digest (gpufleet:images.pinDigests, issues 31 and 48).

`pinned_values(values, chart, version)` returns the values with every image the catalog lists for that chart version
(gpufleet/base/catalog/images.yaml `charts`) that has a recorded digest written as `<tag>@sha256:<digest>` in the
fields its values block uses. An image without a recorded digest keeps its tag: the plan names it in a warning
(gpufleet/base/spec/features/image_checks.py `warnings`), so nothing is left on a tag silently.

GpuCluster puts the stack's pinning (which charts, which `when` settings hold, the `{tag}`/`{driver}` fill-ins) into
ClusterAccess.facts under DIGESTS_FACT, from the same rules the spec check uses (`digest_fact`); every Helm release
(components/helm_chart.py `pinned_release`) and the custom resources gpufleet writes next to a chart (the
NicClusterPolicy) read it there.
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base.catalog import images
from gpufleet.base.spec.features.image_checks import NAMED, charts_with_images

DIGESTS_FACT = "image_digests"
"""ClusterAccess.facts key: {chart name: (version, `when` settings, fill-ins)} for the charts whose images the stack
pins; absent without gpufleet:images.pinDigests."""


def digest_fact(spec: Any) -> dict[str, tuple[str, frozenset[str], dict[str, str]]]:
    """The DIGESTS_FACT value for a stack spec: empty when pinDigests is off."""
    if not spec.images.pin_digests:
        return {}
    return {chart: (version, frozenset(when), dict(fill)) for chart, version, when, fill in charts_with_images(spec)}


def _copied(node: Any) -> Any:
    """A copy of the dicts and lists, the leaves shared: values may hold Pulumi Outputs, which cannot be deep-copied."""
    if isinstance(node, dict):
        return {k: _copied(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_copied(v) for v in node]
    return node


def _block(values: dict, path: str) -> dict:
    node = values
    for part in path.split("."):
        node = node.setdefault(part, {})
    return node


def pinned_values(values: dict, chart: str, version: str, when: frozenset[str] = frozenset(),
                  fill: Optional[dict[str, str]] = None, object_kind: str = "") -> dict:
    """`values` with the chart's images pinned: the slots that always run, those whose `when` is in `when`, and the
    operands the chart only names (`named`), each that has a recorded digest. `object_kind`: pin the slots of that
    custom resource's spec (images.yaml `object`) instead of the chart's values."""
    slots = images.chart_images(chart, version)
    if slots is None:
        raise KeyError(f"no image list for chart {chart} {version} (gpufleet/base/catalog/images.yaml)")
    out = _copied(values)
    for slot in slots:
        if slot.object != object_kind or (slot.when and slot.when != NAMED and slot.when not in when):
            continue
        ref = slot.image.format(**(fill or {}))
        digest = images.digest(ref)
        if digest is None:
            continue  # stays on its tag; the plan warns (image_checks.warnings)
        repository, tag = images.split(ref)
        if slot.fields == "reference":  # the value at the path is the whole image reference
            parent, _, key = slot.values.rpartition(".")
            (_block(out, parent) if parent else out)[key] = f"{ref}@{digest}"
            continue
        block = _block(out, slot.values)
        if slot.fields in ("repository/image/version", "repository/image/tag"):
            registry_path, _, name = repository.rpartition("/")
            block.update({"repository": registry_path, "image": name, slot.fields.rsplit("/", 1)[1]: f"{tag}@{digest}"})
        elif slot.fields == "repository/tag":
            block.update({"repository": repository, "tag": f"{tag}@{digest}"})
        elif slot.fields == "repository/tag/digest":
            block.update({"repository": repository, "tag": tag, "digest": digest})
        else:  # "image": one full reference in the block's `image`
            block["image"] = f"{ref}@{digest}"
    return out


def pinned_by_facts(values: dict, chart: str, version: str, facts: dict, object_kind: str = "") -> dict:
    """`values` pinned as the cluster's DIGESTS_FACT says for `chart` at `version` (unchanged when it says nothing)."""
    found = (facts.get(DIGESTS_FACT) or {}).get(chart)
    if not found or found[0] != version:
        return values
    _, when, fill = found
    return pinned_values(values, chart, version, when, fill, object_kind)
