"""Chart values that pin images by digest (gpufleet:images.pinDigests, issue 31).

`pinned_values(values, chart, version)` returns the values with every image the catalog lists for that chart version
(gpufleet/base/catalog/images.yaml) written as `<tag>@sha256:<digest>` in the fields its values block uses. The spec
has already refused a stack whose images lack a recorded digest (gpufleet/base/spec/features/image_checks.py), so a missing
digest here is a bug, not a user error.
"""

from __future__ import annotations

import copy

from gpufleet.base.catalog import images


def _block(values: dict, path: str) -> dict:
    node = values
    for part in path.split("."):
        node = node.setdefault(part, {})
    return node


def pinned_values(values: dict, chart: str, version: str, when: frozenset[str] = frozenset(),
                  fill: dict[str, str] | None = None) -> dict:
    """`values` with the chart's images pinned: the slots that always run and those whose `when` is in `when`."""
    slots = images.chart_images(chart, version)
    if slots is None:
        raise KeyError(f"no image list for chart {chart} {version} (gpufleet/base/catalog/images.yaml)")
    out = copy.deepcopy(values)
    for slot in slots:
        if slot.when and slot.when not in when:
            continue
        ref = slot.image.format(**(fill or {}))
        digest = images.digest(ref)
        if digest is None:
            raise KeyError(f"no recorded digest for {ref} (the spec check should have refused the stack)")
        repository, tag = images.split(ref)
        block = _block(out, slot.values)
        if slot.fields in ("repository/image/version", "repository/image/tag"):
            registry_path, _, name = repository.rpartition("/")
            block.update({"repository": registry_path, "image": name, slot.fields.rsplit("/", 1)[1]: f"{tag}@{digest}"})
        elif slot.fields == "repository/tag":
            block.update({"repository": repository, "tag": f"{tag}@{digest}"})
        elif slot.fields == "repository/tag/digest":
            block.update({"repository": repository, "tag": tag, "digest": digest})
        else:  # "image": one full reference
            block["image"] = f"{ref}@{digest}"
    return out
