"""eks-spot-instance-diversity: a spot EKS managed node group should list several instance types, so a
shortage of one type in the zone does not leave the pool unable to grow (EKS best practices, "Spot:
diversify instance types"). Advisory: a single GPU type is sometimes the only one of its shape (p5.48xlarge).
Reads `aws:eks/nodeGroup:NodeGroup` inputs only."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

NAME = "eks-spot-instance-diversity"
NODE_GROUP_TYPE = "aws:eks/nodeGroup:NodeGroup"


def check(props: dict) -> list[str]:
    """Problems with one node group's inputs (empty when it is on-demand, diversified, or unknown)."""
    if props.get("capacityType") != "SPOT":
        return []
    types = props.get("instanceTypes")
    if types is None or isinstance(types, str):
        return []
    # The SDK's proxy raises its unknown-value error here when the list is unknown during preview.
    types = list(types)
    if len(types) < 2:
        return [
            f"spot node group has {len(types)} instance type(s) ({', '.join(map(str, types)) or 'none'}): "
            "list several of the same GPU shape so spot shortages of one type do not stall the pool"
        ]
    return []


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != NODE_GROUP_TYPE:
        return
    for message in check(args.props):
        report_violation(message, args.urn)


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="Spot EKS node groups list several instance types of one shape.",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=_validate,
)
