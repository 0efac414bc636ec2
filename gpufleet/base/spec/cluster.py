"""gpufleet:cluster — the control plane: platform, Kubernetes version and the platform's own block."""

from typing import Optional

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from gpufleet.base import platforms, versions
from gpufleet.base.spec.base import DNS_LABEL, Model
from gpufleet.base.spec.platforms.aks import AksSpec
from gpufleet.base.spec.platforms.eks import EksSpec
from gpufleet.base.spec.platforms.existing import ExistingSpec
from gpufleet.base.spec.platforms.gke import GkeSpec
from gpufleet.base.spec.platforms.k3s import Host, K3sSpec
from gpufleet.base.spec.features.protection import ProtectionSpec

__all__ = ["ClusterSpec", "Host", "K3sSpec"]


class ClusterSpec(Model):
    """The control plane."""

    platform: str = Field(json_schema_extra=lambda schema: schema.update(enum=list(platforms.names())))
    """Where the control plane runs: eks | gke | aks | k3s, or existing: a cluster gpufleet does not create, reached
    through the secret `gpufleet:kubeconfig` (docs/existing-cluster.md); or a platform a plug-in registers
    (gpufleet/base/platforms)."""
    name: Optional[str] = Field(default=None, pattern=DNS_LABEL, max_length=40)
    """Cluster name and prefix of every child resource; default: the stack name. Renaming replaces the cluster."""
    kubernetes_version: str = Field(default=versions.KUBERNETES_DEFAULT, validate_default=True)
    """Kubernetes minor version, e.g. "1.34"."""
    k3s: Optional[K3sSpec] = Field(default=None, validate_default=True)
    """Required when platform is k3s."""
    eks: Optional[EksSpec] = Field(default=None, validate_default=True)
    """Required when platform is eks."""
    gke: Optional[GkeSpec] = Field(default=None, validate_default=True)
    """Required when platform is gke."""
    aks: Optional[AksSpec] = Field(default=None, validate_default=True)
    """Required when platform is aks."""
    existing: Optional[ExistingSpec] = Field(default=None, validate_default=True)
    """Required when platform is existing (may be empty: `existing: {}`): what the cluster costs beyond its pools."""
    protection: ProtectionSpec = ProtectionSpec()
    """Protect what holds state (control plane, secrets key, k3s servers and token, checkpoint claim) from
    `pulumi destroy` and replacement; default: on. Off needs a reason: `{enabled: false, reason: "..."}`."""

    @field_validator("platform")
    @classmethod
    def _known_platform(cls, v: str) -> str:
        known = platforms.names()
        if v not in known:
            quoted = [f"'{n}'" for n in known]
            # Worded as pydantic words a Literal miss, so the error shows the value as every other choice does.
            raise PydanticCustomError("literal_error", f"Input should be {', '.join(quoted[:-1])} or {quoted[-1]}")
        return v

    @field_validator("kubernetes_version")
    @classmethod
    def _version(cls, v: str, info: ValidationInfo) -> str:
        platform = info.data.get("platform")
        if platform is None:
            return v  # the platform itself was refused
        traits = platforms.get(platform).versions
        if traits.kubernetes_versions and v not in traits.kubernetes_versions:
            raise ValueError(f"'{v}' {traits.unknown_version} (allowed: {', '.join(traits.kubernetes_versions)})")
        return v

    @field_validator("k3s", "eks", "gke", "aks", "existing")
    @classmethod
    def _platform_block(cls, v, info: ValidationInfo):
        platform = info.data.get("platform")
        if platform != info.field_name or v is not None:
            return v
        needs = platforms.get(platform).keys.block
        if needs:
            raise ValueError(f"platform {platform} needs {needs}")
        return v
