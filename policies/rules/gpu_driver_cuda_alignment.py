"""gpu-driver-cuda-alignment: the driver GPU nodes run supports every CUDA version the stack declares.

Declared CUDA versions reach the pack two ways (their union counts):
- the `gpufleet.io/cuda-versions: "12.8,13.0"` annotation on a Kubernetes object (gpufleet writes it on
  the GPU Operator's namespace from `gpufleet:workloads.cudaVersions`);
- policy config `cudaVersions: ["12.8"]` (any Pulumi program).
The driver comes from the GPU Operator release (values.driver.version, else the release's default)
or, where the operator's driver is off, from the preinstalled version: the
`gpufleet.io/preinstalled-driver-version` annotation or policy config `preinstalledDriverVersion`.
A preinstalled driver of unknown version (EKS NVIDIA AMIs, GKE-installed drivers, hosts) cannot be
judged: the policy says so (not applicable, with the reason) unless `requireKnownDriver` is true.

ROCm (AMD pools, issue 17) the same way: declared by the `gpufleet.io/rocm-versions` annotation (gpufleet writes it
on the AMD GPU Operator's namespace from `gpufleet:workloads.rocmVersions`) or policy config `rocmVersions`; the
driver is the AMD GPU Driver a DeviceConfig has the operator load (spec.driver.version) or the one declared with
`gpufleet.io/amd-driver-version`; judged against AMD's user-space / driver support matrix
(gpufleet/base/catalog/amd_gpus.yaml `driver_rocm`).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, StackValidationPolicy

from gpufleet.base import catalog
from gpufleet.base.catalog import amd
from gpufleet.policies import amd_inputs as A
from gpufleet.policies import inputs as I

NAME = "gpu-driver-cuda-alignment"


def declared_cuda(resources: list, config) -> list[str]:
    found = [str(v) for v in I.items(I.get(config, "cudaVersions"))]
    for _, value in I.annotations(resources, I.CUDA_VERSIONS_ANNOTATION):
        found += [v.strip() for v in value.split(",") if v.strip()]
    return sorted(set(found), key=lambda v: catalog.parse_version(v) if v.replace(".", "").isdigit() else (0,))


def preinstalled_version(resources: list, config) -> tuple[str, str, str] | None:
    """(version, where it was declared, URN of the declaring resource or "") of the preinstalled driver."""
    value = I.text(I.get(config, "preinstalledDriverVersion"))
    if value:
        return value, "policy config preinstalledDriverVersion", ""
    for r, v in I.annotations(resources, I.PREINSTALLED_DRIVER_ANNOTATION):
        return v, f"annotation {I.PREINSTALLED_DRIVER_ANNOTATION} on '{r.name}'", r.urn
    return None


def preinstalled_pools(resources: list) -> list[str]:
    """Names of pools whose nodes come with a driver (EKS NVIDIA AMIs, GKE driver installation), found once
    per stack analysis (gpu-cuda-minor-version-compat asks too)."""
    return I.shared(resources, "preinstalled_pools", lambda: _preinstalled_pools(resources))


def _preinstalled_pools(resources: list) -> list[str]:
    return [pool.name for pool in I.gpu_pools(resources) if pool.kind.driver_version_unknown(pool.inputs)]


def drivers(resources: list, config) -> tuple[list[tuple[str, str, str]], list[str]]:
    """([(urn, version, what)], [why a driver version is unknown])."""
    known: list[tuple[str, str, str]] = []
    unknown: list[str] = []
    declared = preinstalled_version(resources, config)
    releases = catalog.operator_releases()
    for r in I.operator_releases(resources):
        if I.exemption(NAME, r.name, r.urn, r.props, config):
            continue
        driver = I.get(r.props, "values", "driver")
        if I.get(driver, "enabled", default=True) is False:
            continue
        version = I.text(I.get(driver, "version")) or getattr(releases.get(I.get(r.props, "version")), "default_driver", None)
        if version:
            known.append((r.urn, version, f"GPU Operator release '{r.name}' installs driver {version}"))
        else:
            unknown.append(f"release '{r.name}' sets no driver.version and its chart version is not in the catalog")
    if declared:
        known.append((declared[2], declared[0], f"preinstalled driver {declared[0]} ({declared[1]})"))
    else:
        pools = preinstalled_pools(resources)
        if pools:
            unknown.append(f"pools {', '.join(pools)} run a preinstalled driver of undeclared version")
        if any(I.get(r.props, "values", "driver", "enabled") is False for r in I.operator_releases(resources)):
            unknown.append("the GPU Operator's driver is off and the hosts' driver version is not declared")
    return known, unknown


def declared_rocm(resources: list, config) -> list[str]:
    found = [str(v) for v in I.items(I.get(config, "rocmVersions"))]
    for _, value in I.annotations(resources, A.ROCM_VERSIONS_ANNOTATION):
        found += [v.strip() for v in value.split(",") if v.strip()]
    return sorted(set(found))


def amd_drivers(resources: list, config) -> tuple[list[tuple[str, str, str]], list[str]]:
    """([(urn, AMD GPU Driver version, what)], [why it is unknown]) of the AMD pools' drivers."""
    known = []
    for r in A.device_configs(resources):
        if I.exemption(NAME, r.name, r.urn, r.props, config):
            continue
        version = A.driver_of(r.props)
        if version:
            known.append((r.urn, version, f"DeviceConfig '{r.name}' loads AMD GPU Driver {version}"))
    if not known:
        for r, version in I.annotations(resources, A.AMD_DRIVER_ANNOTATION):
            known.append((r.urn, version, f"AMD GPU Driver {version} (annotation {A.AMD_DRIVER_ANNOTATION} on '{r.name}')"))
    if not known:
        return [], [f"the AMD GPU Driver version is not declared (annotation {A.AMD_DRIVER_ANNOTATION}, or a DeviceConfig's driver.version)"]
    return known, []


def check_rocm(resources: list, config) -> tuple[list[tuple[str, str]], list[str]]:
    rocm = declared_rocm(resources, config)
    if not rocm:
        return [], []
    known, unknown = amd_drivers(resources, config)
    out = []
    for urn, version, what in known:
        for r in rocm:
            try:
                ok, why = amd.driver_runs_rocm(version, r)
            except ValueError:
                ok, why = False, f"'{version}' is not a dotted AMD GPU Driver version"
            if not ok:
                out.append((urn, f"{what}, which cannot run ROCm {r}: {why}"))
    return out, unknown


def check(resources: list, config) -> tuple[list[tuple[str, str]], list[str]]:
    """([(urn, message)], [reasons the policy could not judge])."""
    resources = I.listed(resources)
    rocm_out, rocm_unknown = check_rocm(resources, config)
    cuda_out, cuda_unknown = _check_cuda(resources, config)
    return cuda_out + rocm_out, cuda_unknown + rocm_unknown


def _check_cuda(resources: list, config) -> tuple[list[tuple[str, str]], list[str]]:
    cuda = declared_cuda(resources, config)
    if not cuda:
        return [], []
    known, unknown = drivers(resources, config)
    out = []
    for urn, version, what in known:
        try:
            verdicts = [(c, *catalog.driver_runs_cuda(version, c)) for c in cuda]
        except ValueError:
            out.append((urn, f"{what}: '{version}' is not a dotted driver version"))
            continue
        for c, ok, why in verdicts:
            if not ok:
                out.append((urn, f"{what}, which cannot run CUDA {c}: {why}"))
    hint = (
        f"declare it with the {I.PREINSTALLED_DRIVER_ANNOTATION} annotation or policy config "
        "preinstalledDriverVersion"
    )
    return out, [f"{u}; {hint}" for u in unknown]


def _validate(args, report_violation) -> None:
    config = I.config_of(args)
    violations, unknown = check(args.resources, config)
    for urn, message in violations:
        report_violation(message, urn or None)
    if unknown and I.get(config, "requireKnownDriver") is True:
        for reason in unknown:
            report_violation(f"cannot check CUDA alignment: {reason}", None)
    elif unknown and not violations:
        args.not_applicable("; ".join(unknown))


POLICY = StackValidationPolicy(
    name=NAME,
    description="The driver GPU nodes run supports every CUDA (NVIDIA) and ROCm (AMD) version the stack declares.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_validate,
    config_schema=PolicyConfigSchema(
        properties={
            "cudaVersions": {"type": "array", "items": {"type": "string"}, "description": "CUDA minor versions the workloads use"},
            "rocmVersions": {"type": "array", "items": {"type": "string"}, "description": "ROCm minor versions the workloads on AMD pools use"},
            "preinstalledDriverVersion": {"type": "string", "description": "driver version on hosts/images with a preinstalled driver"},
            "exemptions": I.exemptions_property(),
            "requireKnownDriver": {"type": "boolean", "description": "violate (instead of not-applicable) when a driver version is unknown"},
        }
    ),
)
