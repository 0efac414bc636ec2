"""cluster.platform: existing — a Kubernetes cluster gpufleet does not create (a GPU cloud's managed cluster, a cluster
another team runs), reached through a kubeconfig in the secret config key `gpufleet:kubeconfig`.

gpufleet installs everything above the control plane there. Node pools are facts, not resources: each pool describes
nodes the cluster already has (the labels that select them, GPU model and count, how many, what they cost), so the
capacity, sharing checks, cost and policies keep working. docs/existing-cluster.md.
"""

from typing import Optional

from pydantic import Field, field_validator

from gpufleet.base.catalog import gpu_clouds
from gpufleet.base.spec.base import DNS_LABEL, Model
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.k8s_syntax import dns_subdomain, label_value, qualified_name

NS = "gpufleet"
KUBECONFIG_KEY = "kubeconfig"


class ExistingSpec(Model):
    """The cluster block of platform existing: what the stack knows about a cluster it does not create."""

    overhead_per_hour: Optional[float] = Field(default=None, ge=0)
    """What the cluster costs per hour beyond its GPU pools (control-plane fee, CPU nodes, storage, support), counted in
    the plan's idle floor; default: none (the cost then lists it as unknown)."""


class ExistingPoolSpec(Model):
    """A pool of nodes an existing cluster already has."""

    node_selector: dict[str, str] = Field(min_length=1)
    """Labels the pool's nodes already carry and that select them alone, e.g. {"gpu.nvidia.com/class":
    "H100_NVLINK_80GB"} on CoreWeave or {"node.kubernetes.io/instance-type": "gpu_8x_h100_sxm5"}. `gpufleet verify`
    checks that nodes with these labels exist and have the pool's GPUs."""
    nodes: list[str] = Field(default=[], max_length=1000)
    """Names of the pool's nodes, when they are fixed: gpufleet then writes its own pool labels onto each (pool, GPU
    model, capacity type, sharing selectors) with a NodePatch, so queues, sharing and DRA select them. Default: none;
    the nodes must then carry those labels already (their provider's node-pool labels; `gpufleet verify` lists what
    is missing)."""
    offering: Optional[str] = None
    """`<provider>/<offering>` from the catalog of GPU clouds (gpufleet/base/catalog/gpu_clouds.yaml), e.g.
    "coreweave/h100-8x" or "lambda/8x-h100-sxm": it fixes the GPU model, GPUs per node and the public list price of a
    node-hour. Default: none (state `gpu`, `gpusPerNode` and a price, or leave the pool unpriced)."""
    price_per_gpu_hour: Optional[float] = Field(default=None, ge=0)
    """What one GPU-hour costs you (your contract's rate); default: the offering's list price, else unpriced."""

    @field_validator("node_selector")
    @classmethod
    def _labels(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            problem = qualified_name(key)
            if problem:
                raise ValueError(f"label key '{key}': {problem}")
            problem = label_value(value) if value else None
            if problem:
                raise ValueError(f"label value '{value}' of {key}: {problem}")
        return v

    @field_validator("offering")
    @classmethod
    def _known_offering(cls, v: Optional[str]) -> Optional[str]:
        if v is None:
            return v
        provider, _, name = v.partition("/")
        if provider not in gpu_clouds.providers():
            raise ValueError(f"'{v}': unknown GPU cloud '{provider}' (allowed: {', '.join(gpu_clouds.providers())}; "
                             "or leave offering out and declare pricePerGpuHour)")
        if name not in gpu_clouds.offerings(provider):
            raise ValueError(f"'{v}': not an offering of {provider} in the catalog (allowed: "
                             f"{', '.join(provider + '/' + o for o in gpu_clouds.offerings(provider))})")
        return v

    @field_validator("nodes")
    @classmethod
    def _node_names(cls, v: list[str]) -> list[str]:
        bad = [n for n in v if dns_subdomain(n)]
        if bad:
            raise ValueError(f"not a Kubernetes node name (DNS subdomain): {', '.join(bad)}")
        if len(set(v)) != len(v):
            raise ValueError("a node is listed twice")
        return v


def offering(pool) -> Optional[gpu_clouds.Offering]:
    """The catalog offering a pool of an existing cluster names (None without one)."""
    if pool.existing is None or pool.existing.offering is None:
        return None
    provider, _, name = pool.existing.offering.partition("/")
    return gpu_clouds.offering(provider, name)


# Pool keys that create or size cloud resources on the other platforms: an existing cluster's nodes are facts here.
NOT_ON_EXISTING = {
    "hosts": "k3s hosts joined over SSH",
    "reservation": "a cloud capacity reservation gpufleet consumes",
    "max_unavailable": "an EKS node group's update setting",
    "local_storage": "an EKS node group's instance-store setting",
    "efa_only": "an EKS node group's EFA interfaces",
    "cold_start": "node images and boot disks of the platforms that create nodes",
}


def existing_checks(stack: str, spec) -> list[Problem]:
    """What an existing cluster's stack must say, and the keys that would create nodes (refused: nothing here can)."""
    problems = []
    for i, pool in enumerate(spec.node_pools):
        at = f"{NS}:nodePools[{i}]"
        if pool.existing is None:
            problems.append(Problem(stack, f"{at}.existing", "required on platform existing: the pool's nodeSelector "
                                    "(labels its nodes already carry), e.g. existing: {nodeSelector: "
                                    "{node.kubernetes.io/instance-type: gpu_8x_h100_sxm5}}"))
            continue
        for field, what in NOT_ON_EXISTING.items():
            if field in pool.model_fields_set:
                alias = type(pool).model_fields[field].alias
                problems.append(Problem(stack, f"{at}.{alias}", f"not used on platform existing: {what}; gpufleet creates "
                                        "no nodes on a cluster it does not own, so remove it"))
        chosen = offering(pool)
        if chosen is not None:
            for field, value in (("gpu", chosen.gpu), ("gpus_per_node", chosen.gpus)):
                given = getattr(pool, field)
                if given is not None and given != value:
                    alias = type(pool).model_fields[field].alias
                    problems.append(Problem(stack, f"{at}.{alias}", f"offering {pool.existing.offering} has {value}; leave "
                                            f"{alias} out or make it agree", given))
        else:
            if pool.gpu is None:
                problems.append(Problem(stack, f"{at}.gpu", "required on existing without an offering: the GPU model of "
                                        "the pool's nodes"))
            if pool.gpus_per_node is None:
                problems.append(Problem(stack, f"{at}.gpusPerNode", "required on existing without an offering: GPUs in "
                                        "each node"))
        if pool.existing.price_per_gpu_hour is not None and pool.price_per_node_hour is not None:
            problems.append(Problem(stack, f"{at}.existing.pricePerGpuHour", "give one price: pricePerGpuHour or the pool's "
                                    "pricePerNodeHour"))
        if pool.existing.nodes and len(pool.existing.nodes) > pool.max_nodes:
            problems.append(Problem(stack, f"{at}.maxNodes", f"the pool lists {len(pool.existing.nodes)} nodes: maxNodes "
                                    "must be at least that", pool.max_nodes))
    return problems + _overlaps(stack, spec)


def _overlaps(stack: str, spec) -> list[Problem]:
    """Two pools that claim one node: gpufleet labels, taints and configures each pool's nodes (sharing, MIG layout,
    Kueue flavor), so a node in two pools gets two configurations and is counted twice in capacity and cost. A node
    listed by two pools is one; so is every node of a pool whose nodeSelector includes every label of another's (a
    node matching the narrower selector matches the wider one too: Kubernetes nodeSelector, kubernetes.io/docs/
    concepts/scheduling-eviction/assign-pod-node, matches a node that has all the listed labels)."""
    pools = [(i, p) for i, p in enumerate(spec.node_pools) if p.existing is not None]
    problems = []
    for a, (i, first) in enumerate(pools):
        for j, second in pools[a + 1:]:
            at = f"{NS}:nodePools[{j}].existing"
            shared = [n for n in second.existing.nodes if n in first.existing.nodes]
            if shared:
                problems.append(Problem(stack, f"{at}.nodes", f"also listed by pool '{first.name}' (nodePools[{i}]): a "
                                        "node belongs to one pool", ", ".join(shared)))
                continue
            wide, narrow = first.existing.node_selector.items(), second.existing.node_selector.items()
            if wide <= narrow or narrow <= wide:
                problems.append(Problem(stack, f"{at}.nodeSelector", f"every node it selects is also selected by pool "
                                        f"'{first.name}' (nodePools[{i}], nodeSelector "
                                        f"{dict(first.existing.node_selector)})" if wide <= narrow else
                                        f"it selects every node of pool '{first.name}' (nodePools[{i}], nodeSelector "
                                        f"{dict(first.existing.node_selector)})", dict(second.existing.node_selector)))
    return problems
