"""The e2e tier's seams (docs/e2e.md): installed into the program, or the component provider, that the tier runs.

No real stack has them and the shipped package knows nothing of them: the tier's program (`program_main`) and its
copy of the component package (`package_main`) call `install()` before gpufleet's own entry point. Two config keys
under `gpufleet-e2e:` (outside the validated `gpufleet:` namespace) turn them on:

- `gpufleet-e2e:chartRepository`: URL of a Helm chart repository (an index.yaml) serving every pinned chart. Every
  release then installs its pinned chart and version from there instead of its upstream repository or OCI registry.
- `gpufleet-e2e:kubeconfig` (a secret): the kubeconfig of an existing API server. A k3s stack then creates no hosts
  (no k3s servers, agents or join token: that needs real machines) and no node pools; `<name>-k3s` holds only the
  kubernetes provider on that kubeconfig, so every add-on keeps its URN. Nothing schedules without kubelets, so
  nothing waits for what a kubelet or controller would report: releases skip their await and their hooks (Helm's
  `--no-hooks`: a hook is a Job, and Helm waits for it even with skipAwait), and claims, quotas, DaemonSets, their
  service accounts and the NicClusterPolicy carry `pulumi.com/skipAwait`.

How: the k3s platform is replaced by `SeamK3sPlatform` (which builds the stand-in when the kubeconfig is set and the
real K3sCluster otherwise), and GpuCluster is given `transformation` (an SDK-side resource transformation, which its
children inherit, and which runs under Pulumi's mocks as under the real engine: tests/component/test_e2e_seam.py).
The existing-cluster platform (issue 40) is the product's own answer to "an API server that already exists".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.base.labels import PULUMI_SKIP_AWAIT_ANNOTATION as SKIP_AWAIT
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.k3s import cluster as k3s_cluster
from gpufleet.components.k3s.platform import K3sPlatform
from gpufleet.components.platform import PlatformBuild, PlatformInputs

NAMESPACE = "gpufleet-e2e"
RELEASE = "kubernetes:helm.sh/v3:Release"
# Objects whose readiness a kubelet or a controller reports: none of them becomes ready behind the seam's API server
# (each was found by a real `up` waiting out its timeout, docs/e2e.md).
NOT_AWAITED = {
    "kubernetes:core/v1:PersistentVolumeClaim",  # Bound: no provisioner
    "kubernetes:core/v1:ResourceQuota",  # status.hard: no quota controller
    "kubernetes:core/v1:ServiceAccount",  # node-problem-detector's, waited for with its DaemonSets
    "kubernetes:apps/v1:DaemonSet",  # rollout: no DaemonSet controller, no kubelet
    "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy",  # status.state=ready: no operator pod
}
ROOT = Path(__file__).resolve().parent.parent.parent


def chart_repository() -> Optional[str]:
    """The chart repository every release installs from, when the tier set one."""
    return pulumi.Config(NAMESPACE).get("chartRepository") or None


def existing_kubeconfig() -> Optional[pulumi.Output]:
    """The kubeconfig of an existing API server that replaces the k3s hosts, when the tier set one."""
    return pulumi.Config(NAMESPACE).get_secret("kubeconfig")


def transformation(args: pulumi.ResourceTransformationArgs) -> Optional[pulumi.ResourceTransformationResult]:
    """Releases from the chart repository, and no waiting for what no kubelet or controller reports there."""
    mirror, no_kubelets = chart_repository(), existing_kubeconfig() is not None
    props = dict(args.props)
    if args.type_ == RELEASE:
        if mirror:
            # The repository serves each chart by its name: the release's `name` is the chart's (pinned_release), where
            # the chart itself may be an `oci://.../<name>` reference or an archive URL (versions.HelmChart.archive).
            props.update(chart=props.get("name") or str(props["chart"]).rsplit("/", 1)[-1], repository_opts={"repo": mirror})
        if no_kubelets:
            props.update(skip_await=True, disable_webhooks=True)
    elif args.type_ in NOT_AWAITED and no_kubelets and isinstance(props.get("metadata"), dict):
        metadata = props["metadata"]
        props["metadata"] = {**metadata, "annotations": {**(metadata.get("annotations") or {}), SKIP_AWAIT: "true"}}
    else:
        return None
    return pulumi.ResourceTransformationResult(props, args.opts)


class ExistingApiServer(pulumi.ComponentResource):
    """Stands in for K3sCluster on an API server that already runs: the same type and name, and the provider as its
    only child, named as K3sCluster names it (`<name>-k8s`), so every add-on on it keeps its URN."""

    def __init__(self, name: str, kubeconfig: pulumi.Input[str], kubernetes_version: str,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpufleet:k3s:K3sCluster", name, None, opts)
        self.kubeconfig = pulumi.Output.secret(kubeconfig)
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self))
        self.access = ClusterAccess(
            name=name, platform="k3s", kubernetes_version=kubernetes_version, kubeconfig=self.kubeconfig,
            provider=self.provider, facts=k3s_cluster.node_facts(), ready=[],
        )
        self.register_outputs({"kubeconfig": self.kubeconfig})


class SeamK3sPlatform(K3sPlatform):
    """k3s, or with `gpufleet-e2e:kubeconfig` the stand-in control plane and no node pools (nothing to join)."""

    def build(self, name: str, inputs: PlatformInputs, opts: pulumi.ResourceOptions) -> PlatformBuild:
        kubeconfig = existing_kubeconfig()
        if kubeconfig is None:
            return super().build(name, inputs, opts)
        control_plane = ExistingApiServer(f"{name}-k3s", kubeconfig, inputs.spec.cluster.kubernetes_version, opts=opts)
        return PlatformBuild(control_plane=control_plane, access=control_plane.access, node_pools=[])


def install(set_attribute: Callable[[Any, str, Any], None] = setattr) -> None:
    """Install the seams in this process: the k3s platform becomes SeamK3sPlatform, and every GpuCluster (the stack
    program's, or the component provider's) gets `transformation`. Tests pass `monkeypatch.setattr` to undo it."""
    from gpufleet.components import gpu_cluster
    from gpufleet.components.k3s import platform as k3s_platform

    set_attribute(k3s_platform, "PLATFORM", SeamK3sPlatform())
    original = gpu_cluster.GpuCluster.__init__

    def __init__(self, name: str, args, opts: Optional[pulumi.ResourceOptions] = None):
        seamed = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transformations=[transformation]))
        original(self, name, args, seamed)

    set_attribute(gpu_cluster.GpuCluster, "__init__", __init__)


# The entry points the tier writes into its scratch project and its copy of the component package: this checkout on
# sys.path (the scratch folders are elsewhere), the seams, then gpufleet's own main.
ENTRY = """import sys
sys.path.insert(0, {root!r})
from tests.e2e.seam import install
install()
from {module} import main
{call}
"""


def program_main() -> str:
    """__main__.py of the tier's stack project: the seams, then the repository's stack program."""
    return ENTRY.format(root=str(ROOT), module="gpufleet.app.program", call="main()")


def package_main() -> str:
    """__main__.py of the tier's copy of package/ (the component provider): the seams, then the provider."""
    return ENTRY.format(root=str(ROOT), module="gpufleet.app.package", call="main()")
