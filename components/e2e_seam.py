"""Test-only seams of the e2e tier (docs/e2e.md), read from config keys under `gpufleet-e2e:`.

No real stack sets these keys; the e2e tests (tests/e2e/) add them to a copy of an example stack so that the
real Pulumi CLI can deploy the add-on layer against a local API server:

- `gpufleet-e2e:chartRepository`: URL of a Helm chart repository (an index.yaml) serving every pinned chart.
  Every release then installs its pinned chart and version from there instead of its upstream repository or
  OCI registry (the pins themselves stay in gpufleet/base/versions.py).
- `gpufleet-e2e:kubeconfig` (a secret): the kubeconfig of an existing API server. A k3s stack then creates no
  hosts (no k3s servers, agents or join token: that needs real machines) and installs its add-on layer on
  that server; Helm releases and claims do not wait for readiness, since nothing schedules without kubelets.

The keys live outside the `gpufleet:` namespace on purpose: the stack spec rejects unknown `gpufleet:` keys,
and these are not part of the product's stack format.
"""

from __future__ import annotations

from typing import Optional

import pulumi

from gpufleet.base import labels

NAMESPACE = "gpufleet-e2e"


def chart_repository() -> Optional[str]:
    """The chart repository every release installs from, when the e2e tier set one."""
    return pulumi.Config(NAMESPACE).get("chartRepository") or None


def existing_kubeconfig() -> Optional[pulumi.Output]:
    """The kubeconfig of an existing API server that replaces the k3s hosts, when the e2e tier set one."""
    return pulumi.Config(NAMESPACE).get_secret("kubeconfig")


def skip_await() -> bool:
    """True when deploying to an API server without kubelets (the `kubeconfig` seam): do not wait for pods."""
    return existing_kubeconfig() is not None


def without_waiting(metadata: dict) -> dict:
    """`metadata` with `pulumi.com/skipAwait: "true"` under the `kubeconfig` seam, else unchanged: an object whose
    readiness a controller or kubelet reports (a claim's Bound, the NicClusterPolicy's `status.state`) never gets
    it there, and the real engine would wait out the resource's timeout."""
    if not skip_await():
        return metadata
    return {**metadata, "annotations": {**(metadata.get("annotations") or {}), labels.PULUMI_SKIP_AWAIT_ANNOTATION: "true"}}
