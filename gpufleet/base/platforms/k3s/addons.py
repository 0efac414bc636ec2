"""k3s: addons traits (gpufleet/base/platforms/contract/addons.py says what each one means)."""

from __future__ import annotations

import ipaddress
from typing import Any, Optional

from gpufleet.base import versions
from gpufleet.base.platforms.contract.addons import AddonTraits, ChartImages, HostDownload
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
MIRROR = "gpufleet:registry.mirror"


# cluster.k3s.airgap.sha256: (field, stack key) of each release file's sum.
AIRGAP_SUM_KEYS = (("k3s", "k3s"), ("images", "images"), ("install_script", "installScript"))


def airgap_sums(airgap: Any, kubernetes_version: str) -> dict[str, Optional[str]]:
    """The sha256 an air-gapped install checks each file against, by role (`k3s`, `images`, `install_script`): the
    stack's value, else the one gpufleet records for the pinned release (versions.K3S_RELEASE_SHA256), else None (the
    plan refuses that; the install script never runs without all three)."""
    files = versions.k3s_release_files(airgap.arch)
    out = {}
    for field, _ in AIRGAP_SUM_KEYS:
        file = "install.sh" if field == "install_script" else files[field]
        out[field] = getattr(airgap.sha256, field) or versions.k3s_release_sha256(kubernetes_version, file)
    return out


class K3sAddons(AddonTraits):
    # --- cold start ---
    pre_pulls_images = True  # no image cache of the node's own: the pre-pull DaemonSet is the cold-start path
    cold_start_instead = "k3s: list the images and they are pre-pulled"
    # maxParallelImagePulls is a KubeletConfiguration field only: the kubelet has no flag for it, and k3s configures its
    # kubelet through flags (kubelet-arg).
    parallel_image_pulls_refusal = ("not available on k3s: maxParallelImagePulls is a kubelet configuration-file field "
                                    "with no command-line flag, and k3s sets its kubelet by flags; remove it")

    def cold_start_paths(self, spec: Any, pool: Any) -> list[str]:
        return ["no image streaming or disk image cache on k3s"]

    def node_egress(self, spec: Any) -> Optional[tuple[str, frozenset[str]]]:
        # Air-gapped hosts reach none of s3://, gs://, hf:// (the model caches' prefetch Jobs download from the source).
        if spec.cluster.k3s.airgap is None:
            return None
        return "cluster.k3s.airgap hosts reach no internet", frozenset()

    # --- registry and air gap ---
    own_charts = frozenset({versions.CSI_DRIVER_NFS.name})  # gpufleet:storage.nfs
    registry_credentials = True  # written into each node's /etc/rancher/k3s/registries.yaml

    def registry_problems(self, stack: str, spec: Any, config: dict) -> list[Problem]:
        """cluster.k3s.airgap: every release file verified, and no download the hosts cannot reach."""
        airgap = spec.cluster.k3s.airgap
        if airgap is None:
            return []
        problems = []
        version = spec.cluster.kubernetes_version
        files = versions.k3s_release_files(airgap.arch)
        for field, key in AIRGAP_SUM_KEYS:
            given = getattr(airgap.sha256, field)
            file = "install.sh" if field == "install_script" else files[field]
            pinned = versions.k3s_release_sha256(version, file) if version in versions.K3S_RELEASES else None
            at = f"gpufleet:cluster.k3s.airgap.sha256.{key}"
            if not given and not pinned:
                problems.append(Problem(stack, at, f"required: gpufleet records no sha256 of {file} for k3s "
                                        f"{versions.K3S_RELEASES.get(version, version)}, and a k3s release file is "
                                        "installed only after its sha256 matches (copy it from the release's "
                                        "sha256sum-<arch>.txt; install.sh: sha256sum of the file at the release tag)",
                                        given))
            elif given and pinned and given != pinned:
                problems.append(Problem(stack, at, f"differs from the sha256 gpufleet records for {file} of k3s "
                                        f"{versions.K3S_RELEASES[version]} ({pinned}, gpufleet/base/versions.py with "
                                        "its source): one of them is not that file's; check the release's "
                                        "sha256sum-<arch>.txt, or leave the key out to use the recorded one", given))
        if not spec.registry.mirror:
            problems.append(Problem(stack, MIRROR, "required by cluster.k3s.airgap: hosts without internet reach no "
                                                   "public registry, so every chart image must come from a mirror"))
        return problems

    # --- images ---

    def own_charts_with_images(self, spec: Any) -> list[ChartImages]:
        rdma = [p for p in spec.node_pools if p.rdma]
        if not rdma:
            return []
        kinds = {p.rdma_network.network for p in rdma}
        when = {f"rdma-{k}" for k in kinds} | {"rdma-secondary-network"}
        return [(versions.NETWORK_OPERATOR.name, versions.NETWORK_OPERATOR.version, when, {})]

    def host_downloads(self, spec: Any) -> list[HostDownload]:
        """The k3s release files `pulumi up` installs: from GitHub, or from the stack's air-gap source."""
        version = spec.cluster.kubernetes_version
        release = versions.k3s_release(version)
        airgap = spec.cluster.k3s.airgap
        arch = airgap.arch if airgap else "amd64"
        files = versions.k3s_release_files(arch)
        sums = airgap_sums(airgap, version) if airgap else {}
        out = [("install.sh", versions.k3s_install_script_url(version), release,
                (sums["install_script"] if airgap else versions.k3s_install_script_sha256(version)) or "")]
        for role in ("k3s", "images", "sums"):
            if role == "images" and airgap is None:
                continue  # online hosts pull k3s's images from their registries
            sha = sums.get(role) if role != "sums" else None
            out.append((files[role], versions.k3s_release_url(version, files[role]), release, sha or ""))
        return out

    rdma_fabric = "network-operator"

    # --- upkeep ---
    def upkeep_problems(self, stack: str, spec: Any) -> list[Problem]:
        return _rdma_ranges(stack, spec) + _default_storage_class(stack, spec)

    def missing_device_plugin(self, pool: Any) -> Optional[str]:
        if pool.gpu is None or is_amd(pool):
            return None  # AMD pools advertise amd.com/gpu through the AMD GPU Operator
        return "k3s hosts have no device plugin of their own"


def _rdma_ranges(stack: str, spec: Any) -> list[Problem]:
    """gpufleet makes one NV-IPAM IPPool per RDMA pool (components/gpu_stack/network_operator.py), and each IPPool
    allocates on its own: two pools on overlapping subnets can give two pods the same address. (EKS (EFA) and GKE
    (GPUDirect) pools take the cloud's addresses.)"""
    problems = []
    seen: list[tuple[int, Any]] = []
    for i, pool in enumerate(spec.node_pools):
        if not pool.rdma or pool.rdma_network is None:
            continue
        mine = ipaddress.ip_network(pool.rdma_network.ip_range)
        for j, other in seen:
            if mine.version == other.version and mine.overlaps(other):
                problems.append(Problem(stack, f"{NS}:nodePools[{i}].rdmaNetwork.ipRange", f"overlaps "
                                        f"{NS}:nodePools[{j}].rdmaNetwork.ipRange ({other}): each pool's RDMA network "
                                        "needs a range of its own", str(mine)))
                break
        seen.append((i, mine))
    return problems


def _default_storage_class(stack: str, spec: Any) -> list[Problem]:
    """kube-prometheus-stack's Prometheus claims its volume on the default StorageClass (components/observability/
    stack.py storageSpec, no storageClassName). On k3s the default class is k3s's local-path
    (storage.localPath.enabled); gpufleet's NFS class is not default. Without it the claim stays Pending and
    Prometheus never starts (Kubernetes docs, "Default StorageClass": a claim without storageClassName waits for one)."""
    if spec.storage.local_path.enabled:
        return []
    if spec.observability.backend(spec.cluster.platform) != "kube-prometheus-stack":
        return []
    return [Problem(stack, f"{NS}:observability.metrics.backend", "Prometheus keeps its samples on a volume of the "
                    f"default StorageClass, and this k3s cluster has none ({NS}:storage.localPath.enabled is false): "
                    "turn localPath on, or choose backend none", "kube-prometheus-stack")]
