"""Unit tests of the custom resource validator `gpufleet plan` runs (docs/validation.md): it keeps the API server's
semantics (k8s.io/apiextensions-apiserver pkg/apiserver/schema: defaulting/prunenulls.go, defaulting/algorithm.go,
cel/validation.go) and the Kubernetes CEL library functions behave as upstream's."""

from __future__ import annotations

from gpufleet.app.plan.cel_rules import KUBERNETES_FUNCTIONS
from gpufleet.app.plan.custom_resources import validate


def test_kubernetes_functions_behave_as_upstream():
    """k8s.io/apiserver pkg/cel/library regex.go, urls.go, lists.go (examples from their doc comments)."""
    f = KUBERNETES_FUNCTIONS
    assert f["find"]("abc 123", "[0-9]+") == "123" and f["find"]("abc", "[0-9]+") == ""
    assert f["findAll"]("123 abc 456", "[0-9]+") == ["123", "456"]
    assert f["isURL"]("https://example.com/path") and f["isURL"]("/absolute-path") and not f["isURL"]("example.com")
    assert f["isSorted"]([1, 2, 3]) and not f["isSorted"]([2, 1])


SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.max", "message": "replicas must not exceed max"},
                {"rule": "self.replicas == oldSelf.replicas", "message": "immutable"},
                {"rule": "!has(self.__namespace__) || self.__namespace__ != 'kube-system'", "message": "no kube-system"},
                {"rule": "!has(self.size) || self.size != 'huge'", "fieldPath": ".size",
                 "messageExpression": "'size ' + self.size + ' is too big'"},
            ],
            "required": ["replicas"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "max": {"type": "integer", "default": 4},
                "namespace": {"type": "string"},
                "name": {"type": "string", "default": "fallback"},
                "size": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                          "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                "zones": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "pattern": {"type": "string", "pattern": "^(?i)gpu-[a-z]+$"},
            },
        },
    },
}


def _cr(**spec):
    return {"apiVersion": "example.com/v1", "kind": "Example", "metadata": {"name": "x"}, "spec": spec}


def test_defaults_apply_before_rules_and_transition_rules_are_skipped():
    assert validate(_cr(replicas=4.0), SCHEMA) == []  # max defaults to 4; Pulumi's 4.0 is the integer 4
    [finding] = validate(_cr(replicas=5), SCHEMA)
    assert (finding.path, finding.message) == ("spec", "replicas must not exceed max")


def test_a_null_with_a_default_is_defaulted_and_one_without_is_pruned():
    """prunenulls.go: non-nullable nulls without a default are dropped; those with one are defaulted (algorithm.go).
    So a chart rendering `name: null` (GPU Operator v25.10.1 migManager.config.name) is accepted."""
    assert validate(_cr(replicas=1, name=None, namespace=None), SCHEMA) == []


def test_unknown_fields_types_and_escaped_names():
    findings = validate(_cr(replicas=-1, replicass=2, namespace="kube-system", size="10%", extra={"any": 1}), SCHEMA)
    assert [(f.path, f.message) for f in findings] == [
        ("spec.replicas", "-1 is less than the minimum of 0"),
        ("spec.replicass", "unknown field: the CRD does not declare it (the API server would drop it)"),
    ]
    [rule] = validate(_cr(replicas=1, namespace="kube-system"), SCHEMA)
    assert rule.message == "no kube-system"


def test_a_rule_names_its_field_path_and_message_expression():
    [finding] = validate(_cr(replicas=1, size="huge"), SCHEMA)
    assert (finding.path, finding.message) == ("spec.size", "size huge is too big")


def test_a_go_pattern_with_inline_flags_after_the_anchor():
    """RE2 reads `^(?i)` (Kueue's patterns); Python's re needs the flag first."""
    assert validate(_cr(replicas=1, pattern="GPU-a"), SCHEMA) == []
    [finding] = validate(_cr(replicas=1, pattern="cpu-a"), SCHEMA)
    assert finding.path == "spec.pattern"


def test_list_map_keys_and_set_items_are_unique():
    [finding] = validate(_cr(replicas=1, ports=[{"port": 80}, {"port": 80}]), SCHEMA)
    assert (finding.path, finding.message) == ("spec.ports[1]", "duplicate entry with the same port")
    [finding] = validate(_cr(replicas=1, zones=["a", "b", "a"]), SCHEMA)
    assert (finding.path, finding.message) == ("spec.zones[2]", "duplicate entry in a list of type set")
