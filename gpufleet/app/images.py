"""`gpufleet images <stack>`: every image the stack would pull, and every chart and binary it would download, for a
mirroring tool (issue 37; docs/air-gapped.md).

The list is read from the stack's offline plan, not from a cluster: for each Helm release, the images the catalog
lists for that chart version (gpufleet/base/catalog/images.yaml `mirror`: every image the chart's render references
with gpufleet's values, kept equal to a real helm render by tests/upstream/test_registry_mirror_render.py), with the
tags gpufleet sets; then the images of the objects gpufleet writes itself (DaemonSets, custom resources); then the
chart archives and the files the platform downloads onto its hosts (k3s: its release files). It needs no helm binary and no chart archive. A release whose chart
the catalog does not list is named under `unlisted` with the reason, never dropped silently.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Optional

from gpufleet.app.plan.engine import Plan
from gpufleet.base import catalog, platforms, versions
from gpufleet.base.catalog import images as catalog_images

RELEASE = "kubernetes:helm.sh/v3:Release"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
# The driver image tag the GPU Operator's ClusterPolicy names is completed by the operator with the node's OS
# (gpufleet/base/catalog/images.yaml: 595.91.07 runs as 595.91.07-ubuntu24.04).
DRIVER_NOTE = "the operator appends the node's OS to this tag (e.g. -ubuntu24.04): mirror the tag of each OS your nodes run"
# Precompiled driver containers (driver.usePrecompiled) are tagged `<driver-branch>-<linux-kernel-version>-<os-tag>`
# (GPU Operator docs, "Precompiled Driver Containers", e.g. 535-5.15.0-69-generic-ubuntu22.04): the operator fills the
# node's kernel and OS into the branch the values name, so the listed tag is that pattern, not a pullable tag.
PRECOMPILED_NOTE = ("precompiled: the operator pulls <branch>-<kernel>-<os> (e.g. 580-6.8.0-1028-aws-ubuntu24.04): "
                    "mirror the tag of each kernel and OS your nodes run (`uname -r` on a node)")


@dataclass(frozen=True)
class Image:
    source: str
    """The image as its chart or object names it by default."""
    pull: str
    """The image as the cluster pulls it: from the mirror when the stack has one, else `source`."""
    used_by: str
    """The Helm release or object that references it."""
    note: str = ""


@dataclass(frozen=True)
class Download:
    kind: str  # chart | binary | manifest
    name: str
    url: str
    version: str = ""
    sha256: str = ""
    """The sha256 recorded for it (the pin table's chart digest, the stack's k3s.airgap.sha256); "" when none is."""
    origin: str = ""
    """Charts with gpufleet:registry.charts: the chart's own public location, to copy it from into `url` (the OCI
    registry or directory the releases read); "" otherwise (`url` is the public location)."""


@dataclass
class ImageList:
    stack: str
    mirror: Optional[str]
    images: list[Image] = field(default_factory=list)
    downloads: list[Download] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"stack": self.stack, "mirror": self.mirror, "images": [asdict(i) for i in self.images],
                "downloads": [asdict(d) for d in self.downloads], "unlisted": list(self.unlisted)}


# An image reference with a registry host (a '.' or ':' in the first component) and a tag or digest: how strings of
# gpufleet's own objects are recognised as images besides an `image:` field.
_IMAGE_RE = re.compile(r"^[a-z0-9.-]+(?::[0-9]+)?\.[a-z]{2,}(?::[0-9]+)?/[a-z0-9._/-]+(?::[\w.-]+|@sha256:[0-9a-f]{64})?$")
# A command-line flag whose value is an image (`--prometheus-config-reloader=quay.io/...:<tag>`: the images
# prometheus-operator starts next to Prometheus, from its Deployment's args).
_FLAG_IMAGE_RE = re.compile(r"^--[a-z0-9-]+=(.+)$")


# An image a controller gets in three env vars, <PREFIX>_IMAGE_REGISTRY, _REPOSITORY and _TAG, and joins as
# registry/repository:tag (agentgateway's AGW_PROXY_IMAGE_*: the proxy it starts for each Gateway, its chart's
# templates/deployment.yaml at versions.AGENTGATEWAY).
_SPLIT_ENV_SUFFIXES = ("_IMAGE_REGISTRY", "_IMAGE_REPOSITORY", "_IMAGE_TAG")


def _split_env_images(items: list) -> list[str]:
    env = {str(e["name"]): e.get("value") for e in items if isinstance(e, dict) and isinstance(e.get("name"), str)}
    out = []
    for name, registry in env.items():
        if not name.endswith("_IMAGE_REGISTRY") or not isinstance(registry, str):
            continue
        prefix = name[: -len("_IMAGE_REGISTRY")]
        repository, tag = env.get(f"{prefix}_IMAGE_REPOSITORY"), env.get(f"{prefix}_IMAGE_TAG")
        if isinstance(repository, str) and isinstance(tag, str) and repository and tag:
            out.append(f"{registry}/{repository}:{tag}")
    return out


def referenced_images(obj: Any) -> list[str]:
    """Every image a Kubernetes object names: `image:` strings (containers, init containers, custom resources), images
    in env values and in `--flag=<image>` arguments, and the repository/image/version triplets of NVIDIA's custom
    resources (ClusterPolicy, NicClusterPolicy), whose operators join them as `<repository>/<image>:<version>` (a
    `version` that holds `@sha256:` keeps it). A triplet with an empty repository names no image to pull (the GPU
    Operator's vgpuManager: an image its user builds, rendered as `{enabled: false, image: vgpu-manager}` without a
    repository)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            image = node.get("image")
            for key, value in node.items():
                # The AMD DeviceConfig names operand images in fields of their own (devicePluginImage,
                # nodeLabellerImage, initContainerImage; the DeviceConfig CRD of the pinned gpu-operator-charts).
                if key.endswith("Image") and isinstance(value, str) and value:
                    out.append(value)
            if "repository" in node and isinstance(image, str):
                repository = node.get("repository") or ""
                tag = node.get("version", node.get("tag"))
                if repository:
                    ref = f"{repository}/{image}"
                    out.append(f"{ref}{'' if tag in (None, '') else ('@' if str(tag).startswith('sha256:') else ':') + str(tag)}")
            elif isinstance(image, str) and image and not (node.get("enabled") is False and "/" not in image):
                # (A disabled operand block with an image name and no repository, the ClusterPolicy's vgpuManager when
                # its values give no repository, names nothing to pull.)
                out.append(image)
            for key, value in node.items():
                if key == "image" and isinstance(value, str):
                    continue
                if key in ("repository", "version", "tag"):
                    continue
                if isinstance(value, str) and key == "value" and _IMAGE_RE.match(value):
                    out.append(value)  # an image passed in an env var (the GPU Operator's DRIVER_MANAGER_IMAGE)
                else:
                    walk(value)
        elif isinstance(node, list):
            split = _split_env_images(node)
            out.extend(split)
            for item in node:
                if split and isinstance(item, dict) and str(item.get("name", "")).endswith(_SPLIT_ENV_SUFFIXES):
                    continue  # one part of an image named across env vars, listed whole above
                flag = _FLAG_IMAGE_RE.match(item) if isinstance(item, str) else None
                if flag and _IMAGE_RE.match(flag.group(1)):
                    out.append(flag.group(1))  # an image passed as a flag (prometheus-operator's args)
                else:
                    walk(item)

    walk(obj)
    return out


def _block(values: dict, path: str) -> dict:
    node: Any = values
    for part in path.split("."):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def release_images(name: str, version: str, values: dict, mirror: Optional[str]) -> Optional[list[tuple[str, str]]]:
    """(source, note) of every image a chart version references with these values, or None when not listed."""
    slots = catalog_images.mirror_slots(name, version)
    if slots is None:
        return None
    out = []
    for slot in slots:
        if not slot.rendered(values):
            continue
        fill = {}
        note = ""
        if "{driver}" in slot.image:
            fill["driver"] = str(_block(values, "driver").get("version") or catalog.operator_release(version).default_driver)
            note = DRIVER_NOTE
            if _block(values, "driver").get("usePrecompiled"):
                fill["driver"] += "-<kernel>-<os>"
                note = PRECOMPILED_NOTE
        if "{tag}" in slot.image:
            fill["tag"] = str(_block(values, slot.values).get("tag") or "").partition("@")[0]
        image = slot.image.format(**fill)
        digest = _block(values, slot.values).get("digest") if slot.fields == "repository/tag/digest" else None
        tag = _block(values, slot.values).get("version" if "version" in slot.fields else "tag")
        if slot.fields == "reference":  # the whole reference, `<image>@sha256:<digest>` when pinned
            parent, _, key = slot.values.rpartition(".")
            ref = (_block(values, parent) if parent else values).get(key)
            tag = str(ref).partition("@")[2] if isinstance(ref, str) and "@sha256:" in ref else None
            image = f"{image}@{tag}" if tag else image
        elif isinstance(tag, str) and "@sha256:" in tag:  # pinDigests writes `<tag>@sha256:<digest>`
            image = f"{catalog_images.split(image)[0]}:{tag}"
        elif digest:
            image = f"{image}@{digest}"
        out.append((image, note))
    return out


def _pins() -> dict[str, versions.HelmChart]:
    return {pin.name: pin for pin in vars(versions).values() if isinstance(pin, versions.HelmChart)}


def image_list(plan: Plan) -> ImageList:
    spec = plan.spec
    mirror = spec.registry.mirror
    found = ImageList(plan.stack, mirror)
    seen: set[tuple[str, str]] = set()

    def add(source: str, used_by: str, note: str = "") -> None:
        if (source, used_by) in seen:
            return
        seen.add((source, used_by))
        pull = catalog_images.mirrored(source, mirror) if mirror and not source.startswith(mirror + "/") else source
        original = source if not mirror or not source.startswith(mirror + "/") else _unmirrored(source, mirror)
        found.images.append(Image(original, pull, used_by, note))

    pins = _pins()
    for r in plan.resources:
        if r.type != RELEASE:
            continue
        version = str(r.inputs.get("version", ""))
        name = versions.chart_name_of(r.inputs["chart"], version)
        values = r.revealed.get("values") or r.inputs.get("values") or {}
        listed = release_images(name, version, values, mirror)
        if listed is None:
            found.unlisted.append(f"images of chart {name} {version} (release {r.name}): gpufleet/base/catalog/"
                                  "images.yaml does not list them; read them from the chart's render")
        else:
            for source, note in listed:
                add(source, f"chart {name} {version}", note)
        pin = pins.get(name) if name in pins and pins[name].version == version else None
        url = str(r.inputs["chart"])
        origin = ""
        if spec.registry.charts:
            origin = public_chart_location(pin, name) if pin else ""
        elif not url.startswith(("https://", "oci://")) and pin is not None:
            url = f"{pin.repo} {name}"
        found.downloads.append(Download("chart", name, url, version, pin.digest if pin else "", origin))
    for r in plan.resources:
        if r.type == CONFIG_FILE:
            # A manifest applied as published (GKE's GPUDirect and driver-installer DaemonSets): `pulumi up` fetches
            # it, and its images are not known offline.
            found.downloads.append(Download("manifest", r.name, str(r.inputs.get("file", ""))))
            known = catalog_images.manifest_images(str(r.inputs.get("file", "")))
            if known is not None:  # a manifest whose objects gpufleet has read (images.yaml `manifests`)
                for image in known:
                    add(image, f"manifest {r.name}")
                continue
            found.unlisted.append(f"images of manifest {r.inputs.get('file', '')} ({r.name}): applied as published "
                                  "at `pulumi up`; read them from the file")
            continue
        if r.type == RELEASE or not r.type.startswith("kubernetes:"):
            continue
        for image in referenced_images(r.revealed or r.inputs):
            add(image, f"{r.type.split(':')[-1]} {r.name}")
    for name, url, version, sha256 in platforms.of(spec).addons.host_downloads(spec):  # a distribution's release files
        found.downloads.append(Download("binary", name, url, version, sha256))
    found.downloads = list(dict.fromkeys(found.downloads))
    return found


def public_chart_location(pin: versions.HelmChart, name: str) -> str:
    """Where a pinned chart is published: its content-pinned archive URL, its OCI reference, or `<repo> <name>`."""
    if pin.archive:
        return pin.archive
    if pin.repo.startswith("oci://"):
        return f"{pin.repo.rstrip('/')}/{name}"
    return f"{pin.repo} {name}"


def _unmirrored(image: str, mirror: str) -> str:
    """`<mirror>/<registry>/<path>` -> `<registry>/<path>` (an image gpufleet already wrote from the mirror)."""
    return image[len(mirror) + 1:]


def text(found: ImageList) -> str:
    lines = [f"# images, charts and binaries of stack {found.stack}"
             + (f" (mirror {found.mirror}: copy each SOURCE to PULL)" if found.mirror else "")]
    lines.append("# images: SOURCE PULL USED-BY")
    for image in found.images:
        lines.append(f"{image.source} {image.pull}  # {image.used_by}{'; ' + image.note if image.note else ''}")
    lines.append("# downloads: KIND NAME VERSION URL SHA256" + ("  # from ORIGIN (charts: copy it to URL)"
                                                               if any(d.origin for d in found.downloads) else ""))
    for d in found.downloads:
        lines.append(f"{d.kind} {d.name} {d.version or '-'} {d.url} {d.sha256 or '-'}"
                     + (f"  # from {d.origin}" if d.origin else ""))
    for item in found.unlisted:
        lines.append(f"# NOT LISTED: {item}")
    return "\n".join(lines) + "\n"


def dumps(found: ImageList) -> str:
    return json.dumps(found.as_json(), indent=2) + "\n"


def sources(found: ImageList) -> Iterable[str]:
    return [i.source for i in found.images]
