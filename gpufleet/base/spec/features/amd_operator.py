"""gpufleet:amdGpuOperator — the AMD GPU Operator's release and driver, for AMD Instinct pools on k3s (issue 17)."""

from typing import Literal, Optional

from pydantic import Field, field_validator

from gpufleet.base import catalog, versions
from gpufleet.base.catalog import amd
from gpufleet.base.spec.base import Model

AMD_DRIVER_VERSION = r"^\d{1,2}\.\d{1,2}(\.\d{1,3})?$"
# AMD GPU Operator releases gpufleet knows (their chart values and DeviceConfig CRD are in ../shared/reference).
KNOWN_RELEASES = tuple(amd.operator_releases())


class AmdDriverSpec(Model):
    """Where the AMD GPU Driver (amdgpu) on AMD pools' hosts comes from."""

    source: Literal["inbox", "operator"] = "inbox"
    """inbox (default): the hosts already run an amdgpu driver (installed with amdgpu-install, or the kernel's);
    the operator leaves it alone (DeviceConfig spec.driver.enable false). operator: the operator builds and loads
    the driver through KMM (Kernel Module Management) at `version`."""
    version: Optional[str] = Field(default=None, pattern=AMD_DRIVER_VERSION)
    """operator: the AMD GPU Driver release to load, e.g. "30.30.3" (default: the chart's, versions.AMD_GPU_DRIVER_DEFAULT).
    inbox: the release the hosts run, so `workloads.rocmVersions` and the GPUs' driver floors can be checked
    (default: unknown, not checked)."""

    image: Optional[str] = Field(default=None, pattern=r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-zA-Z0-9_$]+([._-][a-zA-Z0-9_$]+)*)*$")
    """operator: the registry repository (no tag) KMM pushes the driver image it builds to, e.g.
    registry.example.com/amd/amdgpu_kmod. Default: the operator's, image-registry:5000/<namespace>/amdgpu_kmod, which
    needs a registry of that name in the cluster (DeviceConfig CRD, spec.driver.image)."""

    @field_validator("version")
    @classmethod
    def _known_line(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and amd.driver_line(v) not in amd.driver_rocm():
            raise ValueError(f"AMD GPU Driver '{v}' is not in the catalog's compatibility table (known release lines: "
                             f"{', '.join(amd.driver_rocm())})")
        return v


class AmdGpuOperatorSpec(Model):
    """The AMD GPU Operator (Helm chart gpu-operator-charts), installed when the stack has AMD pools."""

    version: str = Field(default=versions.AMD_GPU_OPERATOR.version, validate_default=True)
    """Chart version; default: the pinned release. Only releases gpufleet knows are accepted."""
    driver: AmdDriverSpec = AmdDriverSpec()
    """Driver source and version; default: the hosts' inbox driver."""

    @field_validator("version")
    @classmethod
    def _known_release(cls, v: str) -> str:
        if v not in KNOWN_RELEASES:
            raise ValueError(f"unknown AMD GPU Operator release '{v}' (allowed: {', '.join(KNOWN_RELEASES)})")
        return v

    def driver_version(self) -> Optional[str]:
        """The AMD GPU Driver the AMD pools' nodes will run, when known."""
        if self.driver.version:
            return self.driver.version
        if self.driver.source == "operator":
            return versions.AMD_GPU_DRIVER_DEFAULT
        return None


def is_amd(gpu: Optional[str]) -> bool:
    """Whether a catalog GPU model name is an AMD Instinct GPU."""
    model = catalog.gpu_models().get(gpu or "")
    return model is not None and model.amd
