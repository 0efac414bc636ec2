"""Container images of the charts gpufleet configures and the digests it can pin them by (images.yaml beside this).

`digest(image)` is the recorded registry manifest digest of an exact `registry/path:tag`, or None when no public source
gave one; `chart_images(chart, version)` the images a chart version runs, each with the values block that spells it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FIELDS = ("repository/image/version", "repository/image/tag", "repository/tag", "repository/tag/digest", "image",
          "registry/repository", "registry-path/repository", "reference")


@dataclass(frozen=True)
class ImageSlot:
    """One image a chart runs, at the values block gpufleet writes it to."""

    values: str  # dotted path of the block, e.g. "toolkit" or "node-feature-discovery.image"
    fields: str  # one of FIELDS: how the block spells the image
    image: str  # registry/path:tag the chart runs by default ({tag}: filled by the caller)
    when: str = ""  # the stack setting that makes the chart run it (gpufleet/base/spec/features/image_checks.py); "": always
    object: str = ""
    """`charts` table: the kind of the custom resource gpufleet writes whose `spec` holds the block (NicClusterPolicy);
    "": the chart's values."""
    enabled_by: str = ""
    """`mirror` table: the dotted values path (as gpufleet passes the values) whose true value makes the chart render
    the image, e.g. a subchart's condition `jobset.install`; "": rendered always. Unset in the values counts as true
    (the charts' own defaults for these switches)."""

    def rendered(self, values: dict) -> bool:
        """Whether the chart renders this image with `values` (see `enabled_by`)."""
        if not self.enabled_by:
            return True
        node = values
        for part in self.enabled_by.split("."):
            if not isinstance(node, dict) or part not in node:
                return True
            node = node[part]
        return bool(node)


# Provenance tiers gpufleet pins by (images.yaml `digests`, most trusted first), and those it records but never pins
# (images.yaml `leads`). images.yaml says what each means and why it is (not) trusted.
TRUSTED_TIERS = ("release-bundle", "certified-bundle", "chart-values", "third-party-agreed")
LEAD_TIERS = ("third-party-single", "tag-not-given")


@dataclass(frozen=True)
class Digest:
    digest: str
    source: str
    tier: str = ""


@functools.cache
def digests() -> dict[str, Digest]:
    """The digests gpufleet pins by: image -> Digest (a trusted tier each)."""
    return {image: Digest(row["digest"], row["source"], row["tier"]) for image, row in _load("images.yaml")["digests"].items()}


@functools.cache
def leads() -> dict[str, Digest]:
    """Digests a source gives that gpufleet does not pin (a lower tier), for the record."""
    return {image: Digest(str(row["digest"]), row["source"], row["tier"])
            for image, row in (_load("images.yaml").get("leads") or {}).items()}


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


def mirror_slots(chart: str, version: str) -> Optional[list[ImageSlot]]:
    """Every image `chart` at `version` references with gpufleet's values (images.yaml `mirror`), or None when
    gpufleet cannot redirect that chart version to a mirror yet."""
    rows = (_load("images.yaml").get("mirror", {}).get(chart) or {}).get(version)
    return None if rows is None else [ImageSlot(**row) for row in rows]


def manifest_images(url: str) -> Optional[list[str]]:
    """The images the objects of a manifest applied as published run (images.yaml `manifests`), or None when gpufleet
    has not read that manifest."""
    found = (_load("images.yaml").get("manifests") or {}).get(url)
    return None if found is None else list(found)


def source_registry(image: str) -> str:
    """The registry host of an image reference, as containerd and docker read it: the first path component when it
    holds a '.' or ':' or is `localhost`, else docker.io (k3s docs, installation/private-registry.md "Default Endpoint
    Fallback": "the first component of the image name must contain at least one period or colon")."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def mirrored(image: str, mirror: str) -> str:
    """`image` as pulled from `mirror`: `<mirror>/<source registry>/<path>[:tag][@digest]`. An image without a registry
    is docker.io's (`pytorch/pytorch:2` -> `<mirror>/docker.io/pytorch/pytorch:2`; a single name is `library/`'s)."""
    if image.startswith(mirror + "/"):
        return image
    registry = source_registry(image)
    path = image[len(registry) + 1:] if image.startswith(registry + "/") else image
    if registry == "docker.io" and "/" not in path.split(":", 1)[0].split("@", 1)[0]:
        path = f"library/{path}"
    return f"{mirror}/{registry}/{path}"
