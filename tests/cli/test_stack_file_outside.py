"""The stack file outside `gpufleet:` (issue 48): hostile provider keys and top-level settings are refused with exit 2
naming the key and never its value, by `gpufleet plan` and by the program under `pulumi up`; what is allowed is
recorded in the plan, and the review names every change (secrets by name only)."""

from __future__ import annotations

import json

import pulumi
import pytest
import yaml

from gpufleet.app import cli, program
from gpufleet.app.plan.stackfile import read_stack_file
from gpufleet.app.review import render, review_plans
from gpufleet.base.spec import SpecError
from tests.helpers import ROOT

EVIL = "https://collector.attacker.example"
SALT = "v1:GEHe83S30O0=:v1:s8vb7cVFSz64pUmv:Ff5AbbcbTSim8cBwDCQCwraGHEQQ/A=="

# Provider keys that would send the deployer's requests or tokens elsewhere (pulumi registry, aws/gcp/azure
# installation-configuration): each is refused by name.
HOSTILE_CONFIG = {
    "gcp:containerCustomEndpoint": EVIL,
    "gcp:iamCredentialsCustomEndpoint": EVIL,
    "aws:endpoints": [{"eks": EVIL, "sts": EVIL}],
    "aws:insecure": True,
    "aws:assumeRoleWithWebIdentity": {"roleArn": "arn:aws:iam::111122223333:role/x", "webIdentityTokenFile": "/proc/self/environ"},
    "aws:profile": "admin",
    "aws:skipCredentialsValidation": True,
    "azure:environment": "usgovernment",
    "azure:metadataHost": "collector.attacker.example",
    "azure-native:endpoint": EVIL,
    "kubernetes:kubeconfig": "~/.kube/other",
    "pulumi:disable-default-providers": [],
    "pulumi:autonaming": {"pattern": "${name}"},
}


def write(tmp_path, doc: dict, name: str = "Pulumi.prod-eks.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def example_doc(stack: str = "prod-eks") -> dict:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())


def plan_exit(path, capsys, stack: str = "prod-eks") -> tuple[int, str]:
    code = cli.main(["plan", stack, "--config", str(path), "--format", "json"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("key", sorted(HOSTILE_CONFIG))
def test_a_provider_key_outside_the_list_is_refused_by_name(key, tmp_path, capsys):
    doc = example_doc()
    doc["config"][key] = HOSTILE_CONFIG[key]
    code, err = plan_exit(write(tmp_path, doc), capsys)
    assert code == cli.EXIT_INVALID
    assert f"stack 'prod-eks': {key}: not a key gpufleet reads" in err
    assert "attacker" not in err and "/proc/self" not in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["us-east-1\n::warning::owned", "us-east-1; curl", "", 7, "US-EAST-1"])
def test_an_allowed_provider_key_is_checked_by_shape_before_any_message_echoes_it(value, tmp_path, capsys):
    doc = example_doc()
    doc["config"]["aws:region"] = value
    code, err = plan_exit(write(tmp_path, doc), capsys)
    assert code == cli.EXIT_INVALID
    assert "stack 'prod-eks': aws:region: must be an AWS region code such as us-east-1" in err
    assert "::warning" not in err and "curl" not in err


HOSTILE_SETTINGS = {
    "environment": (["prod-credentials"], "a Pulumi ESC environment import"),
    "secretsprovider": (f"awskms://alias/k?region=us-east-1&endpoint={EVIL}", "a KMS URL may carry only `region`"),
    "encryptedkey": ("not base64!", "must be the base64 data key"),
    "backend": ("s3://other-bucket", "not a stack settings key gpufleet accepts"),
}


@pytest.mark.parametrize("key", sorted(HOSTILE_SETTINGS))
def test_a_hostile_top_level_key_is_refused_by_name(key, tmp_path, capsys):
    value, message = HOSTILE_SETTINGS[key]
    doc = {**example_doc(), key: value}
    code, err = plan_exit(write(tmp_path, doc), capsys)
    assert code == cli.EXIT_INVALID
    assert f"stack 'prod-eks': {key}: {message}" in err
    assert "attacker" not in err and "other-bucket" not in err and "Traceback" not in err


@pytest.mark.parametrize("provider", [
    "https://kms.attacker.example/key", "awskms://kms.attacker.example/key", "gcpkms://attacker.example",
    "azurekeyvault://vault.attacker.example/keys/k", "passphrase\n::error::x",
])
def test_a_secrets_provider_outside_the_documented_shapes_is_refused(provider, tmp_path):
    with pytest.raises(SpecError) as err:
        read_stack_file("prod-eks", write(tmp_path, {**example_doc(), "secretsprovider": provider}))
    assert [p.path for p in err.value.problems] == ["secretsprovider"]
    assert "attacker" not in str(err.value) and "::error" not in str(err.value)


def test_a_salt_copied_from_another_stack_is_refused_with_the_keys_outside(tmp_path, capsys):
    """Copying prod's salt (and its `secure:` values) into another stack file would decrypt prod's secrets in that
    stack's deploy: refused, naming the salt and the stack it came from; the hostile config key in the same file is
    named in the same run."""
    write(tmp_path, {"encryptionsalt": SALT, "config": {"gpufleet:cluster": {"platform": "k3s"}}}, "Pulumi.prod.yaml")
    doc = {**example_doc(), "encryptionsalt": SALT}
    doc["config"]["aws:insecure"] = True
    code, err = plan_exit(write(tmp_path, doc), capsys)
    assert code == cli.EXIT_INVALID
    assert "stack 'prod-eks': encryptionsalt: also the encryptionsalt of stack 'prod'" in err
    assert "stack 'prod-eks': aws:insecure: not a key gpufleet reads" in err
    assert SALT not in err


def test_what_the_pulumi_cli_writes_is_accepted(tmp_path):
    """A passphrase stack's own salt, a KMS provider with its region, the allowed provider keys in their shapes."""
    for provider in ("passphrase", "default", "awskms://alias/gpufleet?region=us-gov-west-1",
                     "azurekeyvault://myvault.vault.azure.net/keys/pulumi",
                     "gcpkms://projects/my-gpu-project/locations/global/keyRings/pulumi/cryptoKeys/state",
                     "hashivault://pulumi"):
        doc = {**example_doc(), "secretsprovider": provider, "encryptionsalt": SALT}
        doc["config"].update({"gcp:project": "my-gpu-project", "gcp:region": "us-central1", "gcp:zone": "us-central1-a",
                              "azure:location": "eastus", "azure:subscriptionId": "00000000-0000-0000-0000-000000000000"})
        sf = read_stack_file("prod-eks", write(tmp_path, doc))
        assert sf.settings == {"secretsprovider": provider, "encryptionsalt": SALT}


def test_the_program_under_pulumi_up_judges_its_stack_file(tmp_path, monkeypatch):
    """The engine hands the program only config: the program reads its settings file (Pulumi.yaml's stackConfigDir)
    and refuses an ESC import before anything registers."""
    (tmp_path / "Pulumi.yaml").write_text("name: gpufleet\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    write(tmp_path / "stacks", {**example_doc(), "environment": ["prod-credentials"]})
    monkeypatch.setattr(pulumi, "get_root_directory", lambda: str(tmp_path))
    monkeypatch.setattr(pulumi, "get_stack", lambda: "prod-eks")
    monkeypatch.setattr(program, "stack_config", lambda: ({k: v for k, v in example_doc()["config"].items()}, set()))
    with pytest.raises(pulumi.RunError, match=r"stack 'prod-eks': environment: a Pulumi ESC environment import"):
        program.load_stack_spec()


def test_the_program_refuses_a_provider_key_from_the_engine(monkeypatch):
    """What reaches the program from anywhere (an ESC environment's pulumiConfig too) passes the same list."""
    config = {**example_doc()["config"], "aws:endpoints": json.dumps([{"eks": EVIL}])}
    monkeypatch.setattr(program, "stack_config", lambda: (config, set()))
    monkeypatch.setattr(program, "stack_settings_file", lambda stack: None)
    with pytest.raises(pulumi.RunError, match="aws:endpoints: not a key gpufleet reads") as err:
        program.load_stack_spec()
    assert "attacker" not in str(err.value)


def record(config=None, secure=None, settings=None) -> dict:
    return {"stack": "prod-eks", "resources": [], "stackFile": {"config": config or {}, "secure": secure or {},
                                                                "settings": settings or {}}}


def test_the_review_names_every_change_outside_gpufleet_and_never_a_secret():
    base = record({"aws:region": "us-east-1", "gcp:project": "old-project"}, {"gpufleet:sshPrivateKey": "sha256:aaaa"})
    head = record({"aws:region": "eu-west-1", "azure:location": "eastus"}, {"gpufleet:sshPrivateKey": "sha256:bbbb"},
                  {"encryptionsalt": "sha256:cccc", "secretsprovider": "sha256:dddd"})
    review = review_plans(base, head)
    assert [(c.kind, c.key, c.status) for c in review.config] == [
        ("config", "aws:region", "changed"), ("config", "azure:location", "added"), ("config", "gcp:project", "removed"),
        ("secure", "gpufleet:sshPrivateKey", "changed"),
        ("settings", "encryptionsalt", "added"), ("settings", "secretsprovider", "added"),
    ]
    for fmt in ("markdown", "text", "json"):
        out = render(review, fmt)
        for name in ("aws:region", "azure:location", "gcp:project", "gpufleet:sshPrivateKey", "encryptionsalt",
                     "secretsprovider"):
            assert name in out, (fmt, name)
        assert "us-east-1" in out and "eu-west-1" in out
        assert "sha256:" not in out  # a secret's fingerprint is not shown either: only that it changed
    assert "change(s) to the stack file outside `gpufleet:`" in render(review, "markdown")


def test_a_plan_records_its_stack_file_without_a_secret(tmp_path):
    """The plan JSON's `stackFile`: provider keys with their checked values, fingerprints of secrets and settings."""
    doc = {**example_doc("dev"), "encryptionsalt": SALT}
    sf = read_stack_file("dev", write(tmp_path, doc, "Pulumi.dev.yaml"))
    out = sf.review_record()
    assert set(out) == {"config", "secure", "settings"}
    assert not any(k.startswith("gpufleet:") for k in out["config"])
    assert set(out["secure"]) == sf.secret_keys and out["settings"].keys() == {"encryptionsalt"}
    text = json.dumps(out)
    assert SALT not in text and not any(v in text for v in sf.secure.values())
