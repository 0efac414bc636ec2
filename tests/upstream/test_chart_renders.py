"""Real-chart tests (DESIGN.md section 6, layer 6; issue 33): every Helm release gpufleet plans renders with the real
chart at its version (../shared/reference/charts/) and a real helm 3, with the values gpufleet passes, and what
renders is what the API server accepts: core objects strictly against the Kubernetes OpenAPI of the stack's version
(kubernetes-validate), custom resources against the CRD the same chart ships (structural schema and CEL rules, with
the validator `gpufleet plan` uses, gpufleet.app.plan.custom_resources).

The GPU Operator is rendered for every release the catalog offers (gpufleet/base/catalog/drivers.yaml
`gpu_operator_releases`) on the configurations whose values differ (operator driver on k3s with MIG and sharing,
preinstalled driver on EKS, Bottlerocket, metrics). A catalog release with no archive in the reference is listed by
`test_catalog_releases_without_a_reference_chart`, never faked.
"""

from __future__ import annotations

import functools
import json
import re
import tarfile
from pathlib import Path
from typing import Optional

import kubernetes_validate
import pytest
import yaml

from gpufleet.app.plan.chart_archives import find_archive
from gpufleet.app.plan.crd_sources import Crd, crd_documents, lookup, served_schema
from gpufleet.app.plan.custom_resources import validate
from gpufleet.base import catalog, chart_crds, versions
from gpufleet.base.chart_crds import crd_folders
from gpufleet.base.versions import HelmChart, chart_name_of
from tests.crd_validate import CRDS, load_crd
from tests.helm import template
from tests.helpers import CHARTS, REFERENCE, STACKS, by_type, example_config, plan_config, planned
from tests.k8s_validate import is_core
from tests import owners

RELEASE = "kubernetes:helm.sh/v3:Release"
# Charts whose templates add objects only when the cluster serves an API (`.Capabilities.APIVersions.Has`): the
# stacks that enable those values also install the API (kube-prometheus-stack, or GKE's managed collection).
API_VERSIONS = ("monitoring.coreos.com/v1",)


def archive(name: str, version: str) -> Optional[Path]:
    """The reference archive of a chart version, found as the plan finds a pin's (a leading `v` ignored)."""
    return find_archive(HelmChart(name=name, repo="", version=version, app_version=""), CHARTS)


@functools.lru_cache(maxsize=None)
def _crd_files(path: Path) -> tuple[str, ...]:
    """The plain CRD files of a chart and its subcharts (`crds/` folders; templates are rendered instead)."""
    with tarfile.open(path) as tar:
        return tuple(tar.extractfile(m).read().decode("utf-8") for m in tar.getmembers()
                     if m.isfile() and "/crds/" in m.name and "/templates/" not in m.name and m.name.endswith((".yaml", ".yml")))


@functools.lru_cache(maxsize=None)
def archive_crd(path: Path, group: str, kind: str) -> Optional[dict]:
    """The chart's own CRD for group/kind (only the files that name both are parsed: charts ship megabytes of CRDs)."""
    for text in _crd_files(path):
        if f"group: {group}" in text and f"kind: {kind}" in text:
            for crd in crd_documents(text):
                if crd["spec"]["group"] == group and crd["spec"]["names"]["kind"] == kind:
                    return crd
    return None


def schema_for(api_version: str, kind: str, chart: Path, rendered_crds: dict) -> Optional[dict]:
    """The chart's own CRD first (its crds/ or a rendered CRD template), then the one the plan validates the kind
    against (the pinned chart that installs it, gpufleet.app.plan.crd_sources), then the reference's copy (crds/)."""
    group, _, version = api_version.rpartition("/")
    crd = archive_crd(chart, group, kind) or rendered_crds.get((group, kind))
    if crd is not None:
        return served_schema(crd, version)
    found = lookup(api_version, kind, CHARTS)
    if isinstance(found, Crd):
        return found.schema
    crd = load_crd(group, kind)
    return served_schema(crd, version) if crd else None


# Kinds a chart renders whose CRD another project installs, and which the reference does not hold.
NO_CRD_IN_REFERENCE = {
    # The AMD GPU Operator chart's KMM webhook certificate: cert-manager is a prerequisite the AMD docs install first
    # (ROCm/gpu-operator docs, "Installation": cert-manager), not part of the chart.
    ("cert-manager.io", "Certificate"), ("cert-manager.io", "Issuer"),
    # The inferencepool chart's GKE policies (templates/gke.yaml at v1.5.0): GKE's Gateway controller installs these
    # CRDs with the cluster's Gateway API (gatewayApiConfig); Google publishes no CRD file to validate against.
    ("networking.gke.io", "GCPBackendPolicy"), ("networking.gke.io", "HealthCheckPolicy"),
}


def problems(objs: list[dict], chart: Path, kubernetes_version: str) -> list[str]:
    rendered_crds = {(o["spec"]["group"], o["spec"]["names"]["kind"]): o for o in objs if o.get("kind") == "CustomResourceDefinition"}
    out = []
    for obj in objs:
        if obj.get("kind") == "CustomResourceDefinition":
            continue  # the chart's own CRDs: the source of the schemas below, not an object we judge
        name = f"{obj['kind']} {obj.get('metadata', {}).get('name')}"
        if is_core(obj, f"{kubernetes_version}.0"):
            try:
                kubernetes_validate.validate(obj, f"{kubernetes_version}.0", strict=True)
            except kubernetes_validate.ValidationError as exc:
                out.append(f"{name}: {exc.message} at {'.'.join(map(str, exc.path))}")
            continue
        group = obj["apiVersion"].rpartition("/")[0]
        if (group, obj["kind"]) in NO_CRD_IN_REFERENCE:
            continue
        schema = schema_for(obj["apiVersion"], obj["kind"], chart, rendered_crds)
        if schema is None:
            out.append(f"{name}: no CRD serving {obj['apiVersion']} in the chart or the reference")
            continue
        out += [f"{name}: {f.path}: {f.message}" for f in validate(obj, schema)]
    return out


def releases(plan) -> list[tuple[str, str, str, str, dict]]:
    """(chart name, version, release name, namespace, values) of every Helm release in a plan."""
    out = []
    for r in by_type(plan, RELEASE):
        version = r.inputs.get("version", "")
        out.append((chart_name_of(r.inputs["chart"], version), version, r.inputs["name"], r.revealed["namespace"],
                    r.revealed.get("values") or {}))
    return out


def render_and_check(plan, only: Optional[str] = None) -> dict[str, list[str]]:
    """chart@version -> what the API server would refuse of its render; charts with no reference archive are
    returned under 'missing'."""
    k8s = plan.spec.cluster.kubernetes_version
    found: dict[str, list[str]] = {}
    for name, version, release, namespace, values in releases(plan):
        if only and name != only:
            continue
        chart = archive(name, version)
        if chart is None:
            found.setdefault("missing", []).append(f"{name} {version}")
            continue
        found[f"{name}@{version}"] = list(_render_problems(chart, json.dumps(values, sort_keys=True), namespace, release, k8s))
    return found


@functools.lru_cache(maxsize=None)
def _rendered(chart: Path, values_json: str, namespace: str, release: str, k8s: str) -> tuple[dict, ...]:
    """One render per distinct chart, values and namespace (stacks share many: the file runs on one worker, so each is
    rendered once, for the schema check and the one-owner check alike)."""
    objs = template(chart, json.loads(values_json), namespace, release=release, kube_version=k8s, api_versions=API_VERSIONS)
    assert objs, f"{chart.name} rendered nothing"
    return tuple(objs)


@functools.lru_cache(maxsize=None)
def _render_problems(chart: Path, values_json: str, namespace: str, release: str, k8s: str) -> tuple[str, ...]:
    return tuple(problems(list(_rendered(chart, values_json, namespace, release, k8s)), chart, k8s))


@pytest.fixture(autouse=True)
def _charts(reference):
    if not CHARTS.is_dir() or not CRDS.is_dir():
        pytest.skip(f"no chart archives or CRDs under {REFERENCE}")


# Releases no example stack plans with an archive in the reference: named, so the list cannot grow silently.
# volcano 1.15.1: charts/SOURCES.md has no volcano package (its CRDs are in crds/volcano, the Queue is checked there).
NO_REFERENCE_ARCHIVE = {"volcano 1.15.1"}


@pytest.mark.parametrize("stack", STACKS)
def test_every_release_of_every_example_stack_renders_and_validates(stack):
    found = render_and_check(planned(stack))
    missing = set(found.pop("missing", []))
    assert missing <= NO_REFERENCE_ARCHIVE, f"releases without a reference chart: {sorted(missing)}"
    assert {k: v for k, v in found.items() if v} == {}


# One owner per object (issue 49): what every release renders (its templates, and its crds/ unless the release skips
# them), and the objects gpufleet creates itself, never name the same object twice; two copies of a CRD never differ.
def rendered_objects(plan) -> list[tuple[str, dict, str]]:
    """(owner, object, default namespace) of every object a plan's releases render, CRDs from crds/ included where
    the release installs them (Helm installs crds/ unless skipCrds; `helm template` leaves them out)."""
    k8s = plan.spec.cluster.kubernetes_version
    out = []
    for r in by_type(plan, RELEASE):
        version = r.inputs.get("version", "")
        name = chart_name_of(r.inputs["chart"], version)
        chart = archive(name, version)
        if chart is None:
            continue
        namespace, values = r.revealed["namespace"], r.revealed.get("values") or {}
        owner = f"release {r.inputs['name']} ({name} {version})"
        out += [(owner, o, namespace) for o in _rendered(chart, json.dumps(values, sort_keys=True), namespace,
                                                          r.inputs["name"], k8s)]
        if not r.inputs.get("skipCrds"):
            out += [(f"{owner} crds/", crd, "") for crd in installed_crds(chart, json.dumps(values, sort_keys=True))]
    return out


def _lookup(values: dict, path: str):
    node = values
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


@functools.lru_cache(maxsize=None)
def _chart_meta(path: Path) -> tuple[dict, dict]:
    """The top chart's dependency conditions (subchart name -> condition) and default values."""
    with tarfile.open(path) as tar:
        files = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if m.isfile() and m.name.count("/") == 1}
        chart = yaml.safe_load(tar.extractfile(files["Chart.yaml"]).read())
        values = yaml.safe_load(tar.extractfile(files["values.yaml"]).read()) if "values.yaml" in files else {}
    return {d.get("alias") or d["name"]: d.get("condition", "") for d in chart.get("dependencies") or []}, values or {}


@functools.lru_cache(maxsize=None)
def installed_crds(path: Path, values_json: str) -> tuple[dict, ...]:
    """The CRDs Helm installs from the chart's crds/ folders: the top chart's always, a subchart's only when its
    dependency condition holds (the stack's values over the chart's defaults)."""
    conditions, defaults = _chart_meta(path)
    values = json.loads(values_json)
    out = []
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if not (m.isfile() and parts[-2:-1] == ["crds"] and "templates" not in parts
                    and m.name.endswith((".yaml", ".yml"))):
                continue
            if "charts" in parts:
                sub = parts[len(parts) - 1 - parts[::-1].index("charts") + 1]
                enabled = True
                for cond in filter(None, conditions.get(sub, "").split(",")):
                    found = _lookup(values, cond.strip())
                    found = _lookup(defaults, cond.strip()) if found is None else found
                    if found is not None:
                        enabled = bool(found)
                        break
                if not enabled:
                    continue
            out += crd_documents(tar.extractfile(m).read().decode("utf-8"))
    return tuple(out)


@pytest.mark.parametrize("stack", STACKS)
def test_every_object_of_every_example_stack_has_one_owner(stack):
    plan = planned(stack)
    found = owners.duplicates(rendered_objects(plan) + owners.own_objects(plan) + owners.applied_crds(plan))
    assert found == {}, "objects with two owners (or CRD copies that differ):\n" + "\n".join(
        f"{k}: {v}" for k, v in found.items())


def test_the_one_owner_check_finds_both_kinds_of_duplicate():
    """The check is not vacuous: a chart's PodMonitoring beside gpufleet's of the same name, and two different copies
    of the ComputeDomain CRD, are both found."""
    pm = {"apiVersion": "monitoring.googleapis.com/v1", "kind": "PodMonitoring", "metadata": {"name": "m"}}
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "computedomains.resource.nvidia.com"}, "spec": {"group": "resource.nvidia.com"}}
    changed = {**crd, "spec": {"group": "resource.nvidia.com", "x": 1}}
    found = owners.duplicates([("release a", pm, "serving"), ("gpufleet", {**pm, "metadata": {"name": "m",
                               "namespace": "serving"}}, ""), ("release b crds/", crd, ""), ("release c crds/", changed, "")])
    assert set(found) == {"monitoring.googleapis.com PodMonitoring serving/m",
                          "apiextensions.k8s.io CustomResourceDefinition computedomains.resource.nvidia.com"}
    # Identical crds/ copies are no conflict (Helm takes no ownership of crds/); identical rendered objects are.
    assert owners.duplicates([("release b crds/", crd, ""), ("release c crds/", crd, "")]) == {}
    assert set(owners.duplicates([("release a", pm, "serving"), ("release b", pm, "serving")])) == {
        "monitoring.googleapis.com PodMonitoring serving/m"}
    # A CRD gpufleet applies (issue 51) beside a release's crds/ copy of it: two owners, identical or not.
    assert set(owners.duplicates([("gpufleet x-crds", crd, ""), ("release b crds/", crd, "")])) == {
        "apiextensions.k8s.io CustomResourceDefinition computedomains.resource.nvidia.com"}


# GPU Operator: the configurations whose values differ, each planned for every catalog release.
def _k3s_mig_sharing() -> dict:
    """teams (k3s, operator driver) with a MIG pool and a time-sliced pool: mig.strategy, migManager, devicePlugin.config."""
    config = example_config("teams")
    config["gpufleet:nodePools"][0]["sharing"] = {"mode": "mig", "profile": "1g.10gb"}
    config["gpufleet:nodePools"][1]["sharing"] = {"mode": "time-slicing", "replicas": 4}
    return config


def _eks_preinstalled() -> dict:
    return example_config("prod-eks")


def _eks_bottlerocket_metrics() -> dict:
    """ai-on-eks (kube-prometheus-stack: the DCGM exporter config and ServiceMonitor) with a Bottlerocket pool."""
    config = example_config("ai-on-eks")
    config["gpufleet:nodePools"][0]["ami"] = "bottlerocket-nvidia"
    return config


GPU_OPERATOR_CONFIGS = {"k3s-mig-sharing": _k3s_mig_sharing, "eks-preinstalled": _eks_preinstalled,
                        "eks-bottlerocket-metrics": _eks_bottlerocket_metrics}


def _with_release(config: dict, version: str) -> dict:
    config.setdefault("gpufleet:gpuOperator", {})["version"] = version
    # Each release supports its own Kubernetes minors (catalog): plan on the newest the stack's platform offers.
    supported = catalog.operator_release(version).kubernetes
    current = config["gpufleet:cluster"].get("kubernetesVersion")
    if current not in supported:
        config["gpufleet:cluster"]["kubernetesVersion"] = [k for k in supported if k <= "1.35"][-1]
    return config


@pytest.mark.parametrize("config", sorted(GPU_OPERATOR_CONFIGS))
@pytest.mark.parametrize("version", sorted(catalog.operator_releases()))
def test_gpu_operator_renders_and_validates_for_every_catalog_release(version, config):
    if archive("gpu-operator", version) is None:
        pytest.skip(f"GPU Operator {version}: no chart archive in {CHARTS} (see test_catalog_releases_without_a_reference_chart)")
    plan = plan_config(_with_release(GPU_OPERATOR_CONFIGS[config](), version), stack=config, policies=False)
    found = render_and_check(plan, only="gpu-operator")
    assert list(found) == [f"gpu-operator@{version}"]
    assert found[f"gpu-operator@{version}"] == []


def test_catalog_releases_without_a_reference_chart():
    """The catalog offers releases the reference has no archive of: they are rendered nowhere. The list is exact, so
    adding the archive (or a release) updates it."""
    missing = sorted(v for v in catalog.operator_releases() if archive("gpu-operator", v) is None)
    assert missing == ["v26.3.3"]


def test_a_refused_cluster_policy_is_caught():
    """The check bites: the ClusterPolicy CRD of the pinned chart refuses an unknown driver field (strict) and a
    wrong type, as the API server would."""
    schema = served_schema(archive_crd(archive("gpu-operator", "v26.7.0"), "nvidia.com", "ClusterPolicy"), "v1")
    base = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"}}
    findings = validate({**base, "spec": {"driver": {"enabled": True, "rdmaa": {}}}}, schema)
    assert any(f.path == "spec.driver.rdmaa" for f in findings)
    findings = validate({**base, "spec": {"driver": {"enabled": "yes"}}}, schema)
    assert ("spec.driver.enabled", "'yes' is not of type 'boolean'") in [(f.path, f.message) for f in findings]


# CRDs applied with their charts (issue 51, docs/upgrades.md; tests/unit/test_chart_crds.py has the rest): here because
# they read the example stacks' plans this module computes anyway (`planned`, shared within one test process).
def _applied_archive(pin):
    found = archive(pin.name, pin.version)
    if found is None:
        pytest.skip(f"{pin.name}-{pin.version}.tgz is not in {CHARTS} (../shared/reference/charts)")
    return found


def _crd_groups(p) -> dict:
    return {r.name: r for r in p.resources if r.type == "kubernetes:yaml/v2:ConfigGroup" and r.name.endswith("-crds")}


def _crd_names(group) -> list[str]:
    return sorted(d["metadata"]["name"] for d in chart_crds.crd_documents(group.inputs["yaml"]))


def test_the_amd_operator_applies_its_own_and_kmm_s_crds_without_argo_s_and_without_its_hook():
    """amd-lab (k3s, the NVIDIA GPU Operator's NFD serving both, the AMD driver by the operator): the AMD chart's own
    crds/ and KMM's are applied before its release; the remediation controller and Argo Workflows' CRDs are off, and so
    is the chart's own CRD hook. Its published archive stores each subchart file twice: each CRD is applied once."""
    archive = _applied_archive(versions.AMD_GPU_OPERATOR)
    assert crd_folders(versions.AMD_GPU_OPERATOR, {}) == (  # the chart's defaults: every subchart's crds/
        "gpu-operator-charts/crds", "gpu-operator-charts/charts/node-feature-discovery/crds",
        "gpu-operator-charts/charts/kmm/crds", "gpu-operator-charts/charts/remediation-crds/crds")
    kmm = [m for m, _, _ in chart_crds.read_texts(str(archive), dirs=("gpu-operator-charts/charts/kmm/crds",))]
    assert kmm == ["gpu-operator-charts/charts/kmm/crds/module-crd.yaml",
                   "gpu-operator-charts/charts/kmm/crds/nodemodulesconfig-crd.yaml"]
    p = planned("amd-lab")
    group = _crd_groups(p)["amd-lab-amd-gpu-operator-crds"]
    assert _crd_names(group) == ["deviceconfigs.amd.com", "modules.kmm.sigs.x-k8s.io",
                                 "nodemodulesconfigs.kmm.sigs.x-k8s.io", "remediationworkflowstatuses.amd.com"]
    release = next(r for r in p.resources if r.type == RELEASE and r.name == "amd-lab-amd-gpu-operator-release")
    assert release.inputs["skipCrds"] is True and group.urn in release.dependencies
    values = release.inputs["values"]
    assert (values["remediation"], values["upgradeCRD"]) == ({"enabled": False, "installCRDs": False}, False)


def _hooks(objs) -> dict[tuple[str, str], str]:
    return {(o["kind"], o["metadata"]["name"]): o["metadata"]["annotations"]["helm.sh/hook"] for o in objs
            if "helm.sh/hook" in (o["metadata"].get("annotations") or {})}


def _crds_the_hook_deletes(objs) -> list[str]:
    (job,) = [o for o in objs if o["kind"] == "Job" and o["metadata"]["name"] == "delete-custom-resource-definitions"]
    return sorted(re.findall(r"kubectl delete crds (\S+)", job["spec"]["template"]["spec"]["containers"][0]["command"][-1]))


def test_the_amd_operator_s_post_delete_hook_deletes_exactly_the_crds_gpufleet_keeps_and_the_plan_says_so():
    """No value turns the AMD chart's post-delete hook off and Pulumi's Release runs it on delete (the pin's
    crds_deleted_on_uninstall, docs/upgrades.md): rendered with amd-lab's values it deletes every CRD of the group
    gpufleet applies and keeps on delete, no other, and the plan warns on that release. With the chart's own NFD on (an
    AMD-only cluster) it deletes NFD's three too, again exactly what gpufleet applies for those values. The
    pre-upgrade CRD hook is gone (upgradeCRD false); the pre-upgrade-check hook that holds a chart upgrade during a
    driver upgrade stays."""
    archive = _applied_archive(versions.AMD_GPU_OPERATOR)
    p = planned("amd-lab")
    release = next(r for r in p.resources if r.type == RELEASE and r.name == "amd-lab-amd-gpu-operator-release")
    group = _crd_groups(p)["amd-lab-amd-gpu-operator-crds"]
    values = release.revealed["values"]
    render = functools.partial(_rendered, archive, namespace=release.revealed["namespace"],
                               release=release.inputs["name"], k8s=p.spec.cluster.kubernetes_version)
    objs = render(json.dumps(values, sort_keys=True))
    assert _hooks(objs) == {
        **{(kind, "gpu-operator-charts-prune"): "post-delete" for kind in ("ServiceAccount", "ClusterRole",
                                                                            "ClusterRoleBinding")},
        ("Job", "delete-custom-resource-definitions"): "post-delete",
        **{(kind, "gpu-operator-charts-pre-delete"): "pre-delete" for kind in ("ServiceAccount", "ClusterRole",
                                                                                "ClusterRoleBinding")},
        ("Job", "delete-leftover-deviceconfigs"): "pre-delete",
        ("ServiceAccount", "pre-upgrade-check-sa"): "pre-upgrade,pre-rollback",
        ("ClusterRole", "pre-upgrade-check-cluster-role"): "pre-upgrade,pre-rollback",
        ("ClusterRoleBinding", "pre-upgrade-check-cluster-role-binding"): "pre-upgrade,pre-rollback",
        ("Job", "pre-upgrade-check"): "pre-upgrade,pre-rollback",
    }
    assert group.retain_on_delete is True
    assert _crds_the_hook_deletes(objs) == _crd_names(group) == [
        "deviceconfigs.amd.com", "modules.kmm.sigs.x-k8s.io", "nodemodulesconfigs.kmm.sigs.x-k8s.io",
        "remediationworkflowstatuses.amd.com"]
    assert [(w.path, w.message) for w in p.warnings if w.path == f"resource {release.name}"] == [(
        "resource amd-lab-amd-gpu-operator-release",
        "chart gpu-operator-charts v1.5.1: uninstalling this release (`pulumi destroy`, or a stack that no longer "
        "installs it) runs the chart's own hook templates/post-delete-hook.yaml (Job delete-custom-resource-definitions), "
        "which deletes the CRDs of amd-lab-amd-gpu-operator-crds that gpufleet keeps on delete, and with them every "
        "object of their kinds; no value turns it off and Pulumi's Release runs it (how to keep them: docs/upgrades.md, "
        "\"What `pulumi destroy` deletes\")")]
    own_nfd = {**values, "node-feature-discovery": {"enabled": True}}
    applied = sorted({d["metadata"]["name"] for _, text, _ in chart_crds.read_texts(
        str(archive), dirs=crd_folders(versions.AMD_GPU_OPERATOR, own_nfd)) for d in chart_crds.crd_documents(text)})
    assert _crds_the_hook_deletes(render(json.dumps(own_nfd, sort_keys=True))) == applied == sorted([
        *_crd_names(group), "nodefeaturegroups.nfd.k8s-sigs.io", "nodefeaturerules.nfd.k8s-sigs.io",
        "nodefeatures.nfd.k8s-sigs.io"])


def test_envoy_gateway_applies_its_own_crds_and_leaves_the_experimental_gateway_api_bundle_out():
    """gitops-k3s serves through Envoy Gateway: its gateway.envoyproxy.io CRDs are applied before its release, which
    skips crds/; the Gateway API is the standard channel gpufleet applies itself, never the chart's experimental copy."""
    _applied_archive(versions.ENVOY_GATEWAY)
    p = planned("gitops-k3s")
    group = _crd_groups(p)["gitops-serving-gateway-envoy-crds"]
    assert _crd_names(group) == [f"{k}.gateway.envoyproxy.io" for k in (
        "backends", "backendtrafficpolicies", "clienttrafficpolicies", "envoyextensionpolicies", "envoypatchpolicies",
        "envoyproxies", "httproutefilters", "securitypolicies")]
    release = next(r for r in p.resources if r.type == RELEASE and r.name == "gitops-serving-gateway-envoy-release")
    assert release.inputs["skipCrds"] is True and group.urn in release.dependencies
    standard = next(r for r in p.resources if r.name == "gitops-serving-gateway-gateway-api")
    assert standard.inputs["file"] == versions.GATEWAY_API_STANDARD_INSTALL and standard.urn in release.dependencies
