"""Address plans the clouds accept: each platform's rules are among its checks (KeyTraits.checks:
gpufleet/base/spec/platforms/eks_limits.py, gke_limits.py, aks_checks.py, k3s_checks.py); here what they share.

`overlaps` judges ranges that must not overlap; `warnings` is what the plan cannot check on GKE (run by the plan,
gpufleet/app/plan/engine.py).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import needs_proxy_only_subnet

NS = "gpufleet"


def overlaps(stack: str, ranges: list[tuple[str, str]], rule: str) -> list[Problem]:
    """One problem per range that overlaps an earlier one of the same IP version, at the later range's key."""
    nets = [(path, ipaddress.ip_network(value, strict=False)) for path, value in ranges]
    problems = []
    for a in range(len(nets)):
        for b in range(a + 1, len(nets)):
            (pa, na), (pb, nb) = nets[a], nets[b]
            if na.version == nb.version and na.overlaps(nb):
                problems.append(Problem(stack, f"{NS}:{pb}", f"overlaps {pa} ({na}): {rule}", str(nb)))
    return problems


def warnings(stack: str, spec: Any) -> list[Problem]:
    """What the plan cannot check: an existing GKE network's proxy-only subnet for a regional Gateway class (only a
    GKE stack has a `cluster.gke` block)."""
    gke = spec.cluster.gke
    if gke is None or gke.network.existing is None or not needs_proxy_only_subnet(spec):
        return []
    klass = spec.serving.gateway.resolved(spec.cluster.platform)
    return [Problem(stack, f"{NS}:cluster.gke.network.existing", f"the serving Gateway's class {klass} is a regional "
                    "Envoy-based load balancer: the network must have an active proxy-only subnet (purpose "
                    f"REGIONAL_MANAGED_PROXY, role ACTIVE) in {gke.region}, which gpufleet does not create in a network "
                    "it does not own (gcloud compute networks subnets create ... --purpose=REGIONAL_MANAGED_PROXY "
                    "--role=ACTIVE; docs.cloud.google.com/load-balancing/docs/proxy-only-subnets)",
                    gke.network.existing.network)]
