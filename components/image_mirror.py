"""Chart values that pull every image from the stack's mirror (gpufleet:registry.mirror, issue 37).

`mirrored_values(values, chart, version, mirror)` returns the values with the registry part of every image block the
catalog lists for that chart version (gpufleet/base/catalog/images.yaml `mirror`) set to `<mirror>/<source registry>`,
keeping each block's image name and tag (or digest, with pinDigests). It writes chart values only, never the rendered
objects: the charts compose the image themselves. The spec has refused a mirror for a stack that installs a chart the
catalog cannot redirect (gpufleet/base/spec/features/registry_checks.py), so a missing entry here is a bug, not a user error.

ClusterAccess.facts carries the mirror (MIRROR_FACT) from GpuCluster to every release (components/helm_chart.py).
"""

from __future__ import annotations

from typing import Optional

from gpufleet.base.catalog import images

MIRROR_FACT = "image_mirror"


def _copied(node):
    """A copy of the dicts and lists of `values`, the leaves shared: values may hold Pulumi Outputs (an IAM role ARN),
    which cannot be deep-copied."""
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


def mirrored_values(values: dict, chart: str, version: str, mirror: Optional[str]) -> dict:
    """`values` with each image block of the chart pointing at `mirror` (unchanged without a mirror)."""
    if not mirror:
        return values
    slots = images.mirror_slots(chart, version)
    if slots is None:
        raise KeyError(f"no mirror image list for chart {chart} {version} (gpufleet/base/catalog/images.yaml `mirror`)")
    out = _copied(values)
    for slot in slots:
        if not slot.rendered(values):
            continue  # a subchart or component these values leave off (images.yaml `enabled_by`)
        if slot.fields == "reference":  # the value at the path is the whole image reference
            parent, _, key = slot.values.rpartition(".")
            node = _block(out, parent) if parent else out
            node[key] = images.mirrored(node.get(key) or slot.image, mirror)
            continue
        block = _block(out, slot.values)
        source = slot.image.partition("{")[0].partition("@")[0]  # a digest stays in the chart's own field
        repository, _ = images.split(source) if "{" not in slot.image else (source.rstrip(":"), "")
        if slot.fields in ("repository/image/version", "repository/image/tag"):
            block["repository"] = images.mirrored(repository.rpartition("/")[0], mirror)
        elif slot.fields in ("repository/tag", "repository/tag/digest"):
            block["repository"] = images.mirrored(repository, mirror)
        elif slot.fields == "registry/repository":
            block["registry"] = f"{mirror}/{images.source_registry(repository)}"
        elif slot.fields == "registry-path/repository":
            # The chart's `registry` holds part of the path too (llm-d's ghcr.io/llm-d): the mirror's registry and the
            # whole source path as the repository, so registry/repository joins to the mirrored image.
            registry = images.source_registry(repository)
            block["registry"] = f"{mirror}/{registry}"
            block["repository"] = repository[len(registry) + 1:]
        else:  # "image": one full reference, maybe already pinned by digest
            block["image"] = images.mirrored(block.get("image") or slot.image, mirror)
    return out


def mirrored_image(image: str, facts: dict) -> str:
    """An image gpufleet itself writes into an object, from the mirror when the cluster has one."""
    mirror = facts.get(MIRROR_FACT)
    return images.mirrored(image, mirror) if mirror else image
