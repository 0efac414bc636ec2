"""gpufleet:gpuOperator — the NVIDIA GPU Operator's release and driver."""

from typing import Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from gpufleet.base import catalog, versions
from gpufleet.base.spec.base import Model

DRIVER_VERSION = r"^\d{3}\.\d{1,3}(\.\d{1,3})?$"


class DriverSpec(Model):
    """Where the NVIDIA driver on GPU nodes comes from."""

    source: Literal["operator", "preinstalled"] = "operator"
    """operator: the GPU Operator installs the driver container. preinstalled: the host/image already has one."""
    version: Optional[str] = Field(default=None, pattern=DRIVER_VERSION)
    """operator: driver version to install (default: the release's default). preinstalled: the version the hosts run,
    so version alignment can be checked."""
    precompiled: bool = False
    """operator: run NVIDIA's precompiled driver container for the version's branch (chart `driver.usePrecompiled`,
    `driver.version` = the branch) instead of compiling the kernel modules on every node at first boot. NVIDIA
    publishes them for x86_64 Ubuntu 22.04 and 24.04 hosts with the aws, azure, generic, nvidia and oracle kernel
    variants, for its most recent long-term-support branch ("Precompiled Driver Containers", GPU Operator docs);
    docs/cold-start.md. Default: off, the driver is compiled on the node."""
    repo_config: Optional[str] = Field(default=None, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=253)
    """operator, compiled on the node: the name of a ConfigMap in the GPU Operator's namespace holding the OS package
    repository files the driver container builds against (chart `driver.repoConfig.configMapName`; GPU Operator docs,
    "Install in Air-gapped Environments", local package repository). Required with `gpufleet:registry.mirror` unless
    `precompiled`: the compiling driver container downloads the kernel headers from the OS repositories. You create the
    ConfigMap. Default: none, the image's public repositories."""


class GpuOperatorSpec(Model):
    """The NVIDIA GPU Operator, installed by Helm."""

    enabled: bool = True
    """Install the operator (device plugin, toolkit, DCGM exporter, NFD and the driver if asked)."""
    version: str = Field(default=versions.GPU_OPERATOR.version, validate_default=True)
    """Chart version; default: the pinned release. Only releases the catalog knows are accepted."""
    driver: DriverSpec = DriverSpec()
    """Driver source and version."""

    @field_validator("version")
    @classmethod
    def _known_release(cls, v: str, info: ValidationInfo) -> str:
        if v not in catalog.operator_releases():
            raise ValueError(f"unknown GPU Operator release '{v}' (allowed: {', '.join(catalog.operator_releases())})")
        return v

    def driver_version(self) -> Optional[str]:
        """The driver version GPU nodes will run, when known."""
        if self.driver.version:
            return self.driver.version
        if self.driver.source == "operator":
            return catalog.operator_release(self.version).default_driver
        return None
