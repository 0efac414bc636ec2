"""gpu-cuda-minor-version-compat (advisory): a CUDA version the GPU nodes' driver runs only through CUDA
minor-version compatibility (driver below the toolkit's own minimum, at or above the CUDA major's minimum).

gpu-driver-cuda-alignment passes such a stack; this rule says what breaks in that mode: PTX JIT of code built
for a newer toolkit and NVRTC-compiled kernels fail, and APIs newer than the driver return
cudaErrorCallRequiresNewerDriver (CUDA compatibility guide, minor-version compatibility; gpufleet/base/catalog/
drivers.yaml `cuda_minor_compat_min_driver`). Inputs: the same declared CUDA versions and driver versions as
gpu-driver-cuda-alignment (its `declared_cuda` and `drivers`).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, StackValidationPolicy

from gpufleet.base import catalog
from gpufleet.policies import inputs as I
from gpufleet.policies.rules.gpu_driver_cuda_alignment import declared_cuda, drivers

NAME = "gpu-cuda-minor-version-compat"


def check(resources: list, config) -> list[tuple[str, str]]:
    resources = I.listed(resources)  # keeps the servicer's index
    cuda = declared_cuda(resources, config)
    if not cuda:
        return []
    known, _ = drivers(resources, config)
    out = []
    for urn, version, what in known:
        for c in cuda:
            try:
                support = catalog.cuda_support(version, c)
            except ValueError:
                continue
            if support.limited:
                out.append((urn, f"{what}, which runs CUDA {c} only through minor-version compatibility: {support.why}"))
    return out


POLICY = StackValidationPolicy(
    name=NAME,
    description="A CUDA version the driver runs only through minor-version compatibility (names what breaks).",
    enforcement_level=EnforcementLevel.ADVISORY,
    validate=I.stack_validator(check),
    config_schema=PolicyConfigSchema(
        properties={
            "cudaVersions": {"type": "array", "items": {"type": "string"}, "description": "CUDA versions the workloads use"},
            "preinstalledDriverVersion": {"type": "string", "description": "driver version on hosts/images with a preinstalled driver"},
            "exemptions": I.exemptions_property(),
        }
    ),
)
