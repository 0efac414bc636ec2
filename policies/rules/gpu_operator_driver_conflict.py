"""gpu-operator-driver-conflict: the GPU Operator must not install a driver (or toolkit) on nodes that
already have one, and must install it where none is preinstalled.

Nodes with a driver: EKS node groups on NVIDIA AMIs (amiType AL2023_*_NVIDIA, BOTTLEROCKET_*_NVIDIA,
AL2_x86_64_GPU; these images also ship the container toolkit), GKE node pools whose accelerators ask GKE
to install the driver (gpuDriverVersion DEFAULT | LATEST), and hosts declared with the
`gpufleet.io/preinstalled-driver-version` annotation. A second driver makes the operator's driver pods
crash-loop (NVIDIA/gpu-operator#686: no driver containers for Amazon Linux, use the AMI's driver with
driver.enabled=false; #528: validators crash-looping next to a preinstalled driver and runtime).
Nodes without one: EKS GPU node groups on a non-GPU AMI type, and GKE pools with INSTALLATION_DISABLED:
with the operator's driver off, their GPUs are never usable.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.policies import inputs as I

NAME = "gpu-operator-driver-conflict"
_DRIVERLESS_EKS_AMIS = ("AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "AL2_x86_64", "AL2_ARM_64", "BOTTLEROCKET_x86_64", "BOTTLEROCKET_ARM_64")


def _gke_driver_modes(pool: I.Pool) -> set:
    return {I.get(a, "gpuDriverInstallationConfig", "gpuDriverVersion") for a in I.gke_accelerators(pool.props)}


def _has_driver(pool: I.Pool) -> bool:
    if pool.platform == "eks":
        return any(m in str(I.get(pool.props, "amiType", default="")) for m in I.EKS_NVIDIA_AMI_MARKERS)
    return bool(_gke_driver_modes(pool) & set(I.GKE_DRIVER_INSTALLED))


def _lacks_driver(pool: I.Pool) -> bool:
    """Known to come without a driver (a custom launch-template AMI may have one: not judged)."""
    if pool.platform == "eks":
        return I.get(pool.props, "amiType") in _DRIVERLESS_EKS_AMIS and not I.mapping(I.get(pool.props, "launchTemplate"))
    return "INSTALLATION_DISABLED" in _gke_driver_modes(pool)


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    pools = [p for p in I.gpu_pools(resources) if not I.exemption(NAME, p.name, p.urn, p.props, config)]
    with_driver = [p for p in pools if _has_driver(p)]
    without = [p for p in pools if _lacks_driver(p)]
    declared = I.annotations(resources, I.PREINSTALLED_DRIVER_ANNOTATION)
    out = []
    for r in I.operator_releases(resources):
        if I.exemption(NAME, r.name, r.urn, r.props, config):
            continue
        values = I.get(r.props, "values")
        driver_on = I.get(values, "driver", "enabled", default=True) is not False
        toolkit_on = I.get(values, "toolkit", "enabled", default=True) is not False
        if driver_on:
            for p in with_driver:
                out.append((r.urn, f"release '{r.name}' installs the driver (driver.enabled is not false) on pool '{p.name}', whose nodes already have one: set driver.enabled=false"))
            for obj, version in declared:
                out.append((r.urn, f"release '{r.name}' installs the driver on hosts declared to run driver {version} ('{obj.name}'): set driver.enabled=false"))
        if toolkit_on:
            for p in with_driver:
                if p.platform == "eks":
                    out.append((r.urn, f"release '{r.name}' installs the container toolkit on pool '{p.name}', whose NVIDIA AMI ships it: set toolkit.enabled=false"))
        if not driver_on:
            for p in without:
                out.append((p.urn, f"pool '{p.name}' has no preinstalled driver and release '{r.name}' does not install one (driver.enabled=false): its GPUs are unusable"))
    return out


POLICY = StackValidationPolicy(
    name=NAME,
    description="The GPU Operator installs the driver and toolkit exactly where the nodes do not already have them.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema(),
)
