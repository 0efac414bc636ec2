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
workloads mount it read-only. The checks that need the platform live in `check` below; what differs by platform (the
settings it takes, its own rules, its ReadWriteMany class, who installs its driver) is its AddonTraits
(gpufleet/base/platforms/<name>/addons.py), asked, never named.
"""

from typing import Annotated, Optional

from pydantic import Field

from gpufleet.base import platforms
from gpufleet.base.spec import ids
from gpufleet.base.spec.base import DNS_LABEL, Model
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"
LUSTRE_CLASS = "gpufleet-lustre"
ImageRef = Annotated[str, Field(pattern=ids.IMAGE_REF, max_length=255)]
# The coldStart settings only some platforms take (AddonTraits.cold_start_settings), each with whose setting it is, as
# the refusal on another platform says it. Image streaming and the disk image cache suggest the platform's way instead.
PLATFORM_SETTINGS = (
    ("image_streaming", "imageStreaming", "a GKE node pool setting"),
    ("secondary_boot_disk", "secondaryBootDisk", "a GKE node pool setting"),
)
DATA_VOLUME = ("data_volume_snapshot", "dataVolumeSnapshot", "an EKS Bottlerocket setting")


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
        """Whether the pool gets the pre-pull DaemonSet on `platform` (by name): as `prePull` says, else the
        platform's default (AddonTraits.pre_pulls_images)."""
        if not self.images:
            return False
        return self.pre_pull if self.pre_pull is not None else platforms.get(platform).addons.pre_pulls_images

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


def listed_images(cs: ColdStartSpec) -> str:
    """The pool's cold-start images as the plan's cold-start lines name them."""
    return f"{len(cs.images)} image(s): {', '.join(cs.images)}" if cs.images else "no images listed"


def check(stack: str, spec) -> list[Problem]:
    """A cold-start path the pool's platform, AMI or node image cannot use is an error naming the key."""
    problems: list[Problem] = []
    platform = spec.cluster.platform
    traits = platforms.of(spec).addons
    for i, pool in enumerate(spec.node_pools):
        cs = pool.cold_start
        if cs is None:
            continue
        at = f"{NS}:nodePools[{i}].coldStart"
        set_ = cs.model_fields_set
        for field, alias, whose in PLATFORM_SETTINGS:
            if alias not in traits.cold_start_settings and field in set_ and getattr(cs, field) not in (None, False):
                problems.append(Problem(stack, f"{at}.{alias}", f"{whose}, not available on {platform} "
                                        f"({traits.cold_start_instead})", getattr(cs, field)))
        field, alias, whose = DATA_VOLUME
        if alias not in traits.cold_start_settings and cs.data_volume_snapshot is not None:
            problems.append(Problem(stack, f"{at}.{alias}", f"{whose}, not available on {platform}",
                                    cs.data_volume_snapshot))
        if traits.parallel_image_pulls_refusal and cs.parallel_image_pulls is not None:
            problems.append(Problem(stack, f"{at}.parallelImagePulls", traits.parallel_image_pulls_refusal,
                                    cs.parallel_image_pulls))
        problems += traits.cold_start_problems(stack, at, spec, pool)
    problems += _precompiled(stack, spec)
    rwx = platforms.of(spec).addons.rwx_storage_class(spec)
    egress = traits.node_egress(spec) if spec.model_caches else None
    seen: dict[tuple[str, str], int] = {}
    for i, cache in enumerate(spec.model_caches):
        at = f"{NS}:modelCaches[{i}]"
        key = (cache.namespace, cache.name)
        if key in seen:
            problems.append(Problem(stack, f"{at}.name", f"duplicate model cache in namespace {cache.namespace} (also "
                                    f"modelCaches[{seen[key]}])", cache.name))
        seen.setdefault(key, i)
        if egress is not None and cache.scheme not in egress[1]:
            # The prefetch Job downloads from the source itself (components/cold_start/model_cache.py; hf: also its
            # hash-locked huggingface_hub install from PyPI).
            problems.append(Problem(stack, f"{at}.source", f"{egress[0]}, and the cache's prefetch Job downloads from "
                                    "this source" + (" and installs huggingface_hub from PyPI" if cache.scheme == "hf"
                                                     else "") + ": copy the model onto the cache's storage yourself "
                                    "and leave modelCaches out" + (f", or use a {'/'.join(sorted(s + '://' for s in egress[1]))} source"
                                                                   if egress[1] else ""), cache.source))
        if cache.storage_class is None and rwx is not None:
            problems += traits.model_cache_problems(stack, at, spec, cache)
        if cache.storage_class is None and rwx is None:
            problems.append(Problem(stack, f"{at}.storageClass", f"a model cache needs ReadWriteMany storage and this "
                                    f"stack configures none: {traits.rwx_storage_hint}, or name a StorageClass"))
    return problems


# GPU Operator docs, "Precompiled Driver Containers" (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/
# precompiled-drivers.html), Limitations: "NVIDIA builds images for the aws, azure, generic, nvidia, and oracle kernel
# variants", x86_64 only, for the operating systems in the Supported Precompiled Drivers table (Ubuntu 22.04, 24.04).
PRECOMPILED_KERNEL_VARIANTS = ("aws", "azure", "generic", "nvidia", "oracle")


def _precompiled(stack: str, spec) -> list[Problem]:
    """Precompiled driver containers only where the GPU Operator installs the driver on an OS NVIDIA builds them for
    (and the platform does not refuse them: AddonTraits.precompiled_driver_refusal)."""
    driver = spec.gpu_operator.driver
    if not driver.precompiled:
        return []
    at = f"{NS}:gpuOperator.driver.precompiled"
    if driver.source == "preinstalled":
        return [Problem(stack, at, "the hosts' driver is preinstalled: the GPU Operator installs none (remove it, or use "
                        "source: operator)", True)]
    if not spec.gpu_operator.enabled:
        return [Problem(stack, at, "the GPU Operator is off (gpuOperator.enabled: false), so it installs no driver", True)]
    refusal = platforms.of(spec).addons.precompiled_driver_refusal(spec)
    return [Problem(stack, at, refusal, True)] if refusal else []


def paths(spec, pool) -> list[str]:
    """What is in place for the pool's cold start, for the plan's capacity section (empty without a coldStart block)."""
    cs = pool.cold_start
    if cs is None:
        return []
    out = platforms.of(spec).addons.cold_start_paths(spec, pool)
    if cs.pre_pulls(spec.cluster.platform):
        out.append(f"pre-pull DaemonSet: {listed_images(cs)}")
    out.append(f"driver: {driver_path(spec)}")
    return out


def driver_path(spec) -> str:
    """Where the pool's NVIDIA driver comes from, as the cold-start line says it."""
    own = platforms.of(spec).addons.platform_driver(spec)
    if own:
        return own
    driver = spec.gpu_operator.driver
    if driver.source == "preinstalled":
        return "preinstalled on the hosts (the GPU Operator does not install it)"
    if driver.precompiled:
        return "GPU Operator, precompiled driver container (no compilation on the node)"
    return "GPU Operator, compiled on each node at first boot"
