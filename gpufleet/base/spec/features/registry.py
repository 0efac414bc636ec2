"""Private registries and air-gapped sites (`gpufleet:registry`, `gpufleet:cluster.k3s.airgap`; issue 37)."""

from typing import Literal, Optional

from pydantic import Field

from gpufleet.base.spec.base import Model

# A registry mirror: `host[:port]` and an optional path, lowercase (OCI distribution-spec: a repository name's path
# components are `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`, github.com/opencontainers/distribution-spec spec.md "Pulling
# manifests"; the host a DNS name, as docker's reference grammar reads the first component when it holds a '.' or
# ':', distribution/reference reference.go). gpufleet writes every image as `<mirror>/<source registry>/<path>`.
REGISTRY_MIRROR = (
    r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+(:[0-9]{1,5})?"
    r"(/[a-z0-9]+([._-][a-z0-9]+)*){0,8}$"
)
# A registry user name (basic auth): letters, digits and `._@-`, never a leading dash.
REGISTRY_USER = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$"
# Where the k3s release files are: an https:// URL of a directory, or an absolute path on every host.
ARTIFACT_SOURCE = r"^(https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%+-]+)*/?|/[A-Za-z0-9._+-]+(/[A-Za-z0-9._+-]+)*/?)$"
SHA256 = r"^[0-9a-f]{64}$"
# Where every Helm chart comes from instead of its own repository: an OCI registry path (`oci://host[:port][/path]`,
# lowercase as REGISTRY_MIRROR; Helm pulls `oci://<path>/<chart name>:<version>`, helm.sh/docs/topics/registries), or
# an absolute directory on the machine that runs `pulumi up`, holding each chart as `<name>-<version>.tgz`.
CHART_SOURCE = (
    r"^(oci://[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+(:[0-9]{1,5})?"
    r"(/[a-z0-9]+([._-][a-z0-9]+)*){0,8}|/[A-Za-z0-9_+-][A-Za-z0-9._+-]*(/[A-Za-z0-9_+-][A-Za-z0-9._+-]*)*)/?$"
)
# An ECR private registry host (docs.aws.amazon.com/AmazonECR/latest/userguide/Registries.html: "The URL for your
# default private registry is https://aws_account_id.dkr.ecr.region.amazonaws.com").
ECR_HOST = r"^[0-9]{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com$"
# An Artifact Registry Docker repository: `<location>-docker.pkg.dev/<project>/<repository>`
# (docs.cloud.google.com/artifact-registry/docs/docker/names: "LOCATION-docker.pkg.dev/PROJECT-ID/REPOSITORY/IMAGE").
ARTIFACT_REGISTRY = r"^[a-z0-9-]+-docker\.pkg\.dev/[a-z][a-z0-9-]{4,28}[a-z0-9]/[a-z0-9]+([._-][a-z0-9]+)*(/.*)?$"


class RegistrySpec(Model):
    """Where every image comes from: one mirror registry instead of the public ones."""

    mirror: Optional[str] = Field(default=None, pattern=REGISTRY_MIRROR)
    """Mirror registry, `host[:port][/path]`: every image of every chart and object gpufleet installs is pulled as
    `<mirror>/<source registry>/<repository>:<tag>` (e.g. `nvcr.io/nvidia/driver:595.91.07` as
    `registry.example.com/gpufleet/nvcr.io/nvidia/driver:595.91.07`); `gpufleet images <stack>` lists each pair for a
    mirroring tool. Default: none, images from their public registries."""
    charts: Optional[str] = Field(default=None, pattern=CHART_SOURCE)
    """Where every Helm release takes its pinned chart (name and version as pinned) instead of the chart's own
    repository: `oci://host[:port][/path]` (an OCI registry the charts were pushed to with `helm push`; Helm pulls
    `oci://<path>/<name>:<version>`), or an absolute directory on the machine that runs `pulumi up` holding each chart
    as `<name>-<version>.tgz` (`gpufleet charts fetch --stack <stack> --dir <directory>` fills it). A file is checked
    against the sha256 the pin records before Helm is given it. Default: none, each chart's own repository."""
    username: Optional[str] = Field(default=None, pattern=REGISTRY_USER)
    """k3s: the mirror's basic-auth user; the password is the secret config value `gpufleet:registryPassword`
    (`pulumi config set --secret`), written only into each node's /etc/rancher/k3s/registries.yaml. EKS nodes pull
    from an ECR mirror with their node role instead. Default: none, anonymous pulls."""


class K3sArtifactsSha256(Model):
    """The sha256 of each k3s release file, as the release's sha256sum-<arch>.txt lists it."""

    k3s: Optional[str] = Field(default=None, pattern=SHA256)
    """sha256 of the k3s binary (`k3s` on amd64, `k3s-arm64` on arm64)."""
    images: Optional[str] = Field(default=None, pattern=SHA256)
    """sha256 of `k3s-airgap-images-<arch>.tar.zst`."""
    install_script: Optional[str] = Field(default=None, pattern=SHA256)
    """sha256 of `install.sh` at the release's tag (k3s publishes no sum for it: compute it from the tag's file)."""


class K3sAirgapSpec(Model):
    """k3s without internet: the release files from a URL or path you give, each checked against its sha256."""

    source: str = Field(pattern=ARTIFACT_SOURCE)
    """A directory holding the pinned release's files under their release names (`install.sh`, `k3s` or
    `k3s-arm64`, `k3s-airgap-images-<arch>.tar.zst`): an https:// URL reachable from the hosts, or an absolute path
    present on every host."""
    arch: Literal["amd64", "arm64"] = "amd64"
    """The hosts' architecture; default: amd64."""
    sha256: K3sArtifactsSha256 = K3sArtifactsSha256()
    """The sha256 of each file; all three are required (an unverified file is refused)."""
