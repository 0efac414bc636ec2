"""The e2e tier's Go wrapper modules (tests/e2e/build/) build what the stacks and the Python SDKs pin."""

from __future__ import annotations

import importlib.metadata
import re

from gpufleet.base import versions
from tests.helpers import ROOT

BUILD = ROOT / "tests" / "e2e" / "modules"


def requires(module: str) -> dict[str, str]:
    text = (BUILD / module / "go.mod").read_text()
    return dict(re.findall(r"^\s*(?:require\s+)?([a-z0-9.\-/]+\.[a-z]+/[^\s]+)\s+(v[^\s]+)", text, re.M))


def _e2e_stacks_kubernetes() -> str:
    """The Kubernetes minor the k3s example stacks (what `make e2e` deploys) declare."""
    import yaml

    found = {yaml.safe_load((ROOT / "stacks" / f"Pulumi.{s}.yaml").read_text())["config"]["gpufleet:cluster"]["kubernetesVersion"]
             for s in ("dev", "ha", "lab", "teams")}
    assert len(found) == 1, found
    return found.pop()


def test_kube_apiserver_is_the_kubernetes_minor_of_the_pinned_k3s():
    # The API server must be the Kubernetes minor the e2e stacks run (k3s of their version), not the default for
    # new stacks (1.36 and 1.35 since issue 32). Its patch may lag the k3s pin
    # (issue 32 moved the pin to the newest patch for runc's CVE fixes, which concern k3s hosts, not this stand-in
    # API server; rebuilding it at the new patch needs a go.mod/go.sum refresh from the Go module proxy), never lead.
    k3s = versions.k3s_release(_e2e_stacks_kubernetes()).split("+")[0]
    kubernetes = requires("kube")["k8s.io/kubernetes"]
    as_tuple = lambda v: tuple(int(x) for x in v.removeprefix("v").split("."))  # noqa: E731
    assert as_tuple(kubernetes)[:2] == as_tuple(k3s)[:2]
    assert as_tuple(kubernetes) <= as_tuple(k3s)
    staging = re.findall(r"^\s*(k8s\.io/[a-z\-]+) => (k8s\.io/[a-z\-]+) (v\S+)$", (BUILD / "kube" / "go.mod").read_text(), re.M)
    assert len(staging) >= 30
    minor_patch = kubernetes.removeprefix("v1.")
    assert {(a == b, v) for a, b, v in staging} == {(True, f"v0.{minor_patch}")}


def test_pulumi_cli_is_not_older_than_the_python_sdk():
    cli = requires("pulumi")["github.com/pulumi/pulumi/pkg/v3"]
    assert requires("pulumi")["github.com/pulumi/pulumi/sdk/v3"] == cli
    sdk = importlib.metadata.version("pulumi")
    as_tuple = lambda v: tuple(int(x) for x in v.removeprefix("v").split("."))  # noqa: E731
    assert as_tuple(cli) >= as_tuple(sdk)
    assert requires("langhost")["github.com/pulumi/pulumi/sdk/v3"] == cli
