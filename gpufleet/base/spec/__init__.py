"""The typed, validated model of a stack's `gpufleet:` config. The one place that knows the format.

`load_spec(stack, config, secret_keys)` takes config as Pulumi hands it to a program (keys
`namespace:key`, structured values as objects or JSON strings) and returns a `StackSpec`, or raises
`SpecError` listing every problem with the stack, key path, bad value and what is allowed.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Iterable, Optional

import pydantic
from pydantic import BaseModel

from gpufleet.base.spec.features.addon_checks import addons_checks
from gpufleet.base.spec.features.amd_operator import AmdDriverSpec, AmdGpuOperatorSpec
from gpufleet.base.spec.checks.catalog_checks import catalog_problems
from gpufleet.base.spec.cluster import ClusterSpec, Host, K3sSpec
from gpufleet.base.spec.checks import admission_checks, depth_checks
from gpufleet.base.spec.features import amd_checks, sharing_checks
from gpufleet.base.spec.features import sriov_checks
from gpufleet.base.spec.platforms import k3s_label_checks
from gpufleet.base.spec.features import image_checks, registry_checks
from gpufleet.base.spec.features import dra_checks
from gpufleet.base.spec.features import cold_start
from gpufleet.base.spec.features import topology_checks
from gpufleet.base.spec.features import serving as serving_checks
from gpufleet.base.spec.checks import compat_checks, disabled_checks, name_checks, upkeep_checks, network_checks, platform_keys, region_checks, value_checks
from gpufleet.base.spec.platforms import aks_checks
from gpufleet.base.spec.platforms.aks import AksPoolSpec, AksSpec
from gpufleet.base.spec.platforms.eks import EksSpec
from gpufleet.base.spec.platforms.eks_checks import eks_checks
from gpufleet.base.spec.errors import Problem, SpecError, format_path
from gpufleet.base.spec.platforms.existing import existing_checks
from gpufleet.base.spec.platforms.gke import GkePoolSpec, GkeSpec, gke_checks
from gpufleet.base.spec.features.operator import DriverSpec, GpuOperatorSpec
from gpufleet.base.spec.pools import NodePoolSpec, SharingSpec, Taint
from gpufleet.base.spec.features.observability_checks import observability_checks
from gpufleet.base.spec.features.reservation import reservation_checks
from gpufleet.base.spec.stack import StackSpec, WorkloadsSpec
from gpufleet.base.spec.text import control_problem, walk_strings

NAMESPACE = "gpufleet"
# Secret config keys the program reads directly (never part of the spec, never printed).
SECRET_KEYS = {
    "sshPrivateKey": "SSH private key for k3s hosts (set with `pulumi config set --secret`)",
    "etcdS3AccessKey": "k3s: access key of the etcd snapshot bucket (cluster.k3s.etcdSnapshots.s3), secret only",
    "etcdS3SecretKey": "k3s: secret key of the etcd snapshot bucket (cluster.k3s.etcdSnapshots.s3), secret only",
    "registryPassword": "k3s: password of the registry mirror's user (registry.username), secret only",
    "kubeconfig": "existing: the kubeconfig of the cluster (set with `pulumi config set --secret gpufleet:kubeconfig < kubeconfig`), secret only",
}
# Provider config keys that hold a credential (each provider's configuration reference on the Pulumi registry:
# pulumi.com/registry/packages/aws/installation-configuration `accessKey`, `secretKey`, `token`;
# .../gcp/installation-configuration `credentials` (a service account key file's contents or path), `accessToken`;
# .../azure-native/installation-configuration `clientSecret`, `clientCertificatePassword`). In plain text they sit
# readable in the repository: refused like every other plaintext secret, and never echoed.
PROVIDER_SECRETS = (
    "aws:accessKey", "aws:secretKey", "aws:token", "gcp:credentials", "gcp:accessToken",
    "azure-native:clientSecret", "azure-native:clientCertificatePassword", "azure:clientSecret",
)
# Secret keys a k3s stack needs when its etcd snapshots go to S3.
ETCD_S3_KEYS = ("etcdS3AccessKey", "etcdS3SecretKey")

__all__ = [
    "AksPoolSpec", "AksSpec", "AmdDriverSpec", "AmdGpuOperatorSpec", "ClusterSpec", "DriverSpec", "EksSpec", "GkePoolSpec", "GkeSpec", "GpuOperatorSpec", "Host", "K3sSpec",
    "NodePoolSpec", "Problem",
    "SharingSpec", "SpecError", "StackSpec", "Taint", "WorkloadsSpec", "NAMESPACE", "SECRET_KEYS",
    "load_spec", "spec_keys", "json_schema",
]


def spec_keys() -> dict[str, str]:
    """Top-level `gpufleet:` keys -> their description."""
    out = {}
    for name, field in StackSpec.model_fields.items():
        out[field.alias or name] = (field.description or "").split(" — ", 1)[-1]
    out.update(SECRET_KEYS)
    return out


def _decode(value: Any) -> Any:
    """Pulumi hands structured config to programs as JSON strings; files give objects."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def load_spec(stack: str, config: dict[str, Any], secret_keys: Iterable[str] = ()) -> StackSpec:
    """Validate the `gpufleet:` part of a stack's config; raise SpecError with every problem."""
    depth_checks.refuse_deep(stack, config, NAMESPACE, SECRET_KEYS)  # before any check walks a value
    secret_keys = set(secret_keys)
    allowed = spec_keys()
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    for full_key, value in config.items():
        namespace, _, key = full_key.partition(":")
        if full_key in PROVIDER_SECRETS and full_key not in secret_keys:
            problems.append(Problem(stack, full_key, "a credential in plain text: set it with `pulumi config set --secret "
                                    f"{full_key}`, or better leave it out and let the provider find credentials itself "
                                    "(environment, profile, workload identity)"))
        if namespace != NAMESPACE:
            continue
        if control_problem(key):
            problems.append(Problem(stack, f"{NAMESPACE}:{_shown(key)}", f"the key {control_problem(key)}"))
        elif key not in allowed:
            problems.append(Problem(stack, full_key, f"unknown key (allowed: {', '.join(allowed)}{_did_you_mean(key, allowed)})"))
        elif key not in SECRET_KEYS:
            data[key] = _decode(value)
    # Text first: a control character or an overlong string is refused before any other check echoes it.
    problems += [
        Problem(stack, format_path(NAMESPACE, tuple(_shown(p) if isinstance(p, str) else p for p in loc)),
                f"{problem}: '{_shown(text)}'")
        for key, value in data.items() for loc, problem, text in walk_strings(value, (key,))
    ]
    if problems:
        raise SpecError(stack, problems)
    if "cluster" not in data and not any(p.path.endswith(":cluster") for p in problems):
        problems.append(Problem(stack, f"{NAMESPACE}:cluster", "required key missing (it names the platform and control plane)"))
        raise SpecError(stack, problems)
    try:
        spec = StackSpec.model_validate(data)
    except pydantic.ValidationError as exc:
        problems += [_problem(stack, err) for err in exc.errors()]
        raise SpecError(stack, problems + _secret_checks(stack, data, config, secret_keys)) from None
    problems += _secret_checks(stack, data, config, secret_keys)
    problems += _cross_checks(stack, spec, config)
    if problems:
        raise SpecError(stack, problems)
    return spec


def _shown(text: str, limit: int = 60) -> str:
    """A refused string as an error shows it: control characters escaped, at most `limit` characters."""
    shown = text.encode("unicode_escape").decode("ascii") if control_problem(text) else text
    return shown if len(shown) <= limit else shown[:limit] + f"... ({len(text)} characters)"


def _problem(stack: str, err: dict) -> Problem:
    loc = tuple(err["loc"])
    path = format_path(NAMESPACE, loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        keys = _allowed_keys(loc[:-1])
        hint = _did_you_mean(str(loc[-1]), keys)
        return Problem(stack, path, f"unknown key (allowed: {', '.join(keys)}{hint})")
    if kind == "missing":
        return Problem(stack, path, "required key missing")
    message = err["msg"].removeprefix("Value error, ")
    value = err.get("input")
    if kind in ("value_error", "assertion_error") or isinstance(value, (dict, list)):
        return Problem(stack, path, message)
    return Problem(stack, path, message, value)


def _model_at(loc: tuple) -> Optional[type[BaseModel]]:
    """The spec model class at a key path (following list items and Optional)."""
    model: Any = StackSpec
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return None
        model = _inner_model(field.annotation)
        if model is None:
            return None
    return model


def _inner_model(annotation: Any) -> Optional[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _allowed_keys(loc: tuple) -> list[str]:
    model = _model_at(loc)
    return [f.alias or n for n, f in model.model_fields.items()] if model else []


def _did_you_mean(key: str, allowed: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(key, list(allowed), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _secret_checks(stack: str, data: dict, config: dict[str, Any], secret_keys: set[str]) -> list[Problem]:
    """Secret config keys the chosen platform needs (checked even when the rest does not validate)."""
    problems = []
    password = f"{NAMESPACE}:registryPassword"
    if password in config and password not in secret_keys:
        problems.append(Problem(stack, password, "must be a secret, not plain text: set it with `pulumi config set --secret`"))
    cluster = data.get("cluster")
    platform = cluster.get("platform") if isinstance(cluster, dict) else None
    kubeconfig = f"{NAMESPACE}:kubeconfig"
    if platform == "existing":
        # The kubeconfig holds the cluster's credentials: secret only, and never echoed (the value is not shown).
        if kubeconfig not in config:
            problems.append(Problem(stack, kubeconfig, "required for platform existing: set it with `pulumi config set "
                                    f"--secret {kubeconfig} < kubeconfig`"))
        elif kubeconfig not in secret_keys:
            problems.append(Problem(stack, kubeconfig, "must be a secret, not inline in the stack file (it holds the "
                                    f"cluster's credentials): `pulumi config rm {kubeconfig}`, then `pulumi config set "
                                    f"--secret {kubeconfig} < kubeconfig`"))
    elif kubeconfig in config:
        problems.append(Problem(stack, kubeconfig, f"not used on platform {platform}: gpufleet makes this cluster's "
                                "kubeconfig itself (stack output `kubeconfig`); remove it"))
    if platform != "k3s":
        return problems
    key = f"{NAMESPACE}:sshPrivateKey"
    if key not in config:
        problems.append(Problem(stack, key, f"required for k3s: set it with `pulumi config set --secret {key} < ~/.ssh/id_ed25519`"))
    elif key not in secret_keys:
        problems.append(Problem(stack, key, "must be a secret, not plain text: set it with `pulumi config set --secret`"))
    k3s = cluster.get("k3s")
    snapshots = k3s.get("etcdSnapshots") if isinstance(k3s, dict) else None
    if isinstance(snapshots, dict) and snapshots.get("s3"):
        for name in ETCD_S3_KEYS:
            key = f"{NAMESPACE}:{name}"
            if key not in config:
                problems.append(Problem(stack, key, f"required by cluster.k3s.etcdSnapshots.s3: set it with `pulumi config set --secret {key}`"))
            elif key not in secret_keys:
                problems.append(Problem(stack, key, "must be a secret, not plain text: set it with `pulumi config set --secret`"))
    elif any(f"{NAMESPACE}:{name}" in config for name in ETCD_S3_KEYS):
        problems += [
            Problem(stack, f"{NAMESPACE}:{name}", "not used: cluster.k3s.etcdSnapshots.s3 is not set")
            for name in ETCD_S3_KEYS if f"{NAMESPACE}:{name}" in config
        ]
    return problems


def _cross_checks(stack: str, spec: StackSpec, config: dict[str, Any]) -> list[Problem]:
    """Checks that span blocks (they run once every block is valid on its own)."""
    problems: list[Problem] = []
    seen_pools: dict[str, int] = {}
    for i, pool in enumerate(spec.node_pools):
        if pool.name in seen_pools:
            problems.append(Problem(stack, f"{NAMESPACE}:nodePools[{i}].name", f"duplicate pool name (also nodePools[{seen_pools[pool.name]}])", pool.name))
        seen_pools.setdefault(pool.name, i)
    problems += addons_checks(stack, spec)
    problems += observability_checks(stack, spec, config)
    problems += _foreign_pool_fields(stack, spec)
    problems += reservation_checks(stack, spec)
    problems += image_checks.check(stack, spec)
    problems += registry_checks.check(stack, spec, config)
    problems += cold_start.check(stack, spec)
    if spec.cluster.platform == "k3s":
        problems += _k3s_checks(stack, spec)
    if spec.cluster.platform == "eks":
        problems += eks_checks(stack, spec, config)
    if spec.cluster.platform == "gke":
        problems += gke_checks(stack, spec, config)
    if spec.cluster.platform == "aks":
        problems += aks_checks.check(stack, spec)
    if spec.cluster.platform == "existing":
        problems += existing_checks(stack, spec)
    problems += sharing_checks.check(stack, spec)
    problems += amd_checks.check(stack, spec)
    problems += catalog_problems(stack, spec, config)
    problems += sriov_checks.check(stack, spec)
    problems += k3s_label_checks.check(stack, spec)
    problems += platform_keys.check(stack, spec)
    problems += region_checks.check(stack, spec, config)
    problems += network_checks.check(stack, spec)
    problems += value_checks.check(stack, spec)
    problems += name_checks.check(stack, spec)
    problems += compat_checks.check(stack, spec)
    problems += disabled_checks.check(stack, spec)
    problems += upkeep_checks.check(stack, spec)
    problems += admission_checks.check(stack, spec)
    problems += dra_checks.check(stack, spec)
    problems += topology_checks.check(stack, spec)
    problems += serving_checks.check(stack, spec)
    return problems


# Cloud pool fields that only one platform reads: setting them on another platform is a mistake, not a
# no-op. (The cloud checks in eks.py/gke.py reject the k3s fields hosts/gpu/gpusPerNode themselves.)
PLATFORM_POOL_FIELDS = {
    "eks": ("instance_type", "instance_types", "ami", "root_volume_gib", "availability_zone", "subnet_ids"),
    "gke": ("machine_type", "accelerator_count", "gke"),
    "aks": ("vm_size", "aks"),
    "existing": ("existing",),
}


def _foreign_pool_fields(stack: str, spec: StackSpec) -> list[Problem]:
    platform = spec.cluster.platform
    problems = []
    for i, pool in enumerate(spec.node_pools):
        for owner, fields in PLATFORM_POOL_FIELDS.items():
            for field in fields:
                if owner != platform and field in pool.model_fields_set:
                    alias = NodePoolSpec.model_fields[field].alias
                    problems.append(Problem(stack, f"{NAMESPACE}:nodePools[{i}].{alias}", f"not used on {platform}: {owner} pools only; remove it"))
    return problems


def _k3s_checks(stack: str, spec: StackSpec) -> list[Problem]:
    problems: list[Problem] = []

    hosts: list[tuple[str, Host]] = []
    k3s = spec.cluster.k3s
    if "etcd_snapshots" in k3s.model_fields_set and not k3s.embedded_etcd:
        problems.append(Problem(
            stack, f"{NAMESPACE}:cluster.k3s.etcdSnapshots",
            "etcd snapshots need embedded etcd (an odd number >= 3 of servers); a single server keeps SQLite: remove the block",
        ))
    hosts += [(f"{NAMESPACE}:cluster.k3s.servers[{i}]", h) for i, h in enumerate(k3s.servers)]
    hosts += [(f"{NAMESPACE}:cluster.k3s.agents[{i}]", h) for i, h in enumerate(k3s.agents)]
    for i, pool in enumerate(spec.node_pools):
        at = f"{NAMESPACE}:nodePools[{i}]"
        hosts += [(f"{at}.hosts[{j}]", h) for j, h in enumerate(pool.hosts)]
        if not pool.hosts:
            problems.append(Problem(stack, f"{at}.hosts", "a k3s pool needs at least one host"))
        if pool.gpu is None:
            problems.append(Problem(stack, f"{at}.gpu", "required on k3s: the GPU model of the pool's hosts"))
        if pool.gpus_per_node is None:
            problems.append(Problem(stack, f"{at}.gpusPerNode", "required on k3s: GPUs in each host"))
        for field in ("min_nodes", "max_nodes"):
            if field in pool.model_fields_set:
                alias = NodePoolSpec.model_fields[field].alias
                problems.append(Problem(stack, f"{at}.{alias}", "not used on k3s: a pool's size is its number of hosts; remove it"))
        if pool.capacity == "spot":
            problems.append(Problem(stack, f"{at}.capacity", "spot capacity needs a cloud platform (allowed on k3s: on-demand)", pool.capacity))
        for field in ("max_unavailable", "local_storage", "efa_only"):
            if field in pool.model_fields_set:
                alias = NodePoolSpec.model_fields[field].alias
                problems.append(Problem(stack, f"{at}.{alias}", "an EKS setting, not used on k3s; remove it"))
    # One machine may be both a server and a GPU host of one pool (a single GPU box, a workstation): the same
    # entry, listed under servers and under the pool's hosts. Anything else listed twice is a mistake.
    servers = {h.name: h for h in k3s.servers}
    shared = {id(h) for path, h in hosts if ".hosts[" in path and servers.get(h.name) == h}
    gpu_servers: dict[str, str] = {}
    for path, host in hosts:
        if id(host) in shared:
            if host.name in gpu_servers:
                problems.append(Problem(stack, f"{path}.name", f"this server is already a GPU host of {gpu_servers[host.name]}; "
                                        "a node belongs to one pool", host.name))
            gpu_servers.setdefault(host.name, path.rsplit(".hosts", 1)[0])
    for attr in ("name", "address"):
        seen: dict[str, str] = {}
        for path, host in hosts:
            if id(host) in shared:
                continue
            value = getattr(host, attr)
            if value in seen:
                also = seen[value]
                hint = ("; a server that is also a GPU host must be listed identically (name, address, user, port) in "
                        "both places" if ".servers[" in also and ".hosts[" in path else "")
                problems.append(Problem(stack, f"{path}.{attr}", f"duplicate host {attr} (also {also}){hint}", value))
            seen.setdefault(value, path)
    problems += _gpu_server_checks(stack, spec, {h for h in gpu_servers})
    return problems


def _gpu_server_checks(stack: str, spec: StackSpec, gpu_servers: set[str]) -> list[Problem]:
    """A server that is also a GPU host must still run the cluster's system pods (CoreDNS, metrics-server,
    local-path provisioner tolerate only the control-plane taints): it gets the pool's labels but no taint that
    keeps them off (gpufleet then leaves the GPU taint off that node too)."""
    if not gpu_servers:
        return []
    problems = []
    if spec.cluster.k3s.taint_servers:
        problems.append(Problem(stack, f"{NAMESPACE}:cluster.k3s.taintServers", "a server that is also a GPU host cannot be "
                                "tainted CriticalAddonsOnly (GPU pods could not run there); set taintServers: false", True))
    for i, pool in enumerate(spec.node_pools):
        if not any(h.name in gpu_servers for h in pool.hosts):
            continue
        if pool.capacity == "spot":
            continue  # refused above: k3s has no spot capacity
        for j, taint in enumerate(pool.taints):
            if taint.effect in ("NoSchedule", "NoExecute"):
                problems.append(Problem(stack, f"{NAMESPACE}:nodePools[{i}].taints[{j}].effect", "the pool's hosts include a "
                                        "server, which must keep running system pods: a NoSchedule/NoExecute taint keeps them off "
                                        "(allowed here: PreferNoSchedule)", taint.effect))
    return problems


def json_schema() -> dict:
    """JSON Schema of a `stacks/Pulumi.<stack>.yaml` file's gpufleet part."""
    inner = StackSpec.model_json_schema(by_alias=True)
    defs = inner.pop("$defs", {})
    props = {f"{NAMESPACE}:{k}": v for k, v in inner["properties"].items()}
    for key, description in SECRET_KEYS.items():
        props[f"{NAMESPACE}:{key}"] = {
            "description": description,
            "type": "object",
            "properties": {"secure": {"type": "string"}},
            "required": ["secure"],
        }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gpufleet stack configuration (stacks/Pulumi.<stack>.yaml)",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": props,
                "required": [f"{NAMESPACE}:{k}" for k in inner.get("required", [])],
                "patternProperties": {"^(?!gpufleet:)": {}},
                "additionalProperties": False,
            }
        },
        "required": ["config"],
        "$defs": defs,
    }
