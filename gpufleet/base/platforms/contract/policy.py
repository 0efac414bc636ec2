"""Which of a platform's cloud resources are GPU pools and how the policy pack reads them (policies/).

The pack judges plain resource inputs by Pulumi type token, so it judges any Pulumi program. A platform whose GPU
pools are cloud resources (an EKS node group, a GKE node pool, an AKS node pool) declares each such resource type as
a `GpuPoolType`: which instances of it are GPU pools, and where their labels, taints, minimum size, spot flag and
preinstalled driver are in its inputs. policies/inputs.py builds its view of a stack's GPU pools from every
registered platform's `PolicyTraits.pool_types`, and the rules ask a pool's type, never the platform's name.

The readers are pure functions over one resource's inputs, read through `Inputs` (policies/inputs.py implements it
over pulumi_policy's proxies), so nothing here imports pulumi_policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol


class Inputs(Protocol):
    """One resource's plain inputs (camelCase keys, numbers as floats), read defensively: a missing key or a value of
    the wrong kind reads as the default; a preview-time unknown raises, so the pack reports "can't be known during
    preview" for that policy instead of guessing."""

    def get(self, *path: Any, default: Any = None) -> Any:
        """The value at path (map keys and list indices), or default."""

    def text(self, *path: Any) -> Optional[str]:
        """The string at path, or None."""

    def number(self, *path: Any) -> Optional[float]:
        """The number at path (never a bool), or None."""

    def truthy(self, *path: Any) -> bool:
        """True for true or "true" at path."""

    def items(self, *path: Any) -> list:
        """The list at path ([] when absent or not a list)."""

    def mapping(self, *path: Any) -> dict:
        """The top level of the map at path ({} when absent or not a map)."""

    def each(self, *path: Any) -> list["Inputs"]:
        """The maps of the list at path, each read the same way."""


@dataclass(frozen=True)
class GpuShape:
    """What one node of a cloud shape offers, as the rules judge it. Lookups return None for a shape the catalog does
    not know, so a rule can say it cannot judge instead of guessing."""

    name: str
    gpu: Optional[str]  # catalog GPU model
    gpus: int
    price_hour: Optional[float]  # on-demand USD per node-hour (catalog estimate)
    efa_interfaces: int = 0
    gpudirect_networks: int = 0  # additional node networks GPUDirect needs
    spot_price_hour: Optional[float] = None
    """Spot USD per node-hour (catalog estimate); None when the catalog has no sourced spot price."""

    def price_for(self, spot: bool) -> tuple[Optional[float], str]:
        """The node-hour price at the pool's own capacity type and how to name it: a spot pool's idle nodes are billed
        at the spot price, not the on-demand one."""
        return (self.spot_price_hour, "catalog spot estimate") if spot else (self.price_hour, "catalog on-demand estimate")


Taint = tuple[str, str, str]
"""(key, value, effect), the effect in Kubernetes spelling (NoSchedule, NoExecute, PreferNoSchedule)."""

_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


def object_taints(inputs: "Inputs", *path: str) -> list[Taint]:
    """Taints written as {key, value, effect} maps, effects in a cloud API's spelling (NO_SCHEDULE) or Kubernetes',
    returned in Kubernetes spelling: how the EKS and GKE APIs write a pool's taints."""
    out = []
    for t in inputs.each(*path):
        effect = t.text("effect") or ""
        out.append((t.text("key") or "", t.text("value") or "", _EFFECTS.get(effect, effect)))
    return out


Idle = Callable[[float, int], str]
"""What `nodes` idle nodes (per zone, times `zones`) cost, as the pack words it: idle(nodes, zones)."""


@dataclass(frozen=True)
class Inline:
    """Where a resource that is not a pool of its own declares GPU pools inside its inputs: a cluster's list of pools
    (an AKS ManagedCluster's `agentPoolProfiles`, a GKE Cluster's `nodePools`), its one default pool (a classic
    KubernetesCluster's `defaultNodePool`), or its own inputs (a GKE Cluster's `nodeConfig` and `initialNodeCount` make
    its default pool). policies/inputs.py reads each such pool as one `Pool` of its own, named by `where` and reported
    on the enclosing resource's URN."""

    path: tuple[str, ...] = ()
    """Keys from the resource's inputs to the pools; () when the resource's own inputs are the pool's."""
    listed: bool = False
    """`path` holds a list, each map in it one pool; otherwise one map (or the resource's own inputs)."""
    name_key: str = "name"
    """The key of a pool's own name in its map ("" when it has none)."""
    unnamed: str = ""
    """The pool's name when its map names none ("default pool" for a GKE cluster's own)."""
    shown: str = ""
    """How a message shows where the pool is when `path` is () ("nodeConfig")."""

    def where(self, index: Optional[int] = None) -> str:
        """Where the pool is, as the program spells it: `agentPoolProfiles[1]`, `defaultNodePool`, `nodeConfig`;
        `agentPoolProfiles[]` for the pattern (index None on a listed path)."""
        at = ".".join(self.path) or self.shown
        return f"{at}[{'' if index is None else index}]" if self.listed else at


class GpuPoolType:
    """One cloud resource type that is a platform's GPU pool, and how the policy pack reads it. Every reader takes the
    resource's `Inputs`. The defaults are a pool the pack knows nothing about: no labels, no taints, not spot, not
    reserved, no driver of its own, nothing to say about scaling to zero."""

    token: str = ""
    """The Pulumi type token of the resource (`aws:eks/nodeGroup:NodeGroup`), or of the resource that declares the pools
    inside itself when `inline` is set (`azure-native:containerservice:ManagedCluster`)."""

    kind_name: str = "GPU pool"
    """What users call the resource ("managed node group"). Default: "GPU pool"."""

    inline: Optional[Inline] = None
    """Set when pools of this type are declared inside a resource of type `token` (where, and how each is named): every
    reader below then reads one such pool's own inputs. Default: None, each resource is one pool."""

    shaped_as: str = ""
    """For a pool declared inline: the type token of the resource whose inputs its map has (a GKE Cluster's
    `nodePools[]` map is a NodePool's: `gcp:container/nodePool:NodePool`), so a rule that reads that resource type by
    its token (policies/inputs.py `resource_validator`) judges the inline pool too. Default: empty (no such rule
    judges it)."""

    def declares_pool(self, resource: Inputs) -> bool:
        """Whether the enclosing resource (its inputs) really makes the inline pools at `inline` (a GKE cluster's
        `nodeConfig` makes no default pool when the cluster lists `nodePools` or removes its default pool). Default:
        yes. Not asked for a pool that is its own resource."""
        return True

    def gpu_pool(self, inputs: Inputs) -> Optional[tuple[Optional[GpuShape], list[str]]]:
        """(its node's shape, or None when the catalog does not know it; its instance or machine types) when this
        resource is a GPU pool, None when it is not. Default: never a GPU pool."""
        return None

    def labels(self, inputs: Inputs) -> dict:
        """The Kubernetes labels the pool puts on its nodes. Default: none."""
        return {}

    def taints(self, inputs: Inputs) -> list[Taint]:
        """The taints the pool puts on its nodes. Default: none."""
        return []

    taints_fixed: str = ""
    """Why the pool cannot declare taints of its own, named in gpu-pool-taint's fix (the fix is then another pool).
    Default: empty (it can)."""

    taints_gpu_nodes_itself: bool = False
    """The platform taints GPU nodes nvidia.com/gpu NoSchedule itself, so a pool that does not declare that taint is
    still tainted (gpu-pool-taint). Default: no, the pool must declare it."""

    def spot(self, inputs: Inputs) -> bool:
        """The pool buys spot (preemptible) capacity. Default: no."""
        return False

    spot_label: str = ""
    """The label the platform puts on spot nodes itself, named in spot-pool-safety's fix. Default: none."""

    spot_taint_keys: tuple[str, ...] = ()
    """Taint keys that mark spot nodes on this platform besides gpufleet's own (spot-pool-safety accepts any of them
    with NoSchedule or NoExecute). Default: none."""

    def spot_problems(self, inputs: Inputs) -> list[str]:
        """What else is wrong with this spot pool on its platform (spot-pool-safety). Default: nothing."""
        return []

    spot_types_diversify: bool = False
    """The pool lists several instance types, so a spot pool should list at least two with the same GPU
    (spot-pool-diversified). Default: no (one machine type by construction: not judged)."""

    def reserved(self, inputs: Inputs) -> bool:
        """The pool's capacity is paid for whether nodes run or not (a capacity block, a targeted reservation), so its
        minimum is not judged as idle cost. Default: no."""
        return False

    def minimum(self, inputs: Inputs) -> Optional[float]:
        """The pool's minimum size as its resource declares it (None when it does not say). Default: None."""
        return None

    def scale_to_zero_problems(self, inputs: Inputs, idle: Idle) -> list[str]:
        """Why the pool cannot sit at zero nodes by its own inputs (gpu-pool-scale-to-zero); `idle` words what idle
        nodes cost. Default: a `minimum` above 0 on capacity that is not `reserved`."""
        minimum = self.minimum(inputs)
        if minimum is not None and minimum > 0 and not self.reserved(inputs):
            return [f"its minimum is {minimum:g}, not 0: {idle(minimum, 1)} while no GPU work runs"]
        return []

    autoscaler_hints: bool = False
    """Scaling from zero needs a cluster-autoscaler Helm release in the stack and the autoscaler's node-template tags
    for nvidia.com/gpu, every label and every taint on the pool (gpu-pool-scale-to-zero). Default: no (the platform's
    own autoscaler knows the pool)."""

    def reservation_problems(self, inputs: Inputs) -> list[str]:
        """Why the pool cannot land on the reserved capacity it asks for (reservation-placement). Default: nothing."""
        return []

    def rdma_problems(self, name: str, inputs: Inputs, shape: Optional[GpuShape], instance_types: list[str]) -> list[str]:
        """Why the RDMA wiring of pool `name` (shape and types from `gpu_pool`) makes NCCL fall back to TCP
        (rdma-placement). Default: nothing."""
        return []

    def driver_preinstalled(self, inputs: Inputs) -> bool:
        """The pool's nodes come with the NVIDIA driver, so the GPU Operator must not install another
        (gpu-operator-driver-conflict). Default: no."""
        return False

    def driver_absent(self, inputs: Inputs) -> bool:
        """The pool's nodes are known to come without a driver, so the GPU Operator must install one. Default: no
        (not known either way: not judged)."""
        return False

    toolkit_preinstalled: str = ""
    """Where a preinstalled driver comes with the container toolkit: what ships it, as gpu-operator-driver-conflict's
    message says ("NVIDIA AMI ships it: set toolkit.enabled=false"). Default: empty (the toolkit is not judged)."""

    def driver_version_unknown(self, inputs: Inputs) -> bool:
        """The nodes run a driver that came with them whose version the inputs do not say, so gpu-driver-cuda-alignment
        cannot judge it unless the stack declares it. Default: no."""
        return False


@dataclass(frozen=True)
class NodeKind:
    """A kind of resource by which a platform's program brings GPU nodes: a pool type the pack reads as a pool, or
    another resource (a Karpenter NodePool, a k3s host's remote command, an existing cluster's node patch)."""

    name: str
    """What users call it ("managed node group", "k3s host"), in tests and messages."""
    token: str
    """Its Pulumi type token (of the enclosing resource, for a pool declared inline)."""
    at: str = ""
    """Where in that resource a pool declared inline is (`agentPoolProfiles[]`); empty for a resource of its own."""

    @property
    def key(self) -> str:
        """The kind's key among every platform's: its token, and where inline (two inline kinds share a GKE Cluster)."""
        return f"{self.token} {self.at}" if self.at else self.token


class PolicyTraits:
    """Defaults: a platform that declares nothing here has no cloud resources the pack reads as GPU pools (k3s hosts,
    an existing cluster's nodes)."""

    pool_types: tuple[GpuPoolType, ...] = ()
    """The cloud resource types that are this platform's GPU pools, and the pools declared inline in another resource
    (a pool type with `inline`). Default: none."""

    other_node_kinds: tuple[NodeKind, ...] = ()
    """The resources other than `pool_types` by which the platform brings GPU nodes (a Karpenter NodePool, a k3s
    host). The policy tests hold a PASSED and a FAILED fixture, or a reason it does not apply, for every rule and
    every kind (tests/policy/test_rule_platform_matrix.py). Default: none."""

    def node_kinds(self) -> tuple[NodeKind, ...]:
        """Every kind of resource that brings this platform's GPU nodes: its pool types (named by `kind_name`), then
        `other_node_kinds`."""
        return tuple(NodeKind(t.kind_name, t.token, t.inline.where() if t.inline else "") for t in self.pool_types) + \
            self.other_node_kinds
