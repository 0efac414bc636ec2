"""One namespace and one pinned Helm release: the shape every workload add-on installs itself with."""

from __future__ import annotations

import hashlib
import os
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.chart_crds import applied_crds
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.image_digests import pinned_by_facts
from gpufleet.components.image_mirror import MIRROR_FACT, mirrored_values
from gpufleet.base.versions import HelmChart, archive_file_names

# ClusterAccess.facts key of gpufleet:registry.charts: where every release takes its chart from.
CHARTS_FACT = "chart_source"
CHARTS_KEY = "gpufleet:registry.charts"


def local_chart(chart: HelmChart, directory: str) -> str:
    """The chart's archive in `directory` (`<name>-<version>.tgz`, the version with or without its `v`). When the file
    is there and the pin records a sha256 (HelmChart.digest, the digest its repository publishes), the file must have
    it: a different file stops the program (pulumi.RunError, no traceback) before Helm is given it. A missing file is
    left to Helm, which fails the release naming the path (and `gpufleet plan` on a machine without the directory
    still plans)."""
    names = archive_file_names(chart)
    for name in names:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            if chart.digest:
                with open(path, "rb") as f:
                    got = hashlib.sha256(f.read()).hexdigest()
                if got != chart.digest:
                    raise pulumi.RunError(
                        f"{CHARTS_KEY}: {path} has sha256 {got}, but chart {chart.name} {chart.version} is pinned to "
                        f"{chart.digest} (gpufleet/base/versions.py): put the published archive there "
                        "(`gpufleet charts fetch --stack <stack> --dir <directory>` downloads and checks it)")
            return path
    return os.path.join(directory, names[0])


def chart_args(chart: HelmChart, source: Optional[str] = None) -> dict:
    """Release arguments for a pinned chart. With a chart `source` (gpufleet:registry.charts): from that OCI registry
    (`oci://<source>/<name>`, the pinned version) or from the archive file in that directory (checked against the pin's
    sha256, local_chart). Else a content-pinned archive URL when the pin has one (Helm downloads that file and reads no
    index), OCI charts one `oci://` reference, others a repo + name."""
    if source:
        if source.startswith("oci://"):
            return {"chart": f"{source.rstrip('/')}/{chart.name}", "version": chart.version}
        return {"chart": local_chart(chart, source.rstrip("/") or "/"), "version": chart.version}
    if chart.archive:
        return {"chart": chart.archive, "version": chart.version}
    if chart.repo.startswith("oci://"):
        return {"chart": f"{chart.repo}/{chart.name}", "version": chart.version}
    return {"chart": chart.name, "version": chart.version, "repository_opts": {"repo": chart.repo}}


def pinned_release(
    name: str,
    chart: HelmChart,
    namespace: pulumi.Input[str],
    values: dict,
    access: ClusterAccess,
    parent: pulumi.Resource,
    depends_on: Optional[list[pulumi.Resource]] = None,
    timeout: Optional[int] = None,
    release_name: Optional[str] = None,
    skip_crds: bool = False,
) -> k8s.helm.v3.Release:
    """`<name>-release`: the pinned chart, released under the chart's name into `namespace`, a child of
    `parent` on the cluster's provider, after the cluster is ready. Without `timeout`, Helm's default. With a registry
    mirror on the cluster (gpufleet:registry.mirror), every image of the chart is pulled from it
    (components/image_mirror.py); with a chart source (gpufleet:registry.charts), the chart comes from there.
    `release_name`: the Helm release's name, default the chart's (a chart installed once per object it makes, such as
    `inferencepool`, names that object after its release). `skip_crds`: leave the chart's crds/ out (another release
    of the stack owns those CRDs). A chart whose CRDs gpufleet applies (HelmChart.crds CRDS_APPLY, docs/upgrades.md)
    gets them as one server-side-applied group `<name>-crds`, a child of `parent` before the release, which then skips
    its crds/."""
    # With gpufleet:images.pinDigests, the chart's images that have a recorded digest are pinned by it
    # (components/image_digests.py), then pulled from the mirror if the stack has one (the digest stays).
    values = pinned_by_facts(values, chart.name, chart.version, access.facts)
    values = mirrored_values(values, chart.name, chart.version, access.facts.get(MIRROR_FACT))
    extra = {"timeout": timeout} if timeout is not None else {}
    if not skip_crds:
        crds = applied_crds(name, chart, values, access, parent, access.facts.get(CHARTS_FACT))
        if crds:
            depends_on, skip_crds = [*(depends_on or []), *crds], True
    if skip_crds:
        extra["skip_crds"] = True
    return k8s.helm.v3.Release(
        f"{name}-release",
        name=release_name or chart.name,
        namespace=namespace,
        values=values,
        **extra,
        cleanup_on_fail=True,
        opts=pulumi.ResourceOptions(
            parent=parent, provider=access.provider, depends_on=[*(access.ready or []), *(depends_on or [])]
        ),
        **chart_args(chart, access.facts.get(CHARTS_FACT)),
    )


def namespaced_release(
    name: str,
    chart: HelmChart,
    namespace: str,
    values: dict,
    access: ClusterAccess,
    parent: pulumi.Resource,
    depends_on: Optional[list[pulumi.Resource]] = None,
    namespace_labels: Optional[dict[str, str]] = None,
    timeout: int = 600,
) -> tuple[k8s.core.v1.Namespace, k8s.helm.v3.Release]:
    """`<name>-ns` (the namespace) and `<name>-release` (the chart in it), children of `parent`."""
    ns = k8s.core.v1.Namespace(
        f"{name}-ns",
        metadata={"name": namespace, "labels": namespace_labels or {}},
        opts=pulumi.ResourceOptions(parent=parent, provider=access.provider),
    )
    release = pinned_release(name, chart, ns.metadata["name"], values, access, parent, depends_on, timeout)
    return ns, release
