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

AMD (issue 17): the AMD GPU Operator chart installs a DeviceConfig of its own unless `crds.defaultCR.install` is
false; next to the stack's DeviceConfigs it selects the same AMD nodes a second time (two drivers, two device
plugins advertising every GPU twice). Two DeviceConfigs with the same selector conflict the same way. And one
cluster runs one node-feature-discovery: the NVIDIA GPU Operator's (`nfd.enabled`) and the AMD chart's
(`node-feature-discovery.enabled`) both on means two NFD masters rewriting the same node labels.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, StackValidationPolicy

from gpufleet.policies import amd_inputs as A
from gpufleet.policies import inputs as I

NAME = "gpu-operator-driver-conflict"


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)
    pools = [p for p in I.gpu_pools(resources) if not I.pool_exemption(NAME, p, config)]
    with_driver = [p for p in pools if p.kind.driver_preinstalled(p.inputs)]
    without = [p for p in pools if p.kind.driver_absent(p.inputs)]
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
                if p.kind.toolkit_preinstalled:
                    out.append((r.urn, f"release '{r.name}' installs the container toolkit on pool '{p.name}', whose {p.kind.toolkit_preinstalled}"))
        if not driver_on:
            for p in without:
                out.append((p.urn, f"pool '{p.name}' has no preinstalled driver and release '{r.name}' does not install one (driver.enabled=false): its GPUs are unusable"))
    return out + _amd(resources, config)


def _amd(resources: list, config) -> list[tuple[str, str]]:
    out = []
    amd_releases = [r for r in A.releases(resources) if not I.exemption(NAME, r.name, r.urn, r.props, config)]
    configs = [r for r in A.device_configs(resources) if not I.exemption(NAME, r.name, r.urn, r.props, config)]
    for r in amd_releases:
        values = I.get(r.props, "values")
        if configs and I.get(values, "crds", "defaultCR", "install", default=True) is not False:
            out.append((r.urn, f"release '{r.name}' installs the chart's default DeviceConfig next to the stack's "
                               f"{', '.join(c.name for c in configs)}: both select the same AMD nodes; set crds.defaultCR.install=false"))
        if I.get(values, "node-feature-discovery", "enabled", default=True) is not False:
            for n in I.operator_releases(resources):
                if I.get(n.props, "values", "nfd", "enabled", default=True) is not False:
                    out.append((r.urn, f"releases '{r.name}' and '{n.name}' both run node-feature-discovery: one cluster runs one; "
                                       "set node-feature-discovery.enabled=false on the AMD GPU Operator"))
    seen: dict = {}
    for c in configs:
        selector = tuple(sorted(I.mapping(I.get(c.props, "spec", "selector")).items()))
        if selector in seen:
            out.append((c.urn, f"DeviceConfigs '{seen[selector]}' and '{c.name}' select the same nodes ({dict(selector)}): "
                               "each AMD node must be managed by one"))
        seen.setdefault(selector, c.name)
    return out


POLICY = StackValidationPolicy(
    name=NAME,
    description="The GPU Operators install the driver and toolkit exactly where the nodes do not already have them, once per node.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=I.stack_validator(check),
    config_schema=I.exemptions_schema(),
)
