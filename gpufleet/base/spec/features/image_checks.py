"""`gpufleet:images.pinDigests`: which images the stack's charts run, so each with a recorded digest is pinned and each
without one is named in a plan warning (issues 31, 48).

Which charts a stack installs is decided by the components (components/gpu_cluster.py and each platform's
`addons`); this mirrors those rules for the charts whose images gpufleet writes: the NVIDIA GPU Operator, the AMD
GPU Operator, and the charts each platform's own components install (AddonTraits.own_charts_with_images: the Network
Operator of k3s and AKS RDMA pools, the EKS cluster autoscaler or Karpenter).
tests/unit/test_image_digests.py keeps the two in step on every example stack. The images of the other charts
(workload add-ons, observability, storage) stay the charts' own tags: docs/security.md ("Downloads at deploy time").
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import platforms, versions
from gpufleet.base.catalog import images as catalog_images
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.shape import shaped_pools

KEY = "gpufleet:images.pinDigests"
# images.yaml `charts` `when: named`: an operand the chart's custom resource names but no gpufleet stack runs (the
# operator starts it only on nodes labelled for it): pinned when a digest is recorded, never reported when none is.
NAMED = "named"


def charts_with_images(spec: Any) -> list[tuple[str, str, set[str], dict[str, str]]]:
    """(chart, version, the `when` settings that hold, fill-ins for `{tag}`) for each chart whose images gpufleet writes
    that this stack installs."""
    traits = platforms.of(spec).addons
    pools = shaped_pools(spec)
    amd = [p for p in pools if p.gpu and is_amd(p)]
    nvidia = [p for p in pools if not (p.gpu and is_amd(p))]
    out: list[tuple[str, str, set[str], dict[str, str]]] = []
    install_nvidia = spec.gpu_operator.enabled and traits.own_gpu_stack(spec) is None and bool(nvidia or not amd)
    if install_nvidia:
        when = {"operator-driver"} if spec.gpu_operator.driver.source == "operator" else set()
        out.append(("gpu-operator", spec.gpu_operator.version, when, {"driver": spec.gpu_operator.driver_version() or ""}))
    if amd and platforms.of(spec).scheduling.amd_gpus:
        out.append((versions.AMD_GPU_OPERATOR.name, versions.AMD_GPU_OPERATOR.version,
                    set() if install_nvidia else {"amd-own-nfd"}, {}))
    out += traits.own_charts_with_images(spec)
    return out


def stack_images(spec: Any) -> list[tuple[str, str, Optional[str]]]:
    """(chart, version, image) for every image the stack's charts run; image None when the catalog does not list the
    chart version's images."""
    out: list[tuple[str, str, Optional[str]]] = []
    for chart, version, when, fill in charts_with_images(spec):
        slots = catalog_images.chart_images(chart, version)
        if slots is None:
            out.append((chart, version, None))
            continue
        for slot in slots:
            if not slot.when or slot.when in when:
                image = slot.image.format(**fill)
                if (chart, version, image) not in out:
                    out.append((chart, version, image))
    return out


def check(stack: str, spec: Any) -> list[Problem]:
    """With pinDigests on, refused: a stack that would pin nothing, and a chart release whose images the catalog does
    not list (gpufleet cannot know what it would leave on tags)."""
    if not spec.images.pin_digests:
        return []
    images = stack_images(spec)
    if not images:
        # Nothing gpufleet writes would be pinned (e.g. GKE with GKE's own GPU stack, whose images GKE installs):
        # accepting the setting would promise what it cannot keep.
        return [Problem(stack, KEY, "this stack runs no chart whose images gpufleet writes (its GPU stack's images are "
                                    "the platform's own), so nothing would be pinned: set pinDigests false", True)]
    return [Problem(stack, KEY, f"gpufleet does not list the images of chart {chart} {version}, so it cannot pin "
                                "them: set pinDigests false, or use a release it lists (gpufleet/base/catalog/images.yaml)")
            for chart, version, image in images if image is None]


def warnings(stack: str, spec: Any) -> list[Problem]:
    """With pinDigests on, one plan warning per image the stack runs that stays on its tag: no digest of a trusted
    tier is recorded for it (gpufleet/base/catalog/images.yaml `digests`; `leads` are not pinned)."""
    if not spec.images.pin_digests:
        return []
    out = []
    for chart, version, image in stack_images(spec):
        if image is not None and catalog_images.digest(image) is None:
            lead = catalog_images.leads().get(image)
            why = f" (only a {lead.tier} lead is)" if lead else ""
            out.append(Problem(stack, KEY, f"image {image} (chart {chart} {version}) runs by its tag: no digest from "
                                           f"a trusted source is recorded{why}; gpufleet/base/catalog/images.yaml"))
    return out
