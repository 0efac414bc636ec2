"""Where `gpufleet plan` reads CRDs from (gpufleet/app/plan/crd_sources.py, docs/validation.md): each custom resource
kind gpufleet creates has its CRD in the archive of the chart its pin installs, the archive is found by the pin's
name and version (a pin moved without its archive fails here), every CEL rule of those CRDs runs with the plan's CEL
library, and archives are read once per process."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import kubernetes_validate
import pytest

from gpufleet.app.plan import crd_sources
from gpufleet.app.plan.cel_rules import functions, program
from gpufleet.app.plan.chart_archives import HOW_TO_ENABLE, cache_dir, charts_dir, file_names, find_archive
from gpufleet.app.plan.crd_sources import (BUILTIN_GROUPS, EXTRAS_SUFFIX, PLATFORM_KINDS, SOURCES, Crd, NotValidated,
                                           crd_documents, lookup)
from gpufleet.base import versions
from tests.helpers import ROOT, STACKS, planned
from tests.k8s_validate import as_object, is_core, k8s_objects

# Pins whose archive ../shared/reference/charts does not hold, each with the reason: their kinds are validated on a
# machine that has the archive (`gpufleet charts fetch`), and only warned about here.
NO_REFERENCE_ARCHIVE: dict[str, str] = {}  # volcano-1.15.1.tgz joined the reference in the fifth wave


def _suffix(src: crd_sources.CrdSource) -> str:
    return EXTRAS_SUFFIX if src.extras else ".tgz"


@pytest.mark.parametrize("src", SOURCES, ids=lambda s: s.kind)
def test_each_kind_has_its_crd_in_the_archive_of_its_pin(src, charts):
    """The archive is found by the pin's own name and version: a pin moved without adding its archive to
    ../shared/reference/charts fails here, naming the file to add."""
    if src.pin in NO_REFERENCE_ARCHIVE:
        assert find_archive(src.chart, charts, _suffix(src)) is None, f"{src.pin}: now in the reference, drop the exemption"
        pytest.skip(f"{src.pin}: {NO_REFERENCE_ARCHIVE[src.pin]}")
    archive = find_archive(src.chart, charts, _suffix(src))
    assert archive is not None, (
        f"versions.{src.pin} pins {src.chart.name} {src.chart.version}, but {charts} has none of "
        f"{file_names(src.chart, _suffix(src))}: add the archive of the pinned version (charts/SOURCES.md)")
    found = lookup(src.api_version, src.kind, charts)
    assert isinstance(found, Crd), found
    assert found.schema["type"] == "object" and "spec" in found.schema["properties"]
    assert found.source == f"{src.api_version} {src.kind}, CRD of chart {src.chart.name} {src.chart.version}"


def test_a_pin_moved_without_its_archive_is_not_validated_and_says_which_file(charts, monkeypatch):
    monkeypatch.setattr(versions, "KUEUE", replace(versions.KUEUE, version="0.19.99"))
    found = lookup("kueue.x-k8s.io/v1beta2", "ClusterQueue", charts)
    assert found == NotValidated(f"chart archive kueue-0.19.99.tgz (versions.KUEUE) is not in {charts}: {HOW_TO_ENABLE}")


def test_archive_names_with_and_without_the_leading_v(tmp_path):
    """NGC publishes network-operator as v26.4.1, a `helm package` of the tag is 26.4.1: either is found."""
    chart = versions.NETWORK_OPERATOR
    bare = chart.version.removeprefix("v")
    assert file_names(chart) == (f"network-operator-{chart.version}.tgz", f"network-operator-{bare}.tgz")
    (tmp_path / f"network-operator-{bare}.tgz").write_bytes(b"")
    assert find_archive(chart, tmp_path) == tmp_path / f"network-operator-{bare}.tgz"


def test_the_exempt_pins_are_exactly_those_without_an_archive(charts):
    missing = {s.pin for s in SOURCES if find_archive(s.chart, charts, _suffix(s)) is None}
    assert missing == set(NO_REFERENCE_ARCHIVE)


# A kind's literal in the components: `kind="NodePool"`, `"kind": "IPPool"`, `KIND = "ClusterTrainingRuntime"`.
_KIND_LITERAL = re.compile(r"""(?:\b[Kk][Ii][Nn][Dd]\s*=\s*|"kind":\s*)"([A-Z][A-Za-z0-9]+)\"""")
# Kinds spelled in the components that are no Kubernetes object gpufleet creates: a kubeconfig's `kind: Config`, Kueue's
# controller `kind: Configuration` (a file in the chart's ConfigMap, components/workloads/kueue.py).
# InferencePool: named as an HTTPRoute backendRef kind (components/serving/model_server.py); the inferencepool chart
# creates the pool itself.
NOT_CREATED = {"Config", "Configuration", "InferencePool"}


def _group_version_kinds(minor: str) -> list[dict]:
    """Every x-kubernetes-group-version-kind of kubernetes-validate's copy of the Kubernetes OpenAPI for a minor."""
    definitions = kubernetes_validate.utils.schema_contents(
        f"kubernetes-json-schema/v{minor}.0-local-strict/_definitions.json", f"{minor}.0")
    return [gvk for d in definitions["$defs"].values() for gvk in d.get("x-kubernetes-group-version-kind") or []]


def _builtin_kinds() -> set[str]:
    return {gvk["kind"] for gvk in _group_version_kinds(versions.KUBERNETES_DEFAULT)}


def test_every_custom_resource_kind_in_the_components_has_a_source():
    """Every kind the components spell that Kubernetes does not serve itself has its CRD's source (or the platform
    installs it), and every source is a kind the components create: the table neither misses nor keeps a kind."""
    spelled = set()
    for path in (ROOT / "components").rglob("*.py"):
        spelled |= set(_KIND_LITERAL.findall(path.read_text()))
    custom = spelled - _builtin_kinds() - NOT_CREATED
    assert custom == {s.kind for s in SOURCES} | {kind for _, kind in PLATFORM_KINDS}


@pytest.mark.parametrize("stack", STACKS)
def test_every_custom_resource_of_the_example_stacks_has_a_source(stack):
    p = planned(stack)
    version = f"{p.spec.cluster.kubernetes_version}.0"
    for obj in (as_object(r) for r in k8s_objects(p.resources)):
        if not is_core(obj, version):
            key = (obj["apiVersion"], obj["kind"])
            assert key in {(s.api_version, s.kind) for s in SOURCES} or key in PLATFORM_KINDS, key


def test_builtin_groups_are_the_groups_of_the_kubernetes_openapi():
    """BUILTIN_GROUPS tells custom resources from built-in objects at plan time, where kubernetes-validate (a test
    dependency) is not installed: the groups of its copy of the Kubernetes OpenAPI for every version gpufleet plans."""
    minors = sorted(set(versions.EKS_KUBERNETES_VERSIONS) | set(versions.GKE_KUBERNETES_VERSIONS)
                    | set(versions.K3S_RELEASES), key=lambda m: tuple(map(int, m.split("."))))
    for minor in minors:
        groups = {gvk["group"] for gvk in _group_version_kinds(minor)}
        assert groups <= BUILTIN_GROUPS, (minor, groups - BUILTIN_GROUPS)
    assert BUILTIN_GROUPS == groups  # the newest minor's: a group Kubernetes added shows here


def _rules(schema):
    if isinstance(schema, dict):
        for rule in schema.get("x-kubernetes-validations") or []:
            yield rule["rule"]
        for value in schema.values():
            yield from _rules(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _rules(value)


# CEL's own functions and macros (cel-spec langdef.md), which the library implements itself.
CEL_BUILTINS = {"has", "all", "exists", "exists_one", "map", "filter", "size", "matches", "startsWith", "endsWith",
                "contains", "int", "uint", "double", "string", "bool", "bytes", "type", "dyn", "duration", "timestamp"}


def test_every_rule_of_the_pinned_crds_compiles_and_calls_only_supported_functions(charts):
    found = [lookup(s.api_version, s.kind, charts) for s in SOURCES]
    rules = sorted({r for crd in found if isinstance(crd, Crd) for r in _rules(crd.schema)})
    assert len(rules) > 50
    supported = CEL_BUILTINS | set(functions())
    for rule in rules:
        program(rule)
        code = re.sub(r"'[^']*'|\"[^\"]*\"", "''", rule)
        called = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", code))
        assert called <= supported, (rule, called - supported)


def test_archives_are_read_once_per_process(charts, monkeypatch):
    """A fleet plan looks up the same kinds for every stack: the archive is opened and parsed once."""
    crd_sources._crds_in.cache_clear()
    opened = []
    real_open = crd_sources.tarfile.open
    monkeypatch.setattr(crd_sources.tarfile, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    for _ in range(3):
        for kind in ("ClusterQueue", "LocalQueue", "ResourceFlavor"):
            assert isinstance(lookup("kueue.x-k8s.io/v1beta2", kind, charts), Crd)
    assert opened == [str(find_archive(versions.KUEUE, charts))]


def test_no_archive_or_a_broken_one_is_not_validated_with_the_reason(tmp_path):
    found = lookup("karpenter.sh/v1", "NodePool", tmp_path)
    assert found == NotValidated(f"chart archive karpenter-{versions.KARPENTER.version}.tgz (versions.KARPENTER) "
                                 f"is not in {tmp_path}: {HOW_TO_ENABLE}")
    (tmp_path / f"karpenter-{versions.KARPENTER.version}.tgz").write_bytes(b"not a tar archive")
    found = lookup("karpenter.sh/v1", "NodePool", tmp_path)
    assert isinstance(found, NotValidated) and "cannot be read" in found.reason and "gpufleet charts fetch" in found.reason


def test_platform_kinds_unknown_kinds_and_builtins(tmp_path):
    assert lookup("apps/v1", "Deployment", tmp_path) is None
    assert lookup("v1", "ConfigMap", tmp_path) is None
    assert lookup("networking.gke.io/v1", "Network", tmp_path) == NotValidated(PLATFORM_KINDS[("networking.gke.io/v1", "Network")])
    assert lookup("example.com/v1", "Widget", tmp_path) == NotValidated("gpufleet knows no chart that installs its CRD")


def test_a_crd_template_reads_without_its_go_template():
    """The kueue and kubeflow-trainer CRD templates open with a multi-line licence comment and wrap metadata in
    `{{ }}`: both are dropped, the schema stays."""
    text = """{{- /*
Copyright The Kubernetes Authors.
*/ -}}
{{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  labels:
  {{- include "kueue.labels" . | nindent 4 }}
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    schema: {openAPIV3Schema: {type: object}}
{{- end }}
"""
    [crd] = crd_documents(text, helm_template=True)
    assert crd_sources.served_schema(crd, "v1") == {"type": "object"}
    assert crd_sources.served_schema(crd, "v2") is None


def test_where_the_archives_are(monkeypatch, tmp_path):
    """GPUFLEET_CHARTS_DIR, else $XDG_CACHE_HOME/gpufleet/charts (absolute only), else ~/.cache/gpufleet/charts."""
    monkeypatch.delenv("GPUFLEET_CHARTS_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert charts_dir() == cache_dir() == tmp_path / ".cache" / "gpufleet" / "charts"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert charts_dir() == tmp_path / ".cache" / "gpufleet" / "charts"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert charts_dir() == tmp_path / "xdg" / "gpufleet" / "charts"
    monkeypatch.setenv("GPUFLEET_CHARTS_DIR", str(tmp_path / "charts"))
    assert charts_dir() == Path(tmp_path / "charts")
