"""gke: addons traits (gpufleet/base/platforms/contract/addons.py says what each one means)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Optional

from gpufleet.base.platforms.contract.addons import AddonTraits
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.cold_start import LUSTRE_CLASS, PRECOMPILED_KERNEL_VARIANTS, listed_images
from gpufleet.base.spec.features.registry import ARTIFACT_REGISTRY
from gpufleet.base.spec.platforms.gke import MANAGED_LUSTRE_TIERS

NS = "gpufleet"
MIRROR = "gpufleet:registry.mirror"
# GKE "Use secondary boot disks to preload data or container images" (cloud.google.com/kubernetes-engine/docs/how-to/
# data-container-image-preloading, Requirements): container image caches on Container-Optimized OS nodes need GKE
# 1.30.1-gke.1329000 or later (Ubuntu nodes 1.35.0-gke.1403000; gpufleet's Ubuntu pools cannot stream images, below).
GKE_SECONDARY_BOOT_DISK_MINOR = (1, 30)
# GKE node pool kubelet_config.max_parallel_image_pulls: "must be between 2 and 5, inclusive" (pulumi_gcp
# container NodePoolNodeConfigKubeletConfigArgs, from the GKE API's NodeKubeletConfig.maxParallelImagePulls).
GKE_PARALLEL_PULLS = (2, 5)
# GKE: "A no upgrades exclusion can't be longer than 30 days" (cloud.google.com/kubernetes-engine/docs/concepts/
# maintenance-windows-and-exclusions, "Limitations for maintenance exclusions", read 2026-12-04).
NO_UPGRADES_MAX = timedelta(days=30)
_BINARY = {"Gi": 1, "Ti": 1024, "Pi": 1024 * 1024}


def _runs_own_gpu_stack(spec: Any) -> bool:
    """cluster.gke.gpuStack gke: GKE installs the NVIDIA driver and device plugin, no GPU Operator."""
    return spec.cluster.gke is not None and spec.cluster.gke.managed_gpu_stack


class GkeAddons(AddonTraits):
    # --- cold start ---
    cold_start_settings = frozenset({"imageStreaming", "secondaryBootDisk"})

    def cold_start_problems(self, stack: str, at: str, spec: Any, pool: Any) -> list[Problem]:
        cs = pool.cold_start
        problems = []
        operator = spec.cluster.gke.gpu_stack == "operator"
        if cs.streams() and operator:
            # Image streaming requirements: Container-Optimized OS with containerd node images; gpuStack operator runs
            # Ubuntu nodes (the NVIDIA driver manager supports Ubuntu only).
            field = "imageStreaming" if cs.image_streaming else "secondaryBootDisk"
            problems.append(Problem(stack, f"{at}.{field}", "GKE image streaming needs Container-Optimized OS nodes; "
                                    "cluster.gke.gpuStack operator runs Ubuntu nodes (use gpuStack: gke)",
                                    getattr(cs, "image_streaming" if field == "imageStreaming" else "secondary_boot_disk")))
        if cs.secondary_boot_disk is not None:
            if cs.image_streaming is False:
                problems.append(Problem(stack, f"{at}.imageStreaming", "a secondary boot disk with a container image cache "
                                        "needs image streaming on (GKE reads the cache through the image streaming plugin)", False))
            if _minor(spec.cluster.kubernetes_version) < GKE_SECONDARY_BOOT_DISK_MINOR:
                problems.append(Problem(stack, f"{at}.secondaryBootDisk", f"container image caches on secondary boot disks "
                                        f"need GKE 1.30 or later (1.30.1-gke.1329000); the cluster runs "
                                        f"{spec.cluster.kubernetes_version}", cs.secondary_boot_disk))
        lo, hi = GKE_PARALLEL_PULLS
        if cs.parallel_image_pulls is not None and not lo <= cs.parallel_image_pulls <= hi:
            problems.append(Problem(stack, f"{at}.parallelImagePulls", f"GKE takes {lo} to {hi}", cs.parallel_image_pulls))
        return problems

    def cold_start_paths(self, spec: Any, pool: Any) -> list[str]:
        cs = pool.cold_start
        out = ["image streaming on" if cs.streams() else "image streaming off"]
        if cs.secondary_boot_disk:
            out.append(f"secondary boot disk {cs.secondary_boot_disk} (container image cache, built outside gpufleet "
                       f"from {listed_images(cs)})")
        out.append(f"parallel image pulls: at most {cs.parallel_image_pulls}" if cs.parallel_image_pulls
                   else "parallel image pulls: GKE's default")
        return out

    def platform_driver(self, spec: Any) -> Optional[str]:
        if _runs_own_gpu_stack(spec):
            return "GKE-managed (installed by GKE at boot, not by the GPU Operator)"
        return None

    def precompiled_driver_refusal(self, spec: Any) -> Optional[str]:
        if _runs_own_gpu_stack(spec):
            return "GKE installs the driver itself (cluster.gke.gpuStack: gke); the GPU Operator is not installed"
        return ("GKE Ubuntu nodes run GKE's own kernel variant; NVIDIA publishes precompiled driver containers only "
                f"for the {', '.join(PRECOMPILED_KERNEL_VARIANTS)} variants")

    # --- storage ---
    def rwx_storage_class(self, spec: Any) -> Optional[str]:
        storage = spec.cluster.gke.storage
        if storage.managed_lustre:
            return LUSTRE_CLASS
        return "gpufleet-rwx" if storage.filestore else None

    rwx_storage_hint = "set cluster.gke.storage.managedLustre: true (Managed Lustre) or filestore: true (Filestore)"

    def model_cache_problems(self, stack: str, at: str, spec: Any, cache: Any) -> list[Problem]:
        if self.rwx_storage_class(spec) != LUSTRE_CLASS:
            return []
        tier = spec.cluster.gke.storage.managed_lustre_throughput
        step = MANAGED_LUSTRE_TIERS[tier]
        gib = _gib(cache.size)
        if gib is not None and (gib < step or gib % step):
            return [Problem(stack, f"{at}.size", f"a Managed Lustre instance at {tier} MB/s per TiB takes "
                            f"{step:,} GiB or more in steps of {step:,} GiB (e.g. {max(step, -(-int(gib) // step) * step)}Gi); "
                            "or name a Filestore storageClass (gpufleet-rwx)", cache.size)]
        return []

    def node_egress(self, spec: Any) -> Optional[tuple[str, frozenset[str]]]:
        # Private nodes on gpufleet's network without Cloud NAT reach Google's APIs through Private Google Access
        # (Cloud Storage among them) and nothing else (_private_nodes_without_nat below).
        gke = spec.cluster.gke
        if not gke.private_nodes or gke.network.existing is not None or gke.network.cloud_nat:
            return None
        return ("private nodes without Cloud NAT (cluster.gke.network.cloudNat: false) reach only Google's APIs "
                "(Private Google Access: Cloud Storage, no internet)", frozenset({"gs"}))

    # --- registry ---
    def unmirrored_manifests(self, spec: Any) -> list[str]:
        # Google's manifests gpufleet applies as they are (kubernetes:yaml/v2:ConfigFile of a pinned URL, fetched at
        # `pulumi up`): gpufleet neither reads their images offline nor rewrites them (components/gke/).
        out = []
        if any(p.rdma for p in spec.node_pools):
            out.append("GKE GPUDirect pools (rdma: true; Google's NCCL plugin installer and NRI device injector "
                       "manifests, applied as published: their images are neither listed nor redirected)")
        if spec.cluster.gke.gpu_stack == "gke" and any(p.allocation == "dra" for p in spec.node_pools):
            out.append("GKE DRA pools (allocation: dra; Google's COS driver-installer manifest, applied as published: "
                       "its images are neither listed nor redirected)")
        return out

    def registry_problems(self, stack: str, spec: Any, config: dict) -> list[Problem]:
        mirror = spec.registry.mirror
        problems = []
        if mirror and not re.fullmatch(ARTIFACT_REGISTRY, mirror):
            # Nodes pull with their node service account and gpufleet writes no pull secrets: Artifact Registry grants
            # it with roles/artifactregistry.reader (docs.cloud.google.com/artifact-registry/docs/integrate-gke), and
            # private nodes reach pkg.dev through Private Google Access (docs.cloud.google.com/vpc/docs/
            # private-google-access; artifact-registry/docs/gke-private-clusters).
            problems.append(Problem(stack, MIRROR, "GKE nodes pull with their node service account, which only an "
                                                   "Artifact Registry repository (<location>-docker.pkg.dev/<project>/"
                                                   "<repository>, e.g. a remote repository caching each upstream) "
                                                   "accepts without pull secrets, and private nodes reach it through "
                                                   "Private Google Access", mirror))
        return problems + _private_nodes_without_nat(stack, spec)

    # --- images ---
    def own_gpu_stack(self, spec: Any) -> Optional[str]:
        if _runs_own_gpu_stack(spec):
            return "GKE installs the NVIDIA driver and device plugin itself (gke.gpuStack: gke)"
        return None

    rdma_fabric = "gpudirect"

    # --- observability ---
    # GKE runs its own GPU stack (no GPU Operator, so no DCGM exporter of ours): its GPU metrics come from GKE's
    # managed DCGM package, which reports to Managed Service for Prometheus.
    metrics_backends = ("gke-managed", "none")
    # Managed Service for Prometheus: collection runs in GKE's own system pods and is billed per ingested sample, not
    # by the hour (docs/observability.md).
    default_metrics_backend = "gke-managed"

    # --- upkeep ---
    def upkeep_problems(self, stack: str, spec: Any) -> list[Problem]:
        return _exclusions(stack, spec) + _deletion_protection(stack, spec)

    def missing_device_plugin(self, pool: Any) -> Optional[str]:
        return None  # GKE's own device plugin (gpuStack gke), or the GPU Operator's


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _gib(size: str):
    """A claim size in GiB when it is given in Gi, Ti or Pi (else None: not judged here)."""
    for suffix, factor in _BINARY.items():
        if size.endswith(suffix) and size[: -len(suffix)].isdigit():
            return int(size[: -len(suffix)]) * factor
    return None


def _private_nodes_without_nat(stack: str, spec: Any) -> list[Problem]:
    """GKE private nodes without Cloud NAT (`cloudNat: false` on the network gpufleet creates) reach Google's APIs and
    registries through Private Google Access, which every subnet gpufleet creates has (components/gke/network.py,
    `private_ip_google_access`; docs.cloud.google.com/vpc/docs/private-google-access), and nothing else: GKE's own
    components come from Google's registries, but every chart gpufleet installs pulls from nvcr.io, registry.k8s.io,
    ghcr.io, ... unless a mirror in Artifact Registry serves it."""
    gke = spec.cluster.gke
    if not gke.private_nodes or gke.network.existing is not None or gke.network.cloud_nat or spec.registry.mirror:
        return []  # (public nodes have external addresses; an existing network's routes are its owner's)
    return [Problem(stack, "gpufleet:cluster.gke.network.cloudNat", "private nodes without Cloud NAT reach only "
                    "Google's APIs and registries (Private Google Access): set gpufleet:registry.mirror to an "
                    "Artifact Registry repository holding the charts' images (`gpufleet images <stack>`), or "
                    "cloudNat: true", False)]


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _exclusions(stack: str, spec: Any) -> list[Problem]:
    gke = spec.cluster.gke
    if gke is None:
        return []
    problems = []
    for i, x in enumerate(gke.maintenance_exclusions):
        at = f"{NS}:cluster.gke.maintenanceExclusions[{i}]"
        if x.end_time is None:
            continue
        start, end = _time(x.start_time), _time(x.end_time)
        if end <= start:
            problems.append(Problem(stack, f"{at}.endTime", f"ends before it starts ({x.start_time}): GKE refuses it",
                                    x.end_time))
            continue
        if x.scope == "NO_UPGRADES" and end - start > NO_UPGRADES_MAX:
            problems.append(Problem(stack, f"{at}.endTime", f"a NO_UPGRADES exclusion lasts at most 30 days (GKE); this one "
                                    f"lasts {(end - start).days} days from {x.start_time}: shorten it, or use scope "
                                    "NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES", x.end_time))
            continue
    seen: dict[str, int] = {}
    for i, x in enumerate(gke.maintenance_exclusions):
        if x.name in seen:
            problems.append(Problem(stack, f"{NS}:cluster.gke.maintenanceExclusions[{i}].name", "duplicate exclusion name "
                                    f"(also maintenanceExclusions[{seen[x.name]}]): GKE keys exclusions by name", x.name))
        seen.setdefault(x.name, i)
    return problems


def _deletion_protection(stack: str, spec: Any) -> list[Problem]:
    gke = spec.cluster.gke
    if gke is None or gke.deletion_protection is not False:
        return []
    if spec.cluster.protection.enabled:
        return [Problem(stack, f"{NS}:cluster.gke.deletionProtection", "turning GKE's deletion protection off needs a "
                        f"recorded reason: set {NS}:cluster.protection to {{enabled: false, reason: ...}} (then "
                        "deletionProtection follows it), or remove deletionProtection", False)]
    return []
