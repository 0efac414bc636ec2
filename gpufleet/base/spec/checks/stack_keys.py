"""What a stack file may hold besides the `gpufleet:` keys (issue 48): an allow-list, each value checked by shape.

Whatever else a stack file sets reaches the deploy without passing gpufleet's checks. A provider key configures the
default provider every cloud resource and invoke of the program goes through: `aws:endpoints`, `aws:insecure`,
`aws:assumeRoleWithWebIdentity`, `gcp:*CustomEndpoint`, Azure's endpoint keys send the deployer's signed requests and
tokens where the file says. A top-level key steers the Pulumi CLI itself. So only what gpufleet needs is accepted;
everything else is refused naming the key, never echoing its value (run by gpufleet/base/spec/__init__.py for every
config key, and by gpufleet/app/plan/stackfile.py and gpufleet/app/program.py for the file's top level).

Top level. Pulumi's stack settings file holds `secretsprovider`, `encryptedkey`, `encryptionsalt`, `config` and
`environment` (pulumi.com/docs/iac/concepts/projects/stack-settings-file, "Attributes"):
- `config`: judged key by key (below).
- `secretsprovider`, `encryptedkey`, `encryptionsalt`: the CLI writes them for the passphrase and cloud-KMS secrets
  providers (a passphrase stack with a secret needs its salt here), so they are accepted in the shapes the CLI writes
  and nothing more: a KMS URL may not carry query parameters beyond `region` (gocloud.dev's AWS URL opener also takes
  `endpoint` and `profile`, google/go-cloud aws/aws.go `V2ConfigFromURLParams`: another host or other credentials), an
  Azure Key Vault must be under a Key Vault DNS suffix, and a salt or data key equal to another stack's in the same
  folder is refused (a copied salt makes the other stack's `secure:` values decrypt here). Any change to them is a
  finding of the review (gpufleet/app/review/config.py).
- `environment` (a Pulumi ESC import): refused. Its `pulumiConfig` and `environmentVariables` reach the program and
  the providers without passing this file, its checks or its review.
- anything else: refused (not a stack settings key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional
from urllib.parse import parse_qsl, urlsplit

from gpufleet.base.spec import ids
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.text import control_problem

NAMESPACE = "gpufleet"

# Config namespaces a program accepts because its code says so, never a stack file: the e2e tier's seam
# (tests/e2e/seam.py) adds its own. Keys there are the program's own business; no provider reads them.
PROGRAM_NAMESPACES: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProviderKey:
    key: str
    pattern: str
    shape: str
    """What the value must look like, as the refusal says it."""
    source: str


# The provider keys a gpufleet stack needs, each read by gpufleet or the only setting the platform's provider takes
# from the stack (the region it works in, the project or subscription it bills).
PROVIDER_KEYS = {k.key: k for k in (
    # AWS region codes: `us-east-1`, `us-gov-west-1`, `cn-northwest-1`, `ap-southeast-7`, `us-isob-east-1`
    # (AWS General Reference, "AWS Regions": area, sub-area(s), number). Read by the EKS checks and components.
    ProviderKey("aws:region", r"[a-z]{2}(-[a-z]+){1,2}-[0-9]{1,2}", "an AWS region code such as us-east-1",
                "docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html"),
    ProviderKey("gcp:project", ids.GCP_PROJECT.strip("^$"), "a Google Cloud project ID such as my-gpu-project",
                "cloud.google.com/resource-manager/docs/creating-managing-projects"),
    # Compute Engine regions and zones: `us-central1`, `northamerica-northeast2`, `us-central1-a`
    # (cloud.google.com/compute/docs/regions-zones).
    ProviderKey("gcp:region", r"[a-z]+-[a-z]+[0-9]{1,2}", "a Google Cloud region such as us-central1",
                "cloud.google.com/compute/docs/regions-zones"),
    ProviderKey("gcp:zone", r"[a-z]+-[a-z]+[0-9]{1,2}-[a-z]", "a Google Cloud zone such as us-central1-a",
                "cloud.google.com/compute/docs/regions-zones"),
    # Azure: the location names `az account list-locations` prints (eastus, westeurope), as cluster.aks.location
    # takes them, and subscription IDs, which are GUIDs (learn.microsoft.com/azure/azure-portal/get-subscription-tenant-id).
    ProviderKey("azure:location", r"[a-z][a-z0-9]{1,39}", "an Azure location name such as eastus",
                "learn.microsoft.com/cli/azure/account#az-account-list-locations"),
    ProviderKey("azure:subscriptionId", r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}",
                "an Azure subscription ID (a GUID)",
                "learn.microsoft.com/azure/azure-portal/get-subscription-tenant-id"),
    # The same two under Azure Native's namespace, the provider AKS stacks use since issue 53 (pulumi.com/registry/
    # packages/azure-native/installation-configuration: `location`, `subscriptionId`). The azure: pair stays allowed for
    # stack files written for the classic provider.
    ProviderKey("azure-native:location", r"[a-z][a-z0-9]{1,39}", "an Azure location name such as eastus",
                "learn.microsoft.com/cli/azure/account#az-account-list-locations"),
    ProviderKey("azure-native:subscriptionId", r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}",
                "an Azure subscription ID (a GUID)",
                "learn.microsoft.com/azure/azure-portal/get-subscription-tenant-id"),
)}

# Provider keys that hold a credential (each provider's configuration reference on the Pulumi registry:
# pulumi.com/registry/packages/aws/installation-configuration `accessKey`, `secretKey`, `token`;
# .../gcp/installation-configuration `credentials`, `accessToken`; .../azure-native and .../azure `clientSecret`,
# `clientCertificatePassword`). Refused like every key outside the list, with the reason a credential has.
CREDENTIAL_KEYS = (
    "aws:accessKey", "aws:secretKey", "aws:token", "gcp:credentials", "gcp:accessToken",
    "azure-native:clientSecret", "azure-native:clientCertificatePassword", "azure:clientSecret",
    "azure:clientCertificatePassword",
)


def shown_key(key: str, limit: int = 60) -> str:
    """A key as a message names it: control characters escaped, at most `limit` characters."""
    shown = key.encode("unicode_escape").decode("ascii") if control_problem(key) else key
    return shown if len(shown) <= limit else shown[:limit] + f"... ({len(key)} characters)"


def _allowed_list() -> str:
    return ", ".join(["gpufleet:*", *PROVIDER_KEYS])


def config_key_problem(stack: str, key: str, value: Any, secret: bool) -> Optional[Problem]:
    """The problem of one config key outside `gpufleet:`, or None when it is allowed and well shaped. The value is
    never echoed: a refused key's value is what an attacker chose, an allowed key's failed its shape."""
    namespace = key.partition(":")[0]
    if namespace == NAMESPACE or namespace in PROGRAM_NAMESPACES:
        return None
    shown = shown_key(key)
    if key in CREDENTIAL_KEYS:
        return Problem(stack, shown, "a credential in the stack file: gpufleet reads no provider credentials from it; "
                       "remove it and let the provider find credentials itself (environment, profile, workload identity)")
    rule = PROVIDER_KEYS.get(key)
    if rule is None:
        return Problem(stack, shown, "not a key gpufleet reads: outside `gpufleet:` a stack file may set only "
                       f"{_allowed_list()}; a provider setting here would reach every request the deploy makes "
                       "(docs/security.md, \"The stack file outside gpufleet:\"); remove it")
    if secret:
        return Problem(stack, shown, f"must be plain text, {rule.shape}: a secret value cannot be checked")
    if not isinstance(value, str) or not re.fullmatch(rule.pattern, value):
        return Problem(stack, shown, f"must be {rule.shape} ({rule.source})")
    return None


def config_problems(stack: str, config: Mapping[str, Any], secret_keys: Iterable[str] = ()) -> list[Problem]:
    """Every config key outside `gpufleet:` that is not allowed, or not in its shape."""
    secrets = set(secret_keys)
    found = (config_key_problem(stack, str(k), v, k in secrets) for k, v in config.items())
    return [p for p in found if p is not None]


# --- the file's top level ---------------------------------------------------------------------------------------

SECRETS_SETTINGS = ("secretsprovider", "encryptedkey", "encryptionsalt")
_B64 = r"[A-Za-z0-9+/]+={0,2}"
# The passphrase provider's salt: `v1:<salt>:v1:<nonce>:<ciphertext>` (what `pulumi stack init` writes; pulumi/pulumi
# pkg/secrets/passphrase: "v1:" + base64(salt) + ":" + the encrypted check value).
SALT = rf"v1:{_B64}:v1:{_B64}:{_B64}"
# Azure Key Vault DNS suffixes (learn.microsoft.com/azure/key-vault/general/about-keys-secrets-certificates,
# "Object identifiers": public, China, US Government).
KEY_VAULT_SUFFIXES = (".vault.azure.net", ".vault.azure.cn", ".vault.usgovcloudapi.net")
# The URL forms `pulumi stack change-secrets-provider` documents (pulumi.com/docs/iac/cli/commands/
# pulumi_stack_change-secrets-provider): awskms://<key id or alias>?region=..., azurekeyvault://<vault>/keys/<key>,
# gcpkms://projects/<p>/locations/<l>/keyRings/<r>/cryptoKeys/<k>, hashivault://<key>.
_KMS_PATH = {
    "awskms": r"[A-Za-z0-9:/_-]{1,256}",
    "azurekeyvault": r"[a-z0-9-]{3,24}\.vault\.(azure\.net|azure\.cn|usgovcloudapi\.net)/keys/[A-Za-z0-9-]{1,127}(/[0-9a-f]{32})?",
    "gcpkms": r"projects/[a-z0-9.:-]{6,63}/locations/[a-z0-9-]{1,63}/keyRings/[A-Za-z0-9_-]{1,63}/cryptoKeys/[A-Za-z0-9_-]{1,63}",
    "hashivault": r"[A-Za-z0-9_.-]{1,128}",
}


def _secrets_provider_problem(value: Any) -> Optional[str]:
    allowed = "`passphrase`, `default` or a KMS URL as `pulumi stack change-secrets-provider` documents it"
    if not isinstance(value, str) or control_problem(value):
        return f"must be {allowed}"
    if value in ("passphrase", "default"):
        return None
    parts = urlsplit(value)
    path = _KMS_PATH.get(parts.scheme)
    if path is None or parts.fragment or not re.fullmatch(path, (parts.netloc + parts.path)):
        return f"must be {allowed}"
    query = parse_qsl(parts.query, keep_blank_values=True)
    extra = [k for k, _ in query if not (parts.scheme == "awskms" and k == "region")]
    if extra:
        return ("a KMS URL may carry only `region`: other parameters (`endpoint`, `profile`, ...) send the key "
                "requests elsewhere or with other credentials")
    if any(not re.fullmatch(PROVIDER_KEYS["aws:region"].pattern, v) for k, v in query):
        return "its `region` must be an AWS region code such as us-east-1"
    return None


def settings_problems(stack: str, doc: Mapping[str, Any],
                      siblings: Optional[Mapping[str, Mapping[str, Any]]] = None) -> list[Problem]:
    """Problems of a stack file's top-level keys other than `config`. `siblings`: the other stacks' top-level keys in
    the same folder (stack -> {key: value}), for the copied salt or data key."""
    problems = []
    for key, value in doc.items():
        key = str(key)
        if key == "config":
            continue
        shown = shown_key(key)
        if key == "environment":
            problems.append(Problem(stack, shown, "a Pulumi ESC environment import: its config and environment variables "
                                    "would reach the deploy without this file's checks or review; gpufleet reads its "
                                    "settings only from `config:`; remove it"))
        elif key not in SECRETS_SETTINGS:
            problems.append(Problem(stack, shown, "not a stack settings key gpufleet accepts (allowed at the top level: "
                                    f"config, {', '.join(SECRETS_SETTINGS)}); remove it"))
        elif key == "secretsprovider":
            problem = _secrets_provider_problem(value)
            if problem:
                problems.append(Problem(stack, shown, problem))
        elif not isinstance(value, str) or not re.fullmatch(SALT if key == "encryptionsalt" else _B64, value) \
                or len(value) > 4096:
            what = "the passphrase provider's salt as `pulumi stack init` writes it" if key == "encryptionsalt" else \
                "the base64 data key a KMS secrets provider writes"
            problems.append(Problem(stack, shown, f"must be {what}"))
        else:
            same = sorted(other for other, keys in (siblings or {}).items() if other != stack and keys.get(key) == value)
            if same:
                problems.append(Problem(stack, shown, f"also the {key} of stack '{same[0]}': a copied one lets that stack's "
                                        "`secure:` values decrypt here; give each stack its own (`pulumi stack "
                                        "change-secrets-provider` writes a new one)"))
    return problems
