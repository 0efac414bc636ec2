"""What the e2e tier's environment needs and no user's cluster does (docs/e2e.md): test code, not in the package.

The tier's stacks are existing-cluster stacks (cluster.platform: existing, `gpufleet:kubeconfig` the local API
server's), so they reach the API server through the product's own platform. Two things remain that only this
environment needs, each turned on by a key under `gpufleet-e2e:` (outside the validated `gpufleet:` namespace):

- `gpufleet-e2e:chartRepository`: URL of a Helm chart repository (an index.yaml) serving every pinned chart from
  ../shared/reference/charts. Every release installs its pinned chart and version from there instead of its upstream
  repository or OCI registry (the tier downloads nothing). A user's chart mirror is the product's `gpufleet:registry`
  (issue 37), not this.
- `gpufleet-e2e:noKubelets: true`: the API server has no kubelets and no controllers, so nothing waits for what they
  would report: releases skip their await and their hooks (Helm's `--no-hooks`: a hook is a Job, and Helm waits for it
  even with skipAwait), and claims, quotas, DaemonSets, their service accounts and the NicClusterPolicy carry
  `pulumi.com/skipAwait`. Each was found by a real `up` waiting out its timeout.

How: every GpuCluster is given `transformation` (an SDK-side resource transformation, which its children inherit, and
which runs under Pulumi's mocks as under the real engine: tests/component/test_e2e_seam.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import pulumi

from gpufleet.base.labels import PULUMI_SKIP_AWAIT_ANNOTATION as SKIP_AWAIT

NAMESPACE = "gpufleet-e2e"
RELEASE = "kubernetes:helm.sh/v3:Release"
# Objects whose readiness a kubelet or a controller reports: none of them becomes ready on the tier's API server.
NOT_AWAITED = {
    "kubernetes:core/v1:PersistentVolumeClaim",  # Bound: no provisioner
    "kubernetes:core/v1:ResourceQuota",  # status.hard: no quota controller
    "kubernetes:core/v1:ServiceAccount",  # waited for with its DaemonSets
    "kubernetes:apps/v1:DaemonSet",  # rollout: no DaemonSet controller, no kubelet
    "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy",  # status.state=ready: no operator pod
}
ROOT = Path(__file__).resolve().parent.parent.parent


def chart_repository() -> Optional[str]:
    """The chart repository every release installs from, when the tier set one."""
    return pulumi.Config(NAMESPACE).get("chartRepository") or None


def no_kubelets() -> bool:
    """Whether the API server has no kubelets and controllers (the tier's own)."""
    return pulumi.Config(NAMESPACE).get_bool("noKubelets") or False


def transformation(args: pulumi.ResourceTransformationArgs) -> Optional[pulumi.ResourceTransformationResult]:
    """Releases from the chart repository, and no waiting for what no kubelet or controller reports there."""
    mirror, bare = chart_repository(), no_kubelets()
    props = dict(args.props)
    if args.type_ == RELEASE:
        if mirror:
            # The repository serves each chart by its name: the release's `name` is the chart's (pinned_release), where
            # the chart itself may be an `oci://.../<name>` reference or an archive URL (versions.HelmChart.archive).
            props.update(chart=props.get("name") or str(props["chart"]).rsplit("/", 1)[-1], repository_opts={"repo": mirror})
        if bare:
            props.update(skip_await=True, disable_webhooks=True)
    elif args.type_ in NOT_AWAITED and bare and isinstance(props.get("metadata"), dict):
        metadata = props["metadata"]
        props["metadata"] = {**metadata, "annotations": {**(metadata.get("annotations") or {}), SKIP_AWAIT: "true"}}
    else:
        return None
    return pulumi.ResourceTransformationResult(props, args.opts)


def install(set_attribute: Callable[[Any, str, Any], None] = setattr) -> None:
    """Give every GpuCluster (the stack program's, or the component provider's) `transformation`, and let the stack
    file hold the seam's `gpufleet-e2e:` keys (code says so, never a stack file: gpufleet/base/spec/checks/
    stack_keys.py). Tests pass `monkeypatch.setattr` to undo it."""
    from gpufleet.base.spec.checks import stack_keys
    from gpufleet.components import gpu_cluster

    set_attribute(stack_keys, "PROGRAM_NAMESPACES", (*stack_keys.PROGRAM_NAMESPACES, NAMESPACE))

    original = gpu_cluster.GpuCluster.__init__

    def __init__(self, name: str, args, opts: Optional[pulumi.ResourceOptions] = None):
        seamed = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transformations=[transformation]))
        original(self, name, args, seamed)

    set_attribute(gpu_cluster.GpuCluster, "__init__", __init__)


# The entry points the tier writes into its scratch project and its copy of the component package: this checkout on
# sys.path (the scratch folders are elsewhere), the transformation, then gpufleet's own main.
ENTRY = """import sys
sys.path.insert(0, {root!r})
from tests.e2e.seam import install
install()
from {module} import main
{call}
"""


def program_main() -> str:
    """__main__.py of the tier's stack project: the transformation, then the repository's stack program."""
    return ENTRY.format(root=str(ROOT), module="gpufleet.app.program", call="main()")


def package_main() -> str:
    """__main__.py of the tier's copy of package/ (the component provider): the transformation, then the provider."""
    return ENTRY.format(root=str(ROOT), module="gpufleet.app.package", call="main()")
