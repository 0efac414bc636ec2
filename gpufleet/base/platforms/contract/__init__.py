"""The platform contract: one `PlatformTraits` per platform, one area object per part of shared code.

Every area has a base class (a module here) whose attributes and methods are the defaults: a platform overrides
only what it has, so a new platform that declares nothing still plans, prices, reviews and is judged (its pools
at the prices its stack gives, no extra checks, no cloud resources for the policies to read). docs/platforms.md
lists each trait and who asks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpufleet.base.platforms.contract.addons import AddonTraits
from gpufleet.base.platforms.contract.keys import KeyTraits
from gpufleet.base.platforms.contract.nodes import NodeTraits
from gpufleet.base.platforms.contract.policy import PolicyTraits
from gpufleet.base.platforms.contract.pricing import PricingTraits
from gpufleet.base.platforms.contract.program import ProgramTraits
from gpufleet.base.platforms.contract.review import ReviewTraits
from gpufleet.base.platforms.contract.scheduling import SchedulingTraits
from gpufleet.base.platforms.contract.versions import VersionTraits

__all__ = ["AddonTraits", "KeyTraits", "NodeTraits", "PlatformTraits", "PolicyTraits", "PricingTraits",
           "ProgramTraits", "ReviewTraits", "SchedulingTraits", "VersionTraits"]


@dataclass(frozen=True)
class PlatformTraits:
    """One platform, as every layer of shared code asks about it."""

    name: str
    """The value of `gpufleet:cluster.platform` (and the name of its `cluster.<name>` block, where it has one)."""
    program: ProgramTraits
    """What its Pulumi program needs: its components module, its install extra and cloud SDK, its secret inputs."""
    order: int = 100
    """Where it stands when platforms are listed (built-ins 10..50, plug-ins after them)."""
    keys: KeyTraits = field(default_factory=KeyTraits)
    """Its stack keys and their checks (spec)."""
    versions: VersionTraits = field(default_factory=VersionTraits)
    """The Kubernetes versions it plans for and its support calendar (spec, plan)."""
    nodes: NodeTraits = field(default_factory=NodeTraits)
    """The labels and taints its nodes really carry, and a pool's GPU shape from its cloud shape (spec, components)."""
    pricing: PricingTraits = field(default_factory=PricingTraits)
    """How its pools are counted and priced, and what its cluster costs beyond them (capacity, cost)."""
    addons: AddonTraits = field(default_factory=AddonTraits)
    """Which storage, cold-start, registry, image and metrics features it has, and why not when it has not."""
    scheduling: SchedulingTraits = field(default_factory=SchedulingTraits)
    """DRA, topology, serving gateways, AMD, sharing and admission: what it supports and how."""
    review: ReviewTraits = field(default_factory=ReviewTraits)
    """Which of its resources' fields force replacement or disrupt nodes (the review)."""
    policy: PolicyTraits = field(default_factory=PolicyTraits)
    """Which of its cloud resources are GPU pools and how to read them (the policy pack)."""
