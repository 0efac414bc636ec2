"""Every string a stack file can hold, fed what an attacker with write access to the file would write.

The test walks the JSON Schema of the stack file (`gpufleet schema`), so a string key added later is covered without
touching this file. Each hostile value is refused with a problem naming that key (exit 2 from the CLI), except in the
few free-text keys (FREE_TEXT), whose text is kept printable and one line (control characters and overlong text are
refused there too) and is shown harmless where it is used: a comment line of a host script (test_shell_scripts.py),
a tag or annotation value, escaped Markdown in review comments (tests of gpufleet.app.review).
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import yaml

from gpufleet.app import cli
from gpufleet.base.spec import SpecError, json_schema, load_spec
from tests.helpers import example_config, stack_file

# Shell syntax, quoting, command substitution, newlines and other controls, Markdown/HTML, a comment marker, very
# long text, a bidi override, a leading dash (an option to ssh or curl), and a trailing newline (which `re.match` with
# `$` lets through).
SHELLISH = ["a;touch /tmp/pwned", "$(id)", "`id`", "a'b", 'a"b', "a|b", "a&b", "a b", "a\\b", "-oProxyCommand=id"]
MARKUP = ["<img src=x onerror=alert(1)>", "[x](javascript:alert(1))", "-->", "@someone"]
CONTROL = ["a\nb", "a\tb", "a\x00b", "a\x1b[31m", "trailing\n", "\u202eabc", "x" * 2000]
HOSTILE = SHELLISH + MARKUP + CONTROL

# Free text: why a stack is exempt, what a priority class is for. Printable, one line, short; used only as comment
# lines, tag/annotation values and escaped Markdown.
FREE_TEXT = {
    "gpufleet:cluster.protection.reason",
    "gpufleet:cluster.k3s.etcdSnapshots.reason",
    "gpufleet:cluster.k3s.secretsEncryption.reason",
    "gpufleet:nodePools[].exemptions.<key>",
    "gpufleet:addons.priorityClasses.classes[].description",
    "gpufleet:serving.gateway.externalReason",  # an annotation value (the Gateway's secure-defaults exemption)
    # A vLLM engine argument (issue 52): one argv element, never parsed by a shell (a multi-node launcher passes it as
    # a positional parameter of a fixed script, "$@"); JSON values such as --kv-transfer-config need quotes and braces.
    "gpufleet:serving.models[].args[]",
    "gpufleet:serving.models[].rdma.reason",  # an annotation value (why the pods get IPC_LOCK)
}
# Secret keys are never part of the spec (their values are encrypted and never printed).
SECRETS = {"gpufleet:sshPrivateKey.secure", "gpufleet:etcdS3AccessKey.secure", "gpufleet:etcdS3SecretKey.secure",
           "gpufleet:registryPassword.secure", "gpufleet:kubeconfig.secure"}

# The example stack each key is tried in: the first whose platform reads it.
K3S, EKS, GKE = "dev", "prod-eks", "prod-gke"
_BY_PREFIX = [
    ("gpufleet:cluster.eks.", EKS), ("gpufleet:cluster.gke.", GKE), ("gpufleet:nodePools[].instanceType", EKS),
    ("gpufleet:nodePools[].availabilityZone", EKS), ("gpufleet:nodePools[].subnetIds", EKS),
    ("gpufleet:nodePools[].maxUnavailable", EKS), ("gpufleet:nodePools[].reservation.id", EKS),
    ("gpufleet:nodePools[].reservation.resourceGroupArn", EKS), ("gpufleet:nodePools[].reservation.placementGroup", EKS),
    ("gpufleet:nodePools[].reservation.instanceType", EKS), ("gpufleet:nodePools[].machineType", GKE),
    ("gpufleet:nodePools[].gke.", GKE), ("gpufleet:nodePools[].reservation.", GKE),
    ("gpufleet:observability.metrics.ampWorkspaceArn", EKS), ("gpufleet:observability.alerts.snsTopicArn", EKS),
    ("gpufleet:observability.alerts.notificationChannels", GKE), ("gpufleet:cluster.k3s.etcdSnapshots", "ha"),
    ("gpufleet:nodePools[].existing.", "existing-coreweave"), ("gpufleet:cluster.existing.", "existing-coreweave"),
    ("gpufleet:cluster.aks.", "aks-train"), ("gpufleet:nodePools[].vmSize", "aks-train"),
    ("gpufleet:nodePools[].aks.", "aks-train"),
]


# Values that are legitimate in a key and harmless where it is used (sent as JSON to a cloud API only).
LEGIT = {
    "gpufleet:nodePools[].gke.sysctls.<key>": {"a b"},  # `4096 87380 16777216`
    "gpufleet:cluster.gke.authorizedNetworks[].name": {"a b"},  # a display name
    "gpufleet:cluster.gke.maintenanceExclusions[].name": {"a b"},
}


def _seed_reservation(config: dict, kind: str) -> None:
    """A pool reservation of `kind`, the block whose keys are checked per type."""
    config["gpufleet:nodePools"][0]["reservation"] = {"type": kind}


# Keys checked only in a context the example stacks lack: what to add first.
SEEDS = {
    "gpufleet:nodePools[].reservation.placementGroup": lambda c: _seed_reservation(c, "odcr"),
    "gpufleet:nodePools[].reservation.instanceType": lambda c: _seed_reservation(c, "odcr"),
    "gpufleet:nodePools[].reservation.project": lambda c: _seed_reservation(c, "specific"),
    "gpufleet:nodePools[].reservation.zone": lambda c: _seed_reservation(c, "specific"),
    "gpufleet:nodePools[].gke.reservation.name": lambda c: c["gpufleet:nodePools"][0]["gke"].update(
        reservation={"type": "specific"}),
    "gpufleet:nodePools[].taints[].value": lambda c: c["gpufleet:nodePools"][0].update(
        taints=[{"key": "example.com/x", "effect": "NoSchedule"}]),
    "gpufleet:storage.nfs.mountOptions[]": lambda c: c.update({"gpufleet:storage": {
        "nfs": {"server": "10.0.0.9", "share": "/export"}}}),
}


def string_keys() -> list[str]:
    """Every key path of the stack file whose value is (or holds) free-form text: `[]` a list item, `<key>` a map
    key's value."""
    schema = json_schema()
    defs = schema["$defs"]
    found: list[str] = []

    def walk(node: dict, path: str, seen: frozenset) -> None:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name not in seen:
                walk(defs[name], path, seen | {name})
            return
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in node.get(key, []):
                walk(sub, path, seen)
        if node.get("type") == "string" and "enum" not in node and "const" not in node:
            found.append(path)
        for key, sub in node.get("properties", {}).items():
            walk(sub, f"{path}.{key}" if path else key, seen)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], f"{path}.<key>", seen)
        if isinstance(node.get("items"), dict):
            walk(node["items"], f"{path}[]", seen)

    walk(schema["properties"]["config"], "", frozenset())
    return sorted(set(found) - SECRETS)


def _stack_for(key: str) -> str:
    return next((stack for prefix, stack in _BY_PREFIX if key.startswith(prefix)), K3S)


def _with_value(config: dict, key: str, value: str) -> tuple[dict, str]:
    """`config` with `value` at `key` (list items: the first; maps: a new key), and the key path as an error names it."""
    top, *parts = re.findall(r"[^.\[\]]+|\[\]", key)
    node_parent, node_key = config, top
    named = top
    for part in parts:
        node = node_parent.get(node_key) if isinstance(node_parent, dict) else node_parent[node_key]
        if part == "[]":
            if not isinstance(node, list) or not node:
                node = [{}]
                _set(node_parent, node_key, node)
            node_parent, node_key = node, 0
            named += "[0]"
        else:
            if not isinstance(node, dict):
                node = {}
                _set(node_parent, node_key, node)
            part = "hostile-key" if part == "<key>" else part
            node_parent, node_key = node, part
            named += f".{part}"
    if isinstance(node_parent, list) and not isinstance(node_parent[node_key], dict):
        node_parent[node_key] = value
    else:
        _set(node_parent, node_key, value)
    return config, named


def _set(parent, key, value) -> None:
    if isinstance(parent, list):
        parent[key] = value
    else:
        parent[key] = value


def _problems(config: dict, stack: str) -> list:
    sf = stack_file(config, stack)
    try:
        load_spec(sf.stack, sf.config, sf.secret_keys)
    except SpecError as exc:
        return exc.problems
    return []


def _names(problem_path: str, named: str) -> bool:
    """The problem is at the key, or at the list or map that holds it (a validator of the whole list)."""
    holders = {named, re.sub(r"\[0\]$", "", named), named.rsplit(".hostile-key", 1)[0]}
    return problem_path in holders or problem_path.startswith(named + ".")


KEYS = string_keys()


def test_the_walk_finds_the_keys_that_reach_a_shell():
    for key in ("gpufleet:cluster.k3s.sshUser", "gpufleet:cluster.k3s.servers[].address",
                "gpufleet:nodePools[].hosts[].user", "gpufleet:cluster.k3s.tlsSans[]",
                "gpufleet:cluster.k3s.etcdSnapshots.scheduleCron", "gpufleet:nodePools[].labels.<key>"):
        assert key in KEYS
    assert len(KEYS) > 100


@pytest.mark.parametrize("key", KEYS)
def test_every_hostile_value_is_refused_naming_the_key(key):
    stack = _stack_for(key)
    values = CONTROL if key in FREE_TEXT else HOSTILE
    values = [v for v in values if v not in LEGIT.get(key, ())]
    let_through = []
    for value in values:
        config = example_config(stack)
        if key in SEEDS:
            SEEDS[key](config)
        config, named = _with_value(config, key, value)
        problems = _problems(config, stack)
        if not any(_names(p.path, named) for p in problems):
            let_through.append((value[:40], [str(p) for p in problems][:2]))
    assert not let_through, f"{key} in stack {stack} accepts: {let_through}"


@pytest.mark.parametrize("key", ["gpufleet:cluster.k3s.sshUser", "gpufleet:nodePools[].labels.<key>"])
def test_control_characters_in_keys_are_refused_too(key):
    config = example_config(K3S)
    config["gpufleet:nodePools"][0]["labels"] = {"a\nb": "x"}
    problems = _problems(config, K3S)
    assert any("U+000A" in str(p) and "labels" in p.path for p in problems)


def test_refusal_messages_show_the_value_escaped_and_short():
    config = example_config(K3S)
    config["gpufleet:cluster"]["k3s"]["sshUser"] = "root\n\x1b[2J" + "x" * 3000
    (problem,) = _problems(config, K3S)
    text = str(problem)
    assert problem.path == "gpufleet:cluster.k3s.sshUser"
    assert "\n" not in text and "\x1b" not in text and len(text) < 300
    assert "\\n" in text and "(3009 characters)" in text


@pytest.mark.parametrize("value", ["$(id)", "root\nid", "-oProxyCommand=id"])
def test_the_cli_exits_2_naming_the_key_and_registers_nothing(tmp_path, value):
    doc = {"config": example_config(K3S)}
    doc["config"]["gpufleet:cluster"]["k3s"]["servers"][0]["user"] = value
    path = tmp_path / "Pulumi.hostile.yaml"
    path.write_text(yaml.safe_dump(doc))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["plan", "hostile", "--config", str(path), "--format", "json"])
    assert code == 2
    assert "gpufleet:cluster.k3s.servers[0].user" in err.getvalue()
    # --format json: the error document, no plan (gpufleet/app/json_errors.py)
    assert out.getvalue().startswith('{\n  "error": {\n    "exitCode": 2,') and '"resources"' not in out.getvalue()
    assert "Traceback" not in err.getvalue()
