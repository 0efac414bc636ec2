"""spot-pool-diversified (advisory; the advisory half of spot-pool-safety): a spot GPU node group draws
from at least 2 instance types, so one type's spot capacity running out does not empty the pool (AWS
Spot best practices: "be flexible about instance types"). EKS only: a GKE node pool has one machine
type by construction, so it is not judged.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ResourceValidationPolicy

from policies import inputs as I

NAME = "spot-pool-diversified"
MINIMUM_TYPES = 2


def check(pool: I.Pool) -> list[str]:
    if pool.platform != "eks" or not I.is_spot(pool):
        return []
    types = sorted(set(pool.instance_types))
    if len(types) >= MINIMUM_TYPES:
        return []
    return [f"spot GPU pool draws from {len(types)} instance type ({', '.join(types) or 'none'}); list at least {MINIMUM_TYPES} with the same GPU"]


def _validate(args, report_violation) -> None:
    pool = I.gpu_pool(args)
    if pool is None or I.exemption(NAME, args.name, args.urn, args.props, I.config_of(args)):
        return
    for message in check(pool):
        report_violation(message, args.urn)


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="Spot GPU node groups are diversified over at least 2 instance types.",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=_validate,
    config_schema=PolicyConfigSchema(
        properties={"exemptions": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}}
    ),
)
