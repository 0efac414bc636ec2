"""The Pulumi program: read the stack's config, validate it, build the GpuCluster, export outputs.

`pulumi up` runs it through __main__.py; `gpufleet plan` runs the very same function under mocks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pulumi
import pulumi.runtime.config as runtime_config
import yaml

from gpufleet.app.plan.stackfile import StackFileError, read_stack_file
from gpufleet.base import platforms
from gpufleet.base.spec import NAMESPACE, SpecError, StackSpec, load_spec


def stack_config() -> tuple[dict[str, Any], set[str]]:
    """Every config key the engine gave this program, and which of them are secrets."""
    config = dict(runtime_config.get_config_env())
    config.update(runtime_config.CONFIG.get())
    secret_keys = set(runtime_config.get_config_secret_keys_env()) | set(runtime_config._SECRET_KEYS.get())
    return config, secret_keys


def load_stack_spec() -> StackSpec:
    """The validated spec, or a pulumi.RunError (message only, no traceback) listing every problem.

    Under `pulumi up` / `preview` the stack file's top level is judged too (`stack_settings_file`): the engine hands a
    program only the config, not the file's secrets settings or an ESC `environment:` import."""
    config, secret_keys = stack_config()
    try:
        settings = stack_settings_file(pulumi.get_stack())
        if settings is not None:
            read_stack_file(pulumi.get_stack(), settings)  # SpecError naming each top-level key it refuses
        return load_spec(pulumi.get_stack(), config, secret_keys)
    except (SpecError, StackFileError) as exc:
        raise pulumi.RunError(str(exc)) from None


def stack_settings_file(stack: str) -> Optional[Path]:
    """The stack's settings file as the engine read it: `<stackConfigDir>/Pulumi.<stack>.yaml` under the project's
    root (Pulumi.yaml's `stackConfigDir`, else the root: pulumi.com/docs/iac/concepts/projects/project-file). None when
    the engine names no project root (under mocks: `gpufleet plan` judged the file it read) or there is no such file
    (configuration kept by the Pulumi Cloud service: nothing on disk to judge)."""
    root = pulumi.get_root_directory() if hasattr(pulumi, "get_root_directory") else None
    if not root:
        return None
    try:
        project = yaml.safe_load((Path(root) / "Pulumi.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        project = {}
    folder = project.get("stackConfigDir") if isinstance(project, dict) else None
    path = Path(root) / (folder if isinstance(folder, str) else "") / f"Pulumi.{stack}.yaml"
    return path if path.is_file() else None


def main() -> None:
    from gpufleet.components.gpu_cluster import GpuCluster, GpuClusterArgs

    spec = load_stack_spec()
    name = spec.cluster.name or pulumi.get_stack()
    cluster = GpuCluster(name, GpuClusterArgs(spec, **platform_secrets(spec)))
    pulumi.export("clusterName", name)
    pulumi.export("platform", spec.cluster.platform)
    pulumi.export("kubernetesVersion", spec.cluster.kubernetes_version)
    pulumi.export("kubeconfig", pulumi.Output.secret(cluster.kubeconfig))
    pulumi.export("nodePools", [pool.name for pool in spec.node_pools])
    # Exported here, never from a component: a component may run where there is no stack to export to (the
    # component package's Construct, a user's program).
    for key, value in platforms.of(spec).keys.outputs(cluster).items():
        pulumi.export(key, value)


def platform_secrets(spec: StackSpec) -> dict[str, Any]:
    """GpuClusterArgs field -> the secret config value the stack's platform reads (KeyTraits.secrets) and the stack
    sets. The spec has refused a secret the stack needs and lacks, and one it sets without needing it."""
    cfg = pulumi.Config(NAMESPACE)
    return {secret.argument: cfg.get_secret(secret.key) for secret in platforms.of(spec).keys.secrets}


def config_value(value: Any) -> str:
    """How the engine hands a config value to a program: strings as they are, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)
