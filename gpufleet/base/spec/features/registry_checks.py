"""Checks of gpufleet:registry and gpufleet:cluster.k3s.airgap (issue 37): a mirror that an image would bypass, a
site with no path to its images, a k3s release file with nothing to verify it by, each an error naming the key. What
differs by platform (the charts its components install, the registries its nodes can pull from, its private networks
and air-gapped hosts) is its AddonTraits (own_charts, unmirrored_manifests, registry_credentials, registry_problems)."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from gpufleet.base import platforms, versions
from gpufleet.base.catalog import images as catalog_images
from gpufleet.base.sharing import is_amd
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import AGENTGATEWAY_CLASS, ENVOY_CLASS, INFERENCE_POOL_CLASSES
from gpufleet.base.spec.shape import shaped_pools

MIRROR = "gpufleet:registry.mirror"
PASSWORD = "gpufleet:registryPassword"


class ChartKey(NamedTuple):
    key: str
    """The stack key that makes gpufleet install the chart, as the refusal names it."""
    installs: Callable[[Any], bool]
    """Whether a spec may install the chart: never false for a stack that installs it (it may be true for one that does
    not, e.g. every EKS stack for the EFA device plugin), so that a chart without a mirror list is refused before any
    resource is registered, never reaching components/image_mirror.py's KeyError."""
    why: str = ""
    """Why it cannot be redirected; default: the catalog lists no images for that chart version."""
    label: str = ""
    """The name users know it by; default: the chart's name."""


def _serving_class(spec: Any) -> str:
    return spec.serving.gateway.resolved(spec.cluster.platform) if spec.serving.enabled else ""


def _platform_installs(chart: str) -> Callable[[Any], bool]:
    """A chart the stack's platform's own components may install (AddonTraits.own_charts)."""
    return lambda s: chart in platforms.of(s).addons.own_charts


# Every chart pinned in gpufleet/base/versions.py at its pinned version, by name: the key that installs it. The GPU
# Operators are not here: their version is the stack's (gpuOperator.version, amdGpuOperator.version) and is judged
# below. tests/unit/test_registry_mirror_charts.py keeps the table complete.
CHART_KEYS: dict[str, ChartKey] = {
    versions.VOLCANO.name: ChartKey("gpufleet:addons.volcano", lambda s: s.addons.volcano.enabled,
                                    "its chart archive is not in ../shared/reference/charts, so no render can prove that "
                                    "every image it runs comes from the mirror", "Volcano"),
    versions.KUEUE.name: ChartKey("gpufleet:addons.kueue", lambda s: s.addons.kueue.enabled),
    versions.JOBSET.name: ChartKey("gpufleet:addons.jobset", lambda s: s.addons.jobset.enabled),
    versions.KUBEFLOW_TRAINER.name: ChartKey("gpufleet:addons.trainer", lambda s: s.addons.trainer.enabled),
    versions.KEDA.name: ChartKey("gpufleet:addons.keda", lambda s: s.addons.keda.enabled),
    versions.KUBE_PROMETHEUS_STACK.name: ChartKey("gpufleet:observability.metrics.backend", lambda s: True),
    versions.KUBE_STATE_METRICS.name: ChartKey("gpufleet:observability.metrics.backend", lambda s: True),
    versions.PROMETHEUS_NODE_EXPORTER.name: ChartKey("gpufleet:observability.metrics.backend", lambda s: True),
    versions.NETWORK_OPERATOR.name: ChartKey("gpufleet:nodePools[].rdma", lambda s: any(p.rdma for p in s.node_pools)),
    versions.CSI_DRIVER_NFS.name: ChartKey("gpufleet:storage.nfs", _platform_installs(versions.CSI_DRIVER_NFS.name)),
    versions.CLUSTER_AUTOSCALER.name: ChartKey("gpufleet:cluster.eks.autoscaler",
                                               _platform_installs(versions.CLUSTER_AUTOSCALER.name)),
    versions.KARPENTER.name: ChartKey("gpufleet:cluster.eks.autoscaler", _platform_installs(versions.KARPENTER.name)),
    versions.EFA_DEVICE_PLUGIN.name: ChartKey("gpufleet:nodePools[].efa",
                                              _platform_installs(versions.EFA_DEVICE_PLUGIN.name)),
    versions.DRA_DRIVER_NVIDIA_GPU.name: ChartKey("gpufleet:nodePools[].allocation",
                                                  lambda s: any(p.allocation == "dra" for p in s.node_pools)),
    versions.LWS.name: ChartKey("gpufleet:serving", lambda s: s.serving.enabled),
    versions.ENVOY_GATEWAY.name: ChartKey("gpufleet:serving.gateway.className",
                                          lambda s: _serving_class(s) == ENVOY_CLASS, label="Envoy Gateway"),
    versions.AGENTGATEWAY_CRDS.name: ChartKey("gpufleet:serving.gateway.className",
                                              lambda s: _serving_class(s) == AGENTGATEWAY_CLASS, label="agentgateway"),
    versions.AGENTGATEWAY.name: ChartKey("gpufleet:serving.gateway.className",
                                         lambda s: _serving_class(s) == AGENTGATEWAY_CLASS, label="agentgateway"),
    versions.ENDPOINT_PICKER.name: ChartKey("gpufleet:serving.models",
                                          lambda s: _serving_class(s) in INFERENCE_POOL_CLASSES and bool(s.serving.models)),
}
STACK_VERSIONED = (versions.GPU_OPERATOR.name, versions.AMD_GPU_OPERATOR.name)


def _pinned_charts() -> dict[str, versions.HelmChart]:
    return {v.name: v for v in vars(versions).values() if isinstance(v, versions.HelmChart)}


def bypassing_charts(spec: Any) -> list[str]:
    """What this stack installs whose images gpufleet cannot yet point at a mirror, each named as the user sees it, with
    why (no reference archive to prove a mirror with, or a download the mirror cannot serve).
    Mirrors the components' choices (components/gpu_cluster.py, each platform's `addons`); the plan of every example
    stack with a mirror keeps the two in step (tests/upstream/test_registry_mirror_render.py)."""
    # Every metrics backend is redirected: kube-prometheus-stack and amp's standalone exporters through their chart
    # values; gke-managed runs GKE's own collectors from Google's registries (reached through Private Google Access),
    # gpufleet adding only PodMonitorings and rules, no image.
    out = platforms.of(spec).addons.unmirrored_manifests(spec)
    pools = shaped_pools(spec)
    if any(p.gpu and is_amd(p) for p in pools):
        amd = spec.amd_gpu_operator
        if catalog_images.mirror_slots("gpu-operator-charts", amd.version) is None:
            out.append(f"AMD GPU Operator {amd.version} (gpufleet:amdGpuOperator.version; the images of "
                       f"{versions.AMD_GPU_OPERATOR.version} are listed)")
        if amd.driver.source == "operator":
            # The chart's deviceConfig.spec.driver.imageBuild (values.yaml of the pinned gpu-operator-charts): KMM builds
            # the driver image on the cluster from a base image registry and AMD's package repository.
            out.append("the AMD GPU Operator's driver build (gpufleet:amdGpuOperator.driver.source: operator; KMM "
                       "builds the driver image on the cluster from AMD's package repository, repo.radeon.com: use "
                       "source: inbox with the driver installed on the hosts)")
    for name, pin in sorted(_pinned_charts().items()):
        chart = CHART_KEYS.get(name)
        if chart is None or catalog_images.mirror_slots(name, pin.version) is not None or not chart.installs(spec):
            continue
        why = chart.why or "gpufleet/base/catalog/images.yaml `mirror` lists no images for that chart version"
        out.append(f"{chart.label or name}: chart {name} {pin.version} ({chart.key}; {why})")
    if spec.gpu_operator.enabled and catalog_images.mirror_slots("gpu-operator", spec.gpu_operator.version) is None:
        out.append(f"GPU Operator {spec.gpu_operator.version} (gpufleet:gpuOperator.version; the images of "
                   f"{', '.join(sorted(_mirrored_operator_releases()))} are listed)")
    return out


def _mirrored_operator_releases() -> set[str]:
    from gpufleet.base.catalog._files import _load

    return set(_load("images.yaml").get("mirror", {}).get("gpu-operator", {}))


def check(stack: str, spec: Any, config: dict) -> list[Problem]:
    problems: list[Problem] = []
    registry = spec.registry
    traits = platforms.of(spec).addons
    if registry.mirror:
        # The images a pool's pre-pull lists are pulled as written (the pods that use them name them so): one outside
        # the mirror would bypass it.
        for i, pool in enumerate(spec.node_pools):
            for j, image in enumerate(pool.cold_start.images if pool.cold_start else []):
                if not image.startswith(registry.mirror + "/"):
                    problems.append(Problem(stack, f"gpufleet:nodePools[{i}].coldStart.images[{j}]",
                                            f"outside the registry mirror {registry.mirror}: write it as its mirror "
                                            f"copy, {catalog_images.mirrored(image, registry.mirror)}, as the pool's "
                                            "pods name it", image))
        problems += _driver_build_problems(stack, spec)
        for what in bypassing_charts(spec):
            problems.append(Problem(stack, MIRROR, f"{what} would still pull from public registries: gpufleet cannot "
                                                   "point its images at a mirror yet (docs/air-gapped.md lists what "
                                                   "can); leave it out of an air-gapped stack"))
    problems += traits.registry_problems(stack, spec, config)
    if registry.charts and not registry.charts.startswith("oci://"):
        problems += _chart_file_checks(stack, registry.charts)
    password_given = PASSWORD in config
    if registry.username:
        if not traits.registry_credentials:
            problems.append(Problem(stack, "gpufleet:registry.username", "pull credentials are written only into k3s "
                                                                         "nodes' registries.yaml; EKS nodes pull from "
                                                                         "an ECR mirror with their node role"))
        if not registry.mirror:
            problems.append(Problem(stack, "gpufleet:registry.username", "a user for no mirror: set registry.mirror"))
        if not password_given:
            problems.append(Problem(stack, PASSWORD, "required by registry.username: set it with `pulumi config set "
                                                     f"--secret {PASSWORD}`"))
    elif password_given:
        problems.append(Problem(stack, PASSWORD, "not used: registry.username is not set"))
    return problems


def _driver_build_problems(stack: str, spec: Any) -> list[Problem]:
    """The GPU Operator's compiled NVIDIA driver behind a mirror: the driver container installs the kernel headers and
    builds the modules from the OS package repositories at boot, which an air-gapped node cannot reach (GPU Operator
    docs, "Install in Air-gapped Environments": a local package repository through `driver.repoConfig`, or
    precompiled driver containers). Refused as the AMD operator's on-cluster driver build is (bypassing_charts)."""
    op = spec.gpu_operator
    nvidia = [p for p in shaped_pools(spec) if p.gpu and not is_amd(p)]
    if not (nvidia and op.enabled and platforms.of(spec).addons.own_gpu_stack(spec) is None):
        return []
    if op.driver.source != "operator" or op.driver.precompiled or op.driver.repo_config:
        return []
    return [Problem(stack, "gpufleet:gpuOperator.driver", "with registry.mirror the GPU Operator's driver container still "
                    "downloads kernel headers and packages from the OS package repositories to compile the driver: set "
                    "driver.repoConfig (a ConfigMap of your local package repository), driver.precompiled: true (the "
                    "precompiled driver image for the hosts' kernel, mirrored), or driver.source: preinstalled",
                    "source: operator")]


def _chart_file_checks(stack: str, directory: str) -> list[Problem]:
    """A chart archive in gpufleet:registry.charts whose sha256 is not the one its pin records (the digest its
    repository publishes, versions.HelmChart.digest): refused before anything is registered. Only the files present on
    this machine are read (the plan may run where the directory is not; components/helm_chart.py checks again when
    `pulumi up` hands the file to Helm)."""
    import hashlib
    import os

    problems = []
    pins = [v for v in vars(versions).values() if isinstance(v, versions.HelmChart) and v.digest]
    for pin in sorted(pins, key=lambda p: p.name):
        for name in versions.archive_file_names(pin):
            path = os.path.join(directory, name)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()
            if got != pin.digest:
                problems.append(Problem(stack, "gpufleet:registry.charts", f"{path} has sha256 {got}, but chart "
                                        f"{pin.name} {pin.version} is pinned to {pin.digest} (gpufleet/base/"
                                        "versions.py): put the published archive there (`gpufleet charts fetch "
                                        f"--stack {stack} --dir {directory}` downloads and checks it)", directory))
            break
    return problems
