"""Container images of the charts gpufleet configures and the digests it can pin them by (images.yaml beside this).

`digest(image)` is the recorded registry manifest digest of an exact `registry/path:tag`, or None when no public source
gave one; `chart_images(chart, version)` the images a chart version runs, each with the values block that spells it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FIELDS = ("repository/image/version", "repository/image/tag", "repository/tag", "repository/tag/digest", "image")


@dataclass(frozen=True)
class ImageSlot:
    """One image a chart runs, at the values block gpufleet writes it to."""

    values: str  # dotted path of the block, e.g. "toolkit" or "node-feature-discovery.image"
    fields: str  # one of FIELDS: how the block spells the image
    image: str  # registry/path:tag the chart runs by default ({tag}: filled by the caller)
    when: str = ""  # the stack setting that makes the chart run it (gpufleet/base/spec/image_checks.py); "": always


@dataclass(frozen=True)
class Digest:
    digest: str
    source: str


@functools.cache
def digests() -> dict[str, Digest]:
    return {image: Digest(row["digest"], row["source"]) for image, row in _load("images.yaml")["digests"].items()}


def digest(image: str) -> Optional[str]:
    """The recorded `sha256:...` digest of `registry/path:tag`, or None."""
    found = digests().get(image)
    return found.digest if found else None


def chart_images(chart: str, version: str) -> Optional[list[ImageSlot]]:
    """The images `chart` at `version` runs, or None when the catalog does not list them."""
    rows = (_load("images.yaml")["charts"].get(chart) or {}).get(version)
    return None if rows is None else [ImageSlot(**row) for row in rows]


def split(image: str) -> tuple[str, str]:
    """'nvcr.io/nvidia/driver:580' -> ('nvcr.io/nvidia/driver', '580')."""
    repository, _, tag = image.rpartition(":")
    return repository, tag
