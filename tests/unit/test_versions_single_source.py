"""Every pinned upstream version is spelled in gpufleet/base/versions.py and nowhere else in code or config."""

import re
import subprocess
from dataclasses import fields, is_dataclass

from gpufleet.base import versions
from tests.helpers import ROOT

# The catalog's release facts are keyed by version on purpose (what each release supports; images.yaml: the digest of
# an exact image tag and the images of an exact chart version). Tests pin explicit versions in their scenarios on
# purpose too (a fixture must not move when the pin moves). dra.yaml cites the DRA driver release its facts were read
# at (its prerequisites page), like drivers.yaml its GPU Operator releases.
ALLOWED = {"gpufleet/base/versions.py", "gpufleet/base/catalog/drivers.yaml", "gpufleet/base/catalog/amd_gpus.yaml",
           "gpufleet/base/catalog/images.yaml", "gpufleet/base/catalog/dra.yaml"}
ALLOWED_DIRS = ("tests/",)
CHECKED_SUFFIXES = (".py", ".yaml", ".yml", ".toml", ".json", ".sh", ".cfg", ".txt", "Makefile", ".ci/run")


def pinned_versions() -> set[str]:
    found: set[str] = set()

    def add(value):
        if isinstance(value, str) and any(c.isdigit() for c in value) and value.count(".") >= 2:
            found.update({value, value.removeprefix("v")})
        elif is_dataclass(value):
            for f in fields(value):
                if not f.metadata.get("fact"):  # a fact recorded beside a pin (an AMI release's driver) is no pin
                    add(getattr(value, f.name))
        elif isinstance(value, dict):
            for v in value.values():
                add(v)

    for name in dir(versions):
        if name.isupper():
            add(getattr(versions, name))
    return found


def repo_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True,
        check=True,
    )
    return [
        f for f in out.stdout.splitlines()
        if f.endswith(CHECKED_SUFFIXES) and f not in ALLOWED and not f.startswith(ALLOWED_DIRS)
    ]


def test_pins_are_found():
    pins = pinned_versions()
    assert versions.GPU_OPERATOR.version in pins
    assert versions.k3s_release(versions.KUBERNETES_DEFAULT) in pins


def test_no_pinned_version_outside_the_versions_table():
    pins = pinned_versions()
    offenders = []
    for path in repo_files():
        text = (ROOT / path).read_text(encoding="utf-8", errors="ignore")
        # A pin as a version of its own: not part of a longer one (1.35.0 in GKE's 1.35.0-gke.2331000 is a GKE patch,
        # not the cluster-autoscaler's appVersion v1.35.0).
        offenders += [f"{path}: {pin}" for pin in pins
                      if pin in text and re.search(rf"(?<![\d.]){re.escape(pin)}(?![\d.]|-gke\.)", text)]
    assert offenders == []
