"""Rules the operators enforce on the objects gpufleet emits beyond their CRD schemas (issue 33): a stack that trips
one plans clean and fails at `pulumi up` (an admission webhook or a CEL rule refuses the object) or deploys an
object its controller never uses. Called from `_cross_checks` in gpufleet/base/spec/__init__.py.

Each rule names the upstream file at the release gpufleet pins (gpufleet/base/versions.py) and why a stack can reach
it. Rules of those webhooks that gpufleet's objects cannot trip are left out on purpose, for example Kueue's
"borrowingLimit/lendingLimit must be nil when cohort is empty" (every ClusterQueue joins `addons.kueue.cohort`, a
non-empty DNS label) and its caps of 256 flavors or covered resources (one flavor per ClusterQueue, a few resources).
The NVIDIA GPU Operator registers no validating webhook (cmd/gpu-operator/main.go at the pin starts a webhook server
with no validator); the Network Operator's (api/v1alpha1/validator/) is off in the chart values gpufleet deploys
(`operator.admissionController.enabled: false`), and the device-plugin resource names it would check are built from
pool names, valid by construction (components/gpu_stack/network_operator.py resource_name).

A platform's own controllers' rules are its scheduling trait `admission_problems` (EKS: Karpenter's NodePool label
rules, gpufleet/base/platforms/eks/scheduling.py).
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import catalog, platforms
from gpufleet.base import labels as L
from gpufleet.base.spec import shape
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"

# NVIDIA MPS: the device plugin's MPS control daemon refuses more replicas than an MPS server takes clients, 48 on
# Volta and newer (16 before): NVIDIA/k8s-device-plugin cmd/mps-control-daemon/mps/device.go assertReplicas /
# maxClients, at v0.20.0, the device plugin the pinned GPU Operator deploys (its values.yaml devicePlugin.version;
# ../shared/reference/gpu-operator/). Every NVIDIA GPU in gpufleet's catalog is Turing or newer, so 48.
MPS_MAX_REPLICAS = 48


def check(stack: str, spec: Any) -> list[Problem]:
    problems = _kueue_lending_limits(stack, spec)
    problems += platforms.of(spec).scheduling.admission_problems(stack, spec)
    problems += _mps_replicas(stack, spec)
    return problems


def _kueue_lending_limits(stack: str, spec: Any) -> list[Problem]:
    """Kueue's ClusterQueue webhook: "lendingLimit must be less than or equal to the nominalQuota"
    (kubernetes-sigs/kueue pkg/webhooks/clusterqueue_webhook.go validateLendingLimit, at the tag of versions.KUEUE).
    gpufleet writes a queue's lendingLimit and nominalQuota into one resource entry of its ClusterQueue
    (components/workloads/kueue.py cluster_queue); without nominalQuota the nominal quota is everything the pool
    advertises at its maximum size."""
    kueue = spec.addons.kueue
    if not kueue.enabled:
        return []
    platform = spec.cluster.platform
    pools = {p.name: p for p in spec.node_pools}
    problems = []
    for i, team in enumerate(kueue.teams):
        for j, queue in enumerate(team.queues):
            if queue.lending_limit is None or queue.pool not in pools:
                continue
            at = f"{NS}:addons.kueue.teams[{i}].queues[{j}].lendingLimit"
            if queue.nominal_quota is not None:
                if queue.lending_limit > queue.nominal_quota:
                    problems.append(Problem(stack, at, "Kueue's ClusterQueue webhook refuses a lendingLimit above the "
                                            f"queue's nominalQuota ({queue.nominal_quota}): a queue lends at most what it "
                                            f"owns (allowed: 0 to {queue.nominal_quota})", queue.lending_limit))
                continue
            most = _pool_gpus_at_max_size(pools[queue.pool], platform)
            if most is not None and queue.lending_limit > most[1]:
                resource, count = most
                problems.append(Problem(stack, at, "Kueue's ClusterQueue webhook refuses a lendingLimit above the queue's "
                                        f"nominal quota, here everything pool '{queue.pool}' advertises at its maximum size "
                                        f"({count} {resource}, as nominalQuota is unset): a queue lends at most what it owns "
                                        f"(allowed: 0 to {count})", queue.lending_limit))
    return problems


def _pool_gpus_at_max_size(pool: Any, platform: str) -> Optional[tuple[str, int]]:
    """The pool's smallest GPU resource at its maximum size (resource, count), or None when that is not known: an
    unknown instance or machine type, or a MIG layout the pool's own checks refuse (they report it; this rule does not
    guess)."""
    try:
        advertised = shape.advertised(pool, platform)
    except KeyError:  # a MIG profile, layout or strategy the GPU does not have (gpufleet/base/spec/features/sharing_checks.py)
        return None
    per_node = {r: n for r, n in advertised.items() if L.is_gpu_resource(r)}
    if not per_node or 0 in per_node.values() or not _known_mig_profiles(pool, per_node):
        return None
    resource = min(sorted(per_node), key=lambda r: per_node[r])
    return resource, per_node[resource] * shape.most_nodes(pool, platform)


def _known_mig_profiles(pool: Any, per_node: dict[str, int]) -> bool:
    profiles = [r.removeprefix(L.MIG_RESOURCE_PREFIX) for r in per_node if r.startswith(L.MIG_RESOURCE_PREFIX)]
    if not profiles:
        return True
    gpu = catalog.gpu(pool.gpu) if pool.gpu in catalog.gpu_models() else None
    return gpu is not None and gpu.mig is not None and all(p in gpu.mig.profiles for p in profiles)


def _mps_replicas(stack: str, spec: Any) -> list[Problem]:
    if not platforms.of(spec).scheduling.stack_sharing:
        return []  # the platform's own sharing settings (GKE's gke.gpuSharing); `sharing` is refused there
    problems = []
    for i, pool in enumerate(spec.node_pools):
        s = pool.sharing
        if s.mode == "mps" and s.replicas is not None and s.replicas > MPS_MAX_REPLICAS:
            problems.append(Problem(stack, f"{NS}:nodePools[{i}].sharing.replicas", f"an MPS server takes at most "
                                    f"{MPS_MAX_REPLICAS} clients per GPU, so the device plugin's MPS control daemon refuses "
                                    f"more replicas and pool '{pool.name}' advertises no GPU (allowed: 2 to "
                                    f"{MPS_MAX_REPLICAS}; time-slicing has no such limit)", s.replicas))
    return problems


__all__ = ["check"]
