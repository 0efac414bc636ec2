"""spot-pool-diversified (advisory; the advisory half of spot-pool-safety): a spot GPU node group draws
from at least 2 instance types, so one type's spot capacity running out does not empty the pool (AWS
Spot best practices: "be flexible about instance types"). Only pools that list their instance types (EKS node groups:
`spot_types_diversify` of the platform's pool type); a GKE node pool has one machine type by construction, so it is not
judged.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

from gpufleet.policies import inputs as I

NAME = "spot-pool-diversified"
MINIMUM_TYPES = 2


def check(pool: I.Pool) -> list[str]:
    if not pool.kind.spot_types_diversify or not pool.spot():
        return []
    types = sorted(set(pool.instance_types))
    if len(types) >= MINIMUM_TYPES:
        return []
    return [f"spot GPU pool draws from {len(types)} instance type ({', '.join(types) or 'none'}); list at least {MINIMUM_TYPES} with the same GPU"]


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="Spot GPU node groups are diversified over at least 2 instance types.",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=I.pool_validator(NAME, check),
    config_schema=I.exemptions_schema(),
)
