"""CLI tests (layer 5): `gpufleet plan` on every example stack in every format, exit codes, JSON shape."""

import json
import subprocess
import sys

import pytest

from gpufleet.app import cli
from tests.helpers import ROOT, STACKS, example_config

# Stacks whose cluster gpufleet does not create (cluster.platform: existing): nothing it registers holds state (no
# control plane, servers, token or claim of its own), so nothing is protected and the plan says so.
OWNS_NO_STATE = {s for s in STACKS if example_config(s)["gpufleet:cluster"]["platform"] == "existing"}

GPUFLEET = [sys.executable, "-m", "gpufleet.app.cli"]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_stack_plans_in_every_format(stack, fmt, capsys):
    assert cli.main(["plan", stack, "--format", fmt]) == cli.EXIT_OK
    out = capsys.readouterr().out
    if fmt == "json":
        doc = json.loads(out)
        assert list(doc)[:5] == ["capacity", "cost", "outputs", "resources", "stack"][:0] or set(doc) >= {
            "stack", "resources", "violations", "capacity", "cost",
        }
        assert doc["stack"] == stack
        assert set(doc["cost"]) >= {"hourlyMin", "hourlyMax", "currency"}
        for r in doc["resources"]:
            # secretDigests: only where an input is secret (its keys and digests, never a value: secret_digests.py)
            assert set(r) - {"secretDigests"} == {"urn", "type", "name", "parent", "inputs", "options"}
            assert set(r.get("secretDigests", {})) <= set(r["inputs"])
            assert set(r["options"]) == {
                "protect", "retainOnDelete", "ignoreChanges", "replaceOnChanges", "deleteBeforeReplace", "dependsOn",
            }
        for v in doc["violations"]:
            assert set(v) == {"policy", "level", "urn", "message"}
    elif fmt == "markdown":
        assert out.startswith(f"### gpufleet plan: `{stack}`")
        assert "#### GPU capacity" in out and "<details>" in out
        # every example protects its control plane (and, on k3s, servers and token): listed, and marked in the tree
        if stack in OWNS_NO_STATE:
            assert "#### Protected resources\n\nNone: `pulumi destroy` deletes everything." in out
            assert "  [protected]" not in out
            return
        protected = out.split("#### Protected resources\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert protected and all(line.startswith("- 🔒 `") for line in protected)
        assert out.count("  [protected]") == len(protected)
    else:
        assert out.startswith(f"gpufleet plan for stack '{stack}'")
        assert "GPU capacity:" in out and "hourly cost:" in out and "policies:" in out
        if stack in OWNS_NO_STATE:
            assert "protected resources: none" in out and "  [protected]" not in out
            return
        listed = [line for line in out.split("protected resources (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]]
        assert listed and out.count("  [protected]") == len(listed)


def test_dev_json_capacity_and_cost(capsys):
    cli.main(["plan", "dev", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert [(c["pool"], c["gpu"], c["minGpus"], c["maxGpus"]) for c in doc["capacity"]] == [
        ("l4", "L4", 1, 1), ("a100", "A100-80GB", 8, 8),
    ]
    cost = doc["cost"]  # servers and agents declare no price: "at least", and listed
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["currency"], cost["unpricedPools"]) == (15.35, 15.35, "USD", [])
    assert cost["atLeast"] and cost["unpriced"] == ["server cp-1", "CPU agent cpu-1"]
    assert doc["outputs"]["kubeconfig"] == "[secret]"
    assert "plan-placeholder" not in json.dumps(doc), "secret values must never reach the plan output"


def test_output_file(tmp_path):
    target = tmp_path / "plan.json"
    assert cli.main(["plan", "dev", "--format", "json", "--output", str(target)]) == 0
    assert json.loads(target.read_text())["stack"] == "dev"


def test_invalid_stack_exits_2_with_message_and_no_traceback(tmp_path):
    bad = tmp_path / "Pulumi.broken.yaml"
    bad.write_text("config:\n  gpufleet:cluster:\n    platform: k3s\n    k3s: {servers: []}\n")
    run = subprocess.run([*GPUFLEET, "plan", "broken", "--config", str(bad)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == cli.EXIT_INVALID
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        "gpufleet: invalid gpufleet config for stack 'broken' (2 problems):",
        "  - stack 'broken': gpufleet:cluster.k3s.servers: List should have at least 1 item after validation, not 0",
        "  - stack 'broken': gpufleet:sshPrivateKey: required for k3s: set it with "
        "`pulumi config set --secret gpufleet:sshPrivateKey < ~/.ssh/id_ed25519`",
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot read"),
        ("config: [1, 2", "is not valid YAML"),
        ("- just a list\n", "must be a mapping with a `config:` mapping"),
    ],
)
def test_unreadable_stack_files_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "Pulumi.x.yaml"
    if content is not None:
        path.write_text(content)
    assert cli.main(["plan", "x", "--config", str(path)]) == cli.EXIT_INVALID
    assert message in capsys.readouterr().err


def test_mandatory_violation_exits_1(tmp_path, capsys):
    """A driver on a branch the pinned operator does not support violates a mandatory rule."""
    import yaml

    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    config["config"]["gpufleet:gpuOperator"] = {"driver": {"source": "operator", "version": "550.163.01"}}
    path = tmp_path / "Pulumi.old-driver.yaml"
    path.write_text(yaml.safe_dump(config))
    assert cli.main(["plan", "old-driver", "--config", str(path), "--format", "json"]) == cli.EXIT_POLICY
    doc = json.loads(capsys.readouterr().out)
    assert {(v["policy"], v["level"]) for v in doc["violations"]} >= {("gpu-operator-version-support", "mandatory")}


def test_schema_command_prints_the_stack_file_schema(capsys):
    assert cli.main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    props = schema["properties"]["config"]["properties"]
    assert {"gpufleet:cluster", "gpufleet:nodePools", "gpufleet:gpuOperator", "gpufleet:sshPrivateKey"} <= set(props)
    assert schema["properties"]["config"]["required"] == ["gpufleet:cluster"]


def test_schema_validates_the_example_stacks(capsys):
    import jsonschema
    import yaml

    cli.main(["schema"])
    schema = json.loads(capsys.readouterr().out)
    for stack in STACKS:
        jsonschema.validate(yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"config": {"gpufleet:cluster": {"platform": "k3s", "typo": 1}}}, schema)
