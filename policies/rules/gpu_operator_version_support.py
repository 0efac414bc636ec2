"""gpu-operator-version-support: the GPU Operator chart is a release we know, and its driver is on a
branch that release supports. Reads `kubernetes:helm.sh/v3:Release` inputs only."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from gpufleet import catalog

NAME = "gpu-operator-version-support"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


def check(props: dict) -> list[str]:
    """Problems with one Helm release's inputs (empty when it is not the GPU Operator or is fine)."""
    if props.get("chart") != "gpu-operator":
        return []
    version = props.get("version")
    releases = catalog.operator_releases()
    if version not in releases:
        return [f"GPU Operator chart version {version!r} is not one gpufleet knows (known: {', '.join(releases)})"]
    release = releases[version]
    driver = (props.get("values") or {}).get("driver") or {}
    if driver.get("enabled", True) is False:
        return []
    driver_version = driver.get("version") or release.default_driver
    try:
        branch = catalog.driver_branch(str(driver_version))
    except ValueError:
        return [f"driver version {driver_version!r} is not a dotted driver version"]
    if branch not in release.driver_branches:
        return [
            f"driver {driver_version} (branch {branch}) is not supported by GPU Operator {version} "
            f"(supported branches: {', '.join(map(str, release.driver_branches))})"
        ]
    return []


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type != RELEASE_TYPE:
        return
    for message in check(args.props):
        report_violation(message, None)


POLICY = ResourceValidationPolicy(
    name=NAME,
    description="The GPU Operator release is known and its driver is on a branch that release supports.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_validate,
)
