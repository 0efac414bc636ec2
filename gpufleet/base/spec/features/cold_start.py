"""gpufleet:nodePools[].coldStart and gpufleet:modelCaches — getting a GPU node from zero to a running model quickly.

A pool that scales from zero is useful only if its first pod starts soon. Each platform has its own fastest image
path; a pool declares it once (`coldStart`) and gpufleet writes the platform's real inputs (docs/cold-start.md, with
the source of every fact and what each path saves according to it):

- GKE: image streaming (`gcfs_config`) and a secondary boot disk holding a container image cache, made from a disk
  image the user builds outside gpufleet (GoogleCloudPlatform/ai-on-gke tools/gke-disk-image-builder) from the images
  the pool lists; gpufleet takes the disk image's name and shows the list in the plan, it builds nothing.
- EKS: on Bottlerocket, the data volume (/dev/xvdb, where containerd keeps images) created from an EBS snapshot with
  the images pre-pulled; on both GPU AMIs a bound on parallel image pulls (kubelet `maxParallelImagePulls`).
- k3s: a pre-pull DaemonSet on the pool's nodes for the listed images.

A model cache is a ReadWriteMany claim on the storage gpufleet already configures, filled once by a prefetch Job;
workloads mount it read-only. The checks that need the platform live in `check` below.
"""

from typing import Annotated, Optional

from pydantic import Field, field_validator

from gpufleet.base.spec import ids
from gpufleet.base.spec.base import DNS_LABEL, Model
from gpufleet.base.spec.platforms.eks import pool_local_storage
from gpufleet.base.spec.platforms.gke import MANAGED_LUSTRE_TIERS
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
LUSTRE_CLASS = "gpufleet-lustre"
ImageRef = Annotated[str, Field(pattern=ids.IMAGE_REF, max_length=255)]

# GKE "Use secondary boot disks to preload data or container images" (cloud.google.com/kubernetes-engine/docs/how-to/
# data-container-image-preloading, Requirements): container image caches on Container-Optimized OS nodes need GKE
# 1.30.1-gke.1329000 or later (Ubuntu nodes 1.35.0-gke.1403000; gpufleet's Ubuntu pools cannot stream images, below).
GKE_SECONDARY_BOOT_DISK_MINOR = (1, 30)
# GKE node pool kubelet_config.max_parallel_image_pulls: "must be between 2 and 5, inclusive" (pulumi_gcp
# container NodePoolNodeConfigKubeletConfigArgs, from the GKE API's NodeKubeletConfig.maxParallelImagePulls).
GKE_PARALLEL_PULLS = (2, 5)


class ColdStartSpec(Model):
    """The pool's fastest image path (docs/cold-start.md). Every field is optional; without the block nothing changes."""

    images: list[ImageRef] = Field(default=[], max_length=32)
    """Container images the pool's first pods need, e.g. ["nvcr.io/nvidia/pytorch:25.01-py3"]. k3s (and any pool with
    prePull): pulled ahead by a DaemonSet on the pool's nodes. GKE: what the secondary boot disk's image was built from;
    EKS: what the data-volume snapshot holds (both shown in the plan; gpufleet does not build them). Default: none."""
    image_streaming: Optional[bool] = None
    """GKE: image streaming (node_config.gcfs_config): containers start while their image streams in. Needs
    Container-Optimized OS nodes (cluster.gke.gpuStack: gke) and images in Artifact Registry. Default: on when
    `secondaryBootDisk` is set (GKE requires it there), else off."""
    secondary_boot_disk: Optional[str] = Field(default=None, pattern=ids.GCE_DISK_IMAGE)
    """GKE: a disk image with a container image cache (mode CONTAINER_IMAGE_CACHE), `global/images/<name>` or
    `projects/<project>/global/images/<name>`, built from `images` with ai-on-gke's gke-disk-image-builder. Changing it
    replaces the node pool (GKE cannot update the disk image of existing nodes). Default: none."""
    data_volume_snapshot: Optional[str] = Field(default=None, pattern=ids.EBS_SNAPSHOT)
    """EKS, Bottlerocket pools: an EBS snapshot of a Bottlerocket data volume with `images` pre-pulled (aws-samples
    bottlerocket-images-cache); every node's data volume (/dev/xvdb) starts from it, so the images are there at boot.
    rootVolumeGiB must be at least the snapshot's size. Default: none."""
    parallel_image_pulls: Optional[int] = Field(default=None, ge=2, le=32)
    """The most image pulls the kubelet runs at once (KubeletConfiguration maxParallelImagePulls). EKS: both GPU AMIs
    already pull in parallel without a bound (nodeadm and Bottlerocket set serializeImagePulls false); this sets one
    (AL2023: nodeadm kubelet config; Bottlerocket: settings.kubernetes.max-parallel-image-pulls, Bottlerocket 1.51 or
    later). GKE: kubelet_config.max_parallel_image_pulls, 2 to 5. Not on k3s (no kubelet flag exists for it).
    Default: the platform's."""
    pre_pull: Optional[bool] = None
    """Pull `images` on each of the pool's nodes ahead of its pods, with a DaemonSet (one init container per image).
    Default: on for k3s pools that list images, off elsewhere (the cloud paths above carry the images)."""

    def pre_pulls(self, platform: str) -> bool:
        """Whether the pool gets the pre-pull DaemonSet."""
        if not self.images:
            return False
        return self.pre_pull if self.pre_pull is not None else platform == "k3s"

    def streams(self) -> bool:
        """GKE: whether image streaming is on."""
        if self.image_streaming is not None:
            return self.image_streaming
        return self.secondary_boot_disk is not None


class ModelCacheSpec(Model):
    """A shared model cache: a ReadWriteMany claim on the stack's file storage, filled once by a prefetch Job;
    workloads mount it read-only (`persistentVolumeClaim: {claimName: <name>, readOnly: true}`)."""

    name: str = Field(pattern=DNS_LABEL, max_length=52)
    """Name of the PersistentVolumeClaim (the Job is `<name>-prefetch`)."""
    namespace: str = Field(default="default", pattern=DNS_LABEL, max_length=63)
    """The team's namespace (it must exist: a team namespace of addons.kueue.teams, or your own); default: default."""
    source: str = Field(pattern=ids.MODEL_SOURCE, max_length=512)
    """Where the model comes from: s3://bucket/prefix, gs://bucket/prefix or hf://owner/model[@revision]."""
    size: str = Field(default="1200Gi", pattern=ids.STORAGE_SIZE)
    """Requested size, e.g. 2400Gi; default 1200Gi, the smallest FSx for Lustre persistent file system (Filestore and
    NFS classes provision what is asked; the plan prices what is billed)."""
    credentials_secret: Optional[str] = Field(default=None, pattern=ids.DNS_SUBDOMAIN, max_length=253)
    """Name of a Kubernetes Secret in the namespace whose keys become the Job's environment (AWS_ACCESS_KEY_ID and
    AWS_SECRET_ACCESS_KEY, HF_TOKEN, ...). Only a reference: gpufleet never holds the credential. Default: none (the
    pod's own identity, or a public source)."""
    storage_class: Optional[str] = Field(default=None, pattern=ids.DNS_SUBDOMAIN, max_length=253)
    """StorageClass of the claim; default: the stack's ReadWriteMany class (EKS: FSx for Lustre, GKE: Filestore
    `gpufleet-rwx`, k3s: the NFS class)."""

    @property
    def scheme(self) -> str:
        return self.source.split("://", 1)[0]


def rwx_storage_class(spec) -> Optional[str]:
    """The ReadWriteMany StorageClass gpufleet creates for the stack's platform, or None when it creates none."""
    platform = spec.cluster.platform
    if platform == "eks":
        fsx = spec.cluster.eks.storage.fsx_lustre
        return fsx.storage_class_name if fsx is not None else None
    if platform == "gke":
        storage = spec.cluster.gke.storage
        if storage.managed_lustre:
            return LUSTRE_CLASS
        return "gpufleet-rwx" if storage.filestore else None
    nfs = spec.storage.nfs
    return nfs.storage_class if nfs is not None else None


def _rwx_missing(platform: str) -> str:
    return {
        "eks": "set cluster.eks.storage.fsxLustre (FSx for Lustre)",
        "gke": "set cluster.gke.storage.managedLustre: true (Managed Lustre) or filestore: true (Filestore)",
        "k3s": "set storage.nfs",
        "existing": "gpufleet installs no storage on an existing cluster: cache models on its own ReadWriteMany class",
    }[platform]


_BINARY = {"Gi": 1, "Ti": 1024, "Pi": 1024 * 1024}


def _gib(size: str):
    """A claim size in GiB when it is given in Gi, Ti or Pi (else None: not judged here)."""
    for suffix, factor in _BINARY.items():
        if size.endswith(suffix) and size[: -len(suffix)].isdigit():
            return int(size[: -len(suffix)]) * factor
    return None


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def check(stack: str, spec) -> list[Problem]:
    """A cold-start path the pool's platform, AMI or node image cannot use is an error naming the key."""
    problems: list[Problem] = []
    platform = spec.cluster.platform
    for i, pool in enumerate(spec.node_pools):
        cs = pool.cold_start
        if cs is None:
            continue
        at = f"{NS}:nodePools[{i}].coldStart"
        set_ = cs.model_fields_set
        gke_only = [("image_streaming", "imageStreaming"), ("secondary_boot_disk", "secondaryBootDisk")]
        if platform != "gke":
            for field, alias in gke_only:
                if field in set_ and getattr(cs, field) not in (None, False):
                    problems.append(Problem(stack, f"{at}.{alias}", f"a GKE node pool setting, not available on {platform}"
                                            + (" (EKS: dataVolumeSnapshot on Bottlerocket pools)" if platform == "eks" else
                                               " (k3s: list the images and they are pre-pulled)"), getattr(cs, field)))
        if platform != "eks" and cs.data_volume_snapshot is not None:
            problems.append(Problem(stack, f"{at}.dataVolumeSnapshot", f"an EKS Bottlerocket setting, not available on "
                                    f"{platform}", cs.data_volume_snapshot))
        if platform == "k3s" and cs.parallel_image_pulls is not None:
            # maxParallelImagePulls is a KubeletConfiguration field only: the kubelet has no flag for it, and k3s
            # configures its kubelet through flags (kubelet-arg).
            problems.append(Problem(stack, f"{at}.parallelImagePulls", "not available on k3s: maxParallelImagePulls is "
                                    "a kubelet configuration-file field with no command-line flag, and k3s sets its "
                                    "kubelet by flags; remove it", cs.parallel_image_pulls))
        if platform == "eks":
            problems += _eks(stack, at, spec, pool, cs)
        if platform == "gke":
            problems += _gke(stack, at, spec, cs)
    problems += _precompiled(stack, spec)
    rwx = rwx_storage_class(spec)
    seen: dict[tuple[str, str], int] = {}
    for i, cache in enumerate(spec.model_caches):
        at = f"{NS}:modelCaches[{i}]"
        key = (cache.namespace, cache.name)
        if key in seen:
            problems.append(Problem(stack, f"{at}.name", f"duplicate model cache in namespace {cache.namespace} (also "
                                    f"modelCaches[{seen[key]}])", cache.name))
        seen.setdefault(key, i)
        if cache.storage_class is None and rwx == LUSTRE_CLASS:
            tier = spec.cluster.gke.storage.managed_lustre_throughput
            step = MANAGED_LUSTRE_TIERS[tier]
            gib = _gib(cache.size)
            if gib is not None and (gib < step or gib % step):
                problems.append(Problem(stack, f"{at}.size", f"a Managed Lustre instance at {tier} MB/s per TiB takes "
                                        f"{step:,} GiB or more in steps of {step:,} GiB (e.g. {max(step, -(-int(gib) // step) * step)}Gi); "
                                        "or name a Filestore storageClass (gpufleet-rwx)", cache.size))
        if cache.storage_class is None and rwx is None:
            problems.append(Problem(stack, f"{at}.storageClass", f"a model cache needs ReadWriteMany storage and this "
                                    f"stack configures none: {_rwx_missing(platform)}, or name a StorageClass"))
    return problems


# GPU Operator docs, "Precompiled Driver Containers" (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
# precompiled-drivers.html), Limitations: "NVIDIA builds images for the aws, azure, generic, nvidia, and oracle kernel
# variants", x86_64 only, for the operating systems in the Supported Precompiled Drivers table (Ubuntu 22.04, 24.04).
PRECOMPILED_KERNEL_VARIANTS = ("aws", "azure", "generic", "nvidia", "oracle")


def _precompiled(stack: str, spec) -> list[Problem]:
    """Precompiled driver containers only where the GPU Operator installs the driver on an OS NVIDIA builds them for."""
    driver = spec.gpu_operator.driver
    if not driver.precompiled:
        return []
    at = f"{NS}:gpuOperator.driver.precompiled"
    platform = spec.cluster.platform
    if driver.source == "preinstalled":
        return [Problem(stack, at, "the hosts' driver is preinstalled: the GPU Operator installs none (remove it, or use "
                        "source: operator)", True)]
    if not spec.gpu_operator.enabled:
        return [Problem(stack, at, "the GPU Operator is off (gpuOperator.enabled: false), so it installs no driver", True)]
    if platform == "eks":
        return [Problem(stack, at, "the EKS GPU AMIs carry the driver already; the GPU Operator does not install one "
                        "there", True)]
    if platform == "gke" and spec.cluster.gke.gpu_stack == "gke":
        return [Problem(stack, at, "GKE installs the driver itself (cluster.gke.gpuStack: gke); the GPU Operator is not "
                        "installed", True)]
    if platform == "gke":
        return [Problem(stack, at, "GKE Ubuntu nodes run GKE's own kernel variant; NVIDIA publishes precompiled driver "
                        f"containers only for the {', '.join(PRECOMPILED_KERNEL_VARIANTS)} variants", True)]
    return []


def _eks(stack: str, at: str, spec, pool, cs: ColdStartSpec) -> list[Problem]:
    problems = []
    karpenter = spec.cluster.eks.autoscaler.kind == "karpenter"
    if karpenter and cs.parallel_image_pulls is not None and pool.ami.startswith("bottlerocket"):
        # Karpenter rebuilds a Bottlerocket node's settings.kubernetes from its own typed subset, which has no
        # max-parallel-image-pulls: the setting would be dropped (karpenter-provider-aws at the pinned release,
        # versions.KARPENTER: pkg/providers/amifamily/bootstrap/bottlerocketsettings.go, MarshalTOML). AL2023 nodes
        # take it (nodeadm).
        problems.append(Problem(stack, f"{at}.parallelImagePulls", "not available on Karpenter Bottlerocket pools: "
                                "Karpenter rewrites settings.kubernetes from the fields it knows and drops "
                                "max-parallel-image-pulls; use ami: al2023-nvidia or remove it", cs.parallel_image_pulls))
    if cs.data_volume_snapshot is not None:
        if not pool.ami.startswith("bottlerocket"):
            # AL2023 keeps images on the root volume, which comes from the AMI; only Bottlerocket has a separate data
            # volume that a snapshot can carry (AWS Containers blog, "Reduce container startup time on Amazon EKS with
            # Bottlerocket data volume").
            problems.append(Problem(stack, f"{at}.dataVolumeSnapshot", f"needs a Bottlerocket pool (ami: "
                                    f"bottlerocket-nvidia): {pool.ami} keeps images on its root volume, which comes from the "
                                    "AMI", cs.data_volume_snapshot))
        elif pool_local_storage(pool) == "raid0" and not karpenter:
            # (Karpenter node classes set no instanceStorePolicy: containerd stays on the data volume there.)
            problems.append(Problem(stack, f"{at}.dataVolumeSnapshot", "with localStorage: raid0 containerd runs on the "
                                    "instance-store RAID, so the snapshot's images on the data volume are never used; set "
                                    "localStorage: none on this pool", cs.data_volume_snapshot))
    return problems


def _gke(stack: str, at: str, spec, cs: ColdStartSpec) -> list[Problem]:
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


def paths(spec, pool) -> list[str]:
    """What is in place for the pool's cold start, for the plan's capacity section (empty without a coldStart block)."""
    cs = pool.cold_start
    if cs is None:
        return []
    platform = spec.cluster.platform
    out: list[str] = []
    listed = f"{len(cs.images)} image(s): {', '.join(cs.images)}" if cs.images else "no images listed"
    if platform == "gke":
        out.append("image streaming on" if cs.streams() else "image streaming off")
        if cs.secondary_boot_disk:
            out.append(f"secondary boot disk {cs.secondary_boot_disk} (container image cache, built outside gpufleet "
                       f"from {listed})")
        out.append(f"parallel image pulls: at most {cs.parallel_image_pulls}" if cs.parallel_image_pulls
                   else "parallel image pulls: GKE's default")
    elif platform == "eks":
        if cs.data_volume_snapshot:
            out.append(f"data volume from snapshot {cs.data_volume_snapshot} (pre-pulled, built outside gpufleet: {listed})")
        elif pool.ami.startswith("bottlerocket"):
            out.append("no data-volume snapshot: images are pulled at boot")
        else:
            out.append(f"no image cache on {pool.ami} (a data-volume snapshot needs Bottlerocket)")
        out.append(f"parallel image pulls: at most {cs.parallel_image_pulls}" if cs.parallel_image_pulls
                   else "parallel image pulls: on, unbounded (the AMI's default)")
    else:
        out.append("no image streaming or disk image cache on k3s")
    if cs.pre_pulls(platform):
        out.append(f"pre-pull DaemonSet: {listed}")
    out.append(f"driver: {driver_path(spec)}")
    return out


def driver_path(spec) -> str:
    """Where the pool's NVIDIA driver comes from, as the cold-start line says it."""
    platform = spec.cluster.platform
    if platform == "gke" and spec.cluster.gke.gpu_stack == "gke":
        return "GKE-managed (installed by GKE at boot, not by the GPU Operator)"
    if platform == "eks":
        return "preinstalled in the AMI (the GPU Operator does not install it)"
    driver = spec.gpu_operator.driver
    if driver.source == "preinstalled":
        return "preinstalled on the hosts (the GPU Operator does not install it)"
    if driver.precompiled:
        return "GPU Operator, precompiled driver container (no compilation on the node)"
    return "GPU Operator, compiled on each node at first boot"
