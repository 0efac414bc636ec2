"""Which storage, cold-start, registry, image and metrics features a platform has, and why not when it has not.

SkyPilot's `CloudImplementationFeatures` is the model: what a platform cannot do is data here (a set of settings it
takes, a refusal it words), and the shared checks (gpufleet/base/spec/features/{cold_start,registry_checks,
image_checks,observability_checks}.py, gpufleet/base/spec/checks/upkeep_checks.py), `gpufleet images` and
`gpufleet verify` ask these traits instead of naming a platform. Rules only one platform has are its own methods
(`cold_start_problems`, `registry_problems`, `upkeep_problems`), called by the shared check at the place they belong.

The defaults are what a platform that declares nothing gets: nodes gpufleet knows nothing special about, the GPU
Operator installing the driver and device plugin, kube-prometheus-stack or no metrics, no extra checks. The check
methods return `gpufleet.base.spec.errors.Problem`s (not imported here: the spec imports this registry).
"""

from __future__ import annotations

from typing import Any, Optional

# What a chart whose images gpufleet writes is, as gpufleet/base/spec/features/image_checks.py lists it: (chart name,
# chart version, the `when` settings of the catalog's image slots that hold, fill-ins for `{tag}` in an image).
ChartImages = tuple[str, str, set[str], dict[str, str]]
# A file `pulumi up` downloads onto hosts, as `gpufleet images` lists it: (name, url, version, sha256 or "").
HostDownload = tuple[str, str, str, str]
# A driver a node image carries, as the upkeep warning names it: (stack key, driver version, where from).
HostDriver = tuple[str, str, str]


class AddonTraits:
    """Defaults: a platform that declares nothing here."""

    # --- cold start (gpufleet:nodePools[].coldStart, gpufleet:modelCaches) ---

    pre_pulls_images: bool = False
    """Whether a pool that lists `coldStart.images` gets gpufleet's pre-pull DaemonSet when it does not say `prePull`
    (a platform with no image cache of its own). Default: False (prePull: true asks for it)."""

    cold_start_settings: frozenset[str] = frozenset()
    """The platform-specific `coldStart` keys its pools take: `imageStreaming`, `secondaryBootDisk` (GKE's image
    streaming and disk image cache), `dataVolumeSnapshot` (an EKS Bottlerocket data volume). A pool that sets one the
    platform does not take is refused. Default: none of them."""

    cold_start_instead: str = "list the images with prePull: true"
    """What the refusal of GKE's image streaming or disk image cache suggests instead on this platform, in the
    parentheses after it. Default: the pre-pull DaemonSet, which runs on every platform."""

    parallel_image_pulls_refusal: Optional[str] = None
    """Why the platform's kubelet cannot take `coldStart.parallelImagePulls` (the refusal's words); None: it takes it
    or ignores it. Default: None."""

    def cold_start_problems(self, stack: str, at: str, spec: Any, pool: Any) -> list[Any]:
        """The platform's own rules for a pool's `coldStart` block (at `at`): an AMI, node image, autoscaler or
        Kubernetes version that cannot use a setting it takes. Default: none."""
        return []

    def cold_start_paths(self, spec: Any, pool: Any) -> list[str]:
        """The platform's image paths for a pool with a `coldStart` block, as the plan's capacity section lists them
        (before the pre-pull and driver lines). Default: it has none."""
        return ["no image streaming or disk image cache"]

    def platform_driver(self, spec: Any) -> Optional[str]:
        """Where the NVIDIA driver comes from when the platform, not the GPU Operator nor the hosts, provides it (its
        node image, its own GPU stack), as the plan's cold-start line says it; None: `gpuOperator.driver` decides.
        Default: None."""
        return None

    def precompiled_driver_refusal(self, spec: Any) -> Optional[str]:
        """Why `gpuOperator.driver.precompiled` cannot work on this stack's nodes (the operator installs no driver
        there, or NVIDIA builds no precompiled container for their kernel); None: it can. Default: None."""
        return None

    # --- storage ---

    def rwx_storage_class(self, spec: Any) -> Optional[str]:
        """The ReadWriteMany StorageClass gpufleet creates for the stack (model caches default to it), or None when
        it creates none. Default: the NFS class of `gpufleet:storage.nfs`, when set."""
        nfs = spec.storage.nfs
        return nfs.storage_class if nfs is not None else None

    rwx_storage_hint: str = "set storage.nfs"
    """How to give the stack a ReadWriteMany class, as the refusal of a model cache without one says it.
    Default: the NFS class (`gpufleet:storage.nfs`), as `rwx_storage_class` reads it."""

    def model_cache_problems(self, stack: str, at: str, spec: Any, cache: Any) -> list[Any]:
        """The platform's own limits on a model cache (at `at`) that takes the default ReadWriteMany class (a
        file system's size steps). Default: none."""
        return []

    def node_egress(self, spec: Any) -> Optional[tuple[str, frozenset[str]]]:
        """What the stack's nodes reach when they have no path to the internet: (why not, as a refusal says it; the
        model-cache source schemes they still reach, e.g. `s3` through a VPC gateway endpoint). A model cache whose
        source is not among them is refused (its prefetch Job downloads from the source; `hf://` also installs
        huggingface_hub from PyPI). None: the nodes reach the internet. Default: None."""
        return None

    # --- registry mirror and air gap (gpufleet:registry) ---

    own_charts: frozenset[str] = frozenset()
    """Pinned charts (their names, `versions.<PIN>.name`) the platform's own components may install on any of its
    stacks (its autoscaler, storage driver, device plugins): a mirror that cannot serve their images is refused.
    Default: none."""

    def unmirrored_manifests(self, spec: Any) -> list[str]:
        """What the platform's components apply as published (manifests fetched at `pulumi up`) whose images no
        mirror can redirect, each as the refusal names it. Default: none."""
        return []

    registry_credentials: bool = False
    """Whether gpufleet writes the mirror's pull credentials (`registry.username`, `gpufleet:registryPassword`) into
    the platform's nodes. Default: False (the nodes pull with their own identity)."""

    def registry_problems(self, stack: str, spec: Any, config: dict) -> list[Any]:
        """The platform's own registry rules: a mirror its nodes cannot pull from, a private network with no path to
        its images, an air-gapped site missing what it needs. Default: none."""
        return []

    # --- images gpufleet writes (gpufleet:images.pinDigests, `gpufleet images`, `gpufleet verify`) ---

    def own_gpu_stack(self, spec: Any) -> Optional[str]:
        """Why gpufleet installs no NVIDIA GPU Operator on this stack because the platform installs the driver and
        device plugin itself, as `gpufleet verify` says it; None: the operator is installed when gpuOperator.enabled.
        Default: None."""
        return None

    def own_charts_with_images(self, spec: Any) -> list[ChartImages]:
        """The charts whose images gpufleet writes that the platform's components install on this stack (its
        autoscaler, its RDMA stack), after the GPU Operators. Default: none."""
        return []

    def host_downloads(self, spec: Any) -> list[HostDownload]:
        """The files `pulumi up` downloads onto the platform's hosts (a Kubernetes distribution's release), for
        `gpufleet images`. Default: none (the cloud builds its nodes)."""
        return []

    rdma_fabric: Optional[str] = None
    """The fabric of the platform's RDMA pools that `gpufleet verify` has an NCCL all-reduce check for:
    `network-operator` (RDMA shared device plugin and a secondary network), `efa`, `gpudirect`
    (gpufleet/app/verify/nccl/allreduce.py). Default: None, no check."""

    # --- observability (gpufleet:observability) ---

    metrics_backends: tuple[str, ...] = ("kube-prometheus-stack", "none")
    """The `observability.metrics.backend` values the platform offers besides `auto`. Default: a self-run
    kube-prometheus-stack or none."""

    default_metrics_backend: str = "none"
    """What `backend: auto` is on the platform. Default: none (a self-run Prometheus holds a priced volume: opt in)."""

    # --- upkeep (mistakes that plan clean and fail at `pulumi up`) ---

    def upkeep_problems(self, stack: str, spec: Any) -> list[Any]:
        """The platform's own limits that a stack would hit only at `pulumi up` (maintenance exclusions, reservation
        types, address ranges, a volume without a StorageClass). Default: none."""
        return []

    def missing_device_plugin(self, pool: Any) -> Optional[str]:
        """With the GPU Operator off: why nothing would advertise a (shaped) pool's nvidia.com/gpu on the platform's
        nodes (the end of the refusal), or None when its node image or the platform advertises it itself or the pool
        needs none. Default: the nodes have no device plugin of their own."""
        return "the platform's nodes have no device plugin of their own"

    def host_drivers(self, spec: Any) -> list[HostDriver]:
        """The NVIDIA drivers the platform's node images carry, judged against the GPU Operator's supported branches
        when `gpuOperator.driver.source` is preinstalled and no version is given. Default: none known."""
        return []
