"""gpu-operator-version-support: the GPU Operator chart is a release we know, its driver is on a branch
that release supports, and the cluster's Kubernetes version is one it supports.

Reads `kubernetes:helm.sh/v3:Release` inputs (chart, version, values.driver) and, for the Kubernetes
version, the stack's control plane: `aws:eks/cluster:Cluster` version, `gcp:container/cluster:Cluster`
minMasterVersion, an AKS cluster's kubernetesVersion (Azure Native's ManagedCluster or the classic pulumi-azure's
KubernetesCluster), the k3s release a `command:remote:Command` installs (INSTALL_K3S_VERSION), or policy
config `kubernetesVersion`. Facts: gpufleet/base/catalog/drivers.yaml `gpu_operator_releases`.

The AMD GPU Operator (chart `gpu-operator-charts`, issue 17): its release must be one the catalog knows
(gpufleet/base/catalog/amd_gpus.yaml `operator_releases`), the cluster's Kubernetes at least the chart's kubeVersion
floor, and every DeviceConfig that has the operator load a driver must name an AMD GPU Driver release line the
catalog's compatibility table knows.
"""

from __future__ import annotations

import re
from typing import Optional

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, StackValidationPolicy

from gpufleet.base import catalog
from gpufleet.base.catalog import amd
from gpufleet.policies import amd_inputs as A
from gpufleet.policies import inputs as I

NAME = "gpu-operator-version-support"
RELEASE_TYPE = I.HELM_RELEASE
_K3S_VERSION = re.compile(r"INSTALL_K3S_VERSION=['\"]?(v?\d+\.\d+\.\d+\+k3s\d+)")


def check(props) -> list[str]:
    """Problems with one Helm release's inputs (empty when it is not the GPU Operator or is fine)."""
    if I.chart_of(props) != I.GPU_OPERATOR_CHART:
        return []
    version = I.get(props, "version")
    releases = catalog.operator_releases()
    if version not in releases:
        return [f"GPU Operator chart version {version!r} is not one gpufleet knows (known: {', '.join(releases)})"]
    release = releases[version]
    driver = I.get(props, "values", "driver")
    if I.get(driver, "enabled", default=True) is False:
        return []
    driver_version = I.get(driver, "version") or release.default_driver
    try:
        branch = catalog.driver_branch(str(driver_version))
    except ValueError:
        return [f"driver version {driver_version!r} is not a dotted driver version"]
    if branch not in release.driver_branches:
        return [
            f"driver {driver_version} (branch {branch}) is not supported by GPU Operator {version} "
            f"(supported branches: {', '.join(map(str, release.driver_branches))})"
        ]
    return []


def kubernetes_versions(resources: list, config) -> list[tuple[str, str]]:
    """(Kubernetes minor version, where it comes from) of the stack's control plane(s)."""
    configured = I.minor(I.get(config, "kubernetesVersion"))
    if configured:
        return [(configured, "policy config kubernetesVersion")]
    out = []
    for r in I.of_type(resources, I.EKS_CLUSTER, I.GKE_CLUSTER, *I.AKS_CLUSTERS, I.REMOTE_COMMAND):
        aks = I.AKS_CLUSTERS.get(r.resource_type)
        if r.resource_type == I.EKS_CLUSTER:
            v = I.minor(I.get(r.props, "version"))
        elif aks is not None:
            v = I.minor(I.get(r.props, *aks.kubernetes_version))
        elif r.resource_type == I.GKE_CLUSTER:
            v = I.minor(I.get(r.props, "minMasterVersion"))
        elif r.resource_type == I.REMOTE_COMMAND:
            found = _K3S_VERSION.search(I.text(I.get(r.props, "create")) or "")
            v = I.minor(found.group(1)) if found else None
        else:
            v = None
        if v:
            out.append((v, f"{r.resource_type.rsplit(':', 1)[-1]} '{r.name}'"))
    return sorted(set(out))


def _kubernetes_problem(props, versions: list[tuple[str, str]]) -> Optional[str]:
    release = catalog.operator_releases().get(I.get(props, "version"))
    if release is None:
        return None
    bad = [(v, where) for v, where in versions if v not in release.kubernetes]
    if not bad:
        return None
    listed = ", ".join(f"{v} ({where})" for v, where in bad)
    return f"Kubernetes {listed} is not supported by GPU Operator {release.version} (supported: {', '.join(release.kubernetes)})"


def check_stack(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    versions = kubernetes_versions(resources, config)
    out = []
    for r in I.operator_releases(resources):
        if I.exemption(NAME, r.name, r.urn, r.props, config):
            continue
        problems = check(r.props)
        if not problems:
            k8s = _kubernetes_problem(r.props, versions)
            problems = [k8s] if k8s else []
        out += [(r.urn, p) for p in problems]
    for r in A.releases(resources):
        if I.exemption(NAME, r.name, r.urn, r.props, config):
            continue
        out += [(r.urn, p) for p in _amd_release(r.props, versions)]
    for r in A.device_configs(resources):
        driver = A.driver_of(r.props)
        if driver and amd.driver_line(driver) not in amd.driver_rocm() and not I.exemption(NAME, r.name, r.urn, r.props, config):
            out.append((r.urn, f"DeviceConfig driver.version {driver!r} is not an AMD GPU Driver release line gpufleet knows "
                               f"(known: {', '.join(amd.driver_rocm())})"))
    return out


def _amd_release(props, versions: list[tuple[str, str]]) -> list[str]:
    version = I.get(props, "version")
    known = amd.operator_releases()
    if version not in known:
        return [f"AMD GPU Operator chart version {version!r} is not one gpufleet knows (known: {', '.join(known)})"]
    floor = amd.version_tuple(known[version])
    bad = [(v, where) for v, where in versions if amd.version_tuple(v) < floor]
    if bad:
        listed = ", ".join(f"{v} ({where})" for v, where in bad)
        return [f"Kubernetes {listed} is older than AMD GPU Operator {version} supports (>= {known[version]})"]
    return []


POLICY = StackValidationPolicy(
    name=NAME,
    description="The GPU Operator (NVIDIA, AMD) release is known, its driver is one it supports, and so is the cluster's Kubernetes version.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check_stack),
    config_schema=PolicyConfigSchema(
        properties={
            "kubernetesVersion": {"type": "string", "description": "the cluster's Kubernetes minor version, when no control plane resource shows it"},
            "exemptions": I.exemptions_property(),
        }
    ),
)
