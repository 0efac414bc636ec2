"""The shapes of the cloud and Kubernetes identifiers a stack file names, as pydantic `pattern`s.

Each is matched against the whole value: pydantic compiles `pattern` with Rust's regex crate and the JSON Schema
gpufleet exports reads it as ECMA-262, and in both `$` (without the multi-line flag) matches only at the end of the
text, never before a trailing newline as Python's `re` does (tests/unit/test_hostile_values.py feeds one to every key).
"""

# A Pulumi stack name: Pulumi's own rule (pulumi/pulumi pkg/backend/diy/backend.go `validateStackName`:
# `^[A-Za-z0-9_.-]{1,100}$`). The spec (`dependsOn`), the review (file names, markers) and the fleet commands all
# read this one pattern.
STACK_NAME = r"^[A-Za-z0-9._-]{1,100}$"
# Compute Engine resource names (networks, subnetworks, secondary ranges): RFC 1035 labels, at most 63 characters
# (cloud.google.com/compute/docs/naming-resources#resource-name-format).
GCE_NAME = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
# A network or subnetwork: its name, or its (partial or full) self link
# (cloud.google.com/compute/docs/reference/rest/v1/subnetworks: `projects/{project}/regions/{region}/subnetworks/...`).
GCE_NAME_OR_LINK = (
    r"^((https://www\.googleapis\.com/compute/v1/)?projects/[a-z0-9.:-]+/(global|regions/[a-z0-9-]+)/"
    r"(networks|subnetworks)/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
)
# Project IDs: 6-30 lowercase letters, digits and hyphens, a letter first, not a hyphen last
# (cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin); legacy domain-scoped IDs
# carry `example.com:` first.
GCP_PROJECT = r"^([a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$"
# Service account emails: user-managed `<id>@<project>.iam.gserviceaccount.com` and the Compute Engine default
# `<number>-compute@developer.gserviceaccount.com` (cloud.google.com/iam/docs/service-account-types).
GCP_SERVICE_ACCOUNT = r"^[a-z0-9][a-z0-9._-]{0,99}@[a-z0-9][a-z0-9.-]*\.gserviceaccount\.com$"
# Machine types: predefined (`a3-highgpu-8g`, `e2-standard-4`) and custom (`n2-custom-8-32768`)
# (cloud.google.com/compute/docs/machine-resource).
GCE_MACHINE_TYPE = r"^[a-z0-9]+(-[a-z0-9]+)+$"
# EC2 instance types: `<family><generation><attributes>.<size>`, e.g. m7i.xlarge, p5.48xlarge, u-6tb1.metal
# (docs.aws.amazon.com/ec2/latest/instancetypes/instance-type-names.html).
EC2_INSTANCE_TYPE = r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$"
# Display names (authorized networks, maintenance exclusions): letters, digits, spaces and `._-`, at most 63. The
# GKE API takes any string; gpufleet keeps what reaches a preview or a review comment plain.
DISPLAY_NAME = r"^[A-Za-z0-9]([A-Za-z0-9._ -]{0,61}[A-Za-z0-9._-])?$"
# Linux sysctl names (`net.ipv4.tcp_rmem`) and values (numbers or words, space-separated: `4096 87380 16777216`).
SYSCTL_NAME = r"^[a-z0-9_]+(\.[a-z0-9_-]+)+$"
SYSCTL_VALUE = r"^[A-Za-z0-9._:/-]+( [A-Za-z0-9._:/-]+)*$"
# NFS mount options, each `name` or `name=value` (nfs(5): `nfsvers=4.1`, `hard`, `nconnect=8`, `sec=krb5p`).
MOUNT_OPTION = r"^[A-Za-z0-9][A-Za-z0-9_.-]*(=[A-Za-z0-9_.:/-]+)?$"
# A Kubernetes object name that is a DNS-1123 subdomain (StorageClass names; k8s.io/apimachinery IsDNS1123Subdomain).
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
# Linux network interface names: at most 15 characters (IFNAMSIZ 16 with the NUL, include/uapi/linux/if.h), no '/',
# ':' or whitespace (dev_valid_name, net/core/dev.c); gpufleet allows the characters names use in practice.
INTERFACE_NAME = r"^[A-Za-z0-9_.-]{1,15}$"
# EC2 placement group names: up to 255 ASCII characters (docs.aws.amazon.com/AWSEC2/latest/APIReference/
# API_CreatePlacementGroup.html, GroupName); gpufleet allows letters, digits and `._-`.
EC2_PLACEMENT_GROUP = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$"
# Zones of either cloud: AWS `us-east-1b` and local zones `us-west-2-lax-1a`, GCP `us-central1-a`.
ZONE = r"^[a-z0-9]+(-[a-z0-9]+)+$"
# An instance type of either cloud (EC2 `p5.48xlarge`, GCE `a3-highgpu-8g`).
INSTANCE_OR_MACHINE_TYPE = r"^[a-z0-9]+([.-][a-z0-9]+)+$"
# A Compute Engine reservation: its name, or `projects/<project>/reservations/<name>` for one shared from another
# project (cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations#shared-reservations).
GCE_RESERVATION = r"^(projects/[a-z0-9.:-]+/reservations/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
# A container image reference as a pod spec names it: registry host (optionally with a port), path components of
# lowercase letters and digits joined by `._-`, an optional tag and an optional sha256 digest (the distribution spec's
# grammar, github.com/distribution/reference `reference.go`, restricted to lowercase hosts). No space, quote, `$` or `;`
# can appear, and it never starts with `-`. At most 255 characters (the reference grammar's NameTotalLengthMax).
IMAGE_REF = (
    r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*"
    r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$"
)
# A Compute Engine image for a GKE secondary boot disk: `global/images/<name>` in the cluster's project, or
# `projects/<project>/global/images/<name>` (GKE "Use secondary boot disks to preload data or container images":
# `--secondary-boot-disk=disk-image=projects/PROJECT/global/images/IMAGE`); names are RFC 1035 labels.
GCE_DISK_IMAGE = r"^(projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/)?global/images/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
# An EBS snapshot id (EC2 API Reference, CreateSnapshot `SnapshotId`: `snap-` and 8 or 17 hex digits).
EBS_SNAPSHOT = r"^snap-([0-9a-f]{8}|[0-9a-f]{17})$"
# Where a model cache is filled from: an S3 or Cloud Storage prefix (bucket names: 3-63 lowercase letters, digits,
# `.-`), or a Hugging Face model repository `hf://<owner>/<name>` with an optional `@<revision>` (branch, tag or
# commit). Path characters are letters, digits and `._-/` only: the value reaches the prefetch Job as an environment
# variable and is always quoted there, and this shape keeps out what quoting should never have to handle.
MODEL_SOURCE = (
    r"^((s3|gs)://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/[A-Za-z0-9._-]+)*/?"
    r"|hf://[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}(@[A-Za-z0-9][A-Za-z0-9._-]{0,63})?)$"
)
# A Kubernetes storage quantity gpufleet accepts for claims: a whole number of Gi or Ti.
STORAGE_SIZE = r"^[1-9][0-9]{0,5}(Gi|Ti)$"
