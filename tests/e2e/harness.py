"""Driving the real Pulumi CLI (through pulumi.automation) on a copy of an example stack.

A stack here is the example's `gpufleet:` config plus the e2e seams' keys (tests/e2e/seam.py), in a scratch
project folder (a copy of Pulumi.yaml whose virtualenv is this checkout's .venv, and a __main__.py that installs the
seams before the repository's program), on a local file backend with the passphrase secrets provider. The real stacks/ files are never written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml
from pulumi import automation as auto

from gpufleet.base import versions as pins
from tests.e2e import seam
from tests.helpers import REFERENCE, ROOT

CACHE = Path(os.environ.get("GPUFLEET_E2E_CACHE", Path.home() / ".cache" / "gpufleet-e2e"))
TOOLS = CACHE / "current"
BIN = TOOLS / "bin"
POLICY_PACK = ROOT / "policies"
PASSPHRASE = "gpufleet-e2e"  # protects only the scratch backend of one test run
BUILD_HINT = "run tests/e2e/build.sh (or `make e2e`) to build it"


def missing_tools() -> list[str]:
    names = ["pulumi", "pulumi-language-python", "pulumi-language-python-exec", "kube-apiserver", "etcd"]
    missing = [n for n in names if not (BIN / n).exists()]
    if not list((TOOLS / "home" / "plugins").glob("resource-kubernetes-v*/pulumi-resource-kubernetes")):
        missing.append("pulumi-resource-kubernetes")
    return missing


def versions() -> dict[str, str]:
    path = TOOLS / "versions.env"
    if not path.exists():
        return {}
    return dict(line.split("=", 1) for line in path.read_text().split() if "=" in line)


@dataclass
class Timings:
    """Seconds per step, printed at the end of the run (what takes the time)."""

    steps: list[tuple[str, float]] = field(default_factory=list)

    def add(self, name: str, seconds: float) -> None:
        self.steps.append((name, seconds))

    def report(self) -> str:
        width = max((len(n) for n, _ in self.steps), default=0)
        return "\n".join(f"  {n:<{width}}  {s:7.1f}s" for n, s in self.steps)


TIMINGS = Timings()


class timed:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        TIMINGS.add(self.name, time.monotonic() - self.start)


def cli_env(backend: Path, home: Path) -> dict[str, str]:
    """Environment of every CLI call: our tools first on PATH, our plugins, no network, no prompts."""
    plugins = TOOLS / "home" / "plugins"
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "plugins").exists():
        (home / "plugins").symlink_to(plugins.resolve())
    return {
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
        "PULUMI_HOME": str(home),
        "PULUMI_BACKEND_URL": f"file://{backend}",
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
        "PULUMI_DEBUG_COMMANDS": "true",  # `preview --event-log` exists only then (pkg/v3 cmd/pulumi/operations)
        "PULUMI_DIY_BACKEND_NO_LEGACY_WARNING": "true",
        "PULUMI_HOST_PROVIDERS_LOG": "",
    }


def operator_runtime_crds() -> list[dict]:
    """The CRDs the Network Operator's pod applies when it reconciles the NicClusterPolicy (nv-ipam's IPPool and
    CIDRPool: not in the chart), from the pinned release's `manifests/state-nv-ipam-cni/005-*.yaml` as
    ../shared/reference/charts/network-operator-<version>.extras.tar.gz keeps them. No operator pod runs here,
    so the tier applies them in its place; the API server then checks each IPPool against the real schema."""
    version = pins.NETWORK_OPERATOR.version.lstrip("v")
    archive = REFERENCE / "charts" / f"network-operator-{version}.extras.tar.gz"
    if not archive.exists():
        raise FileNotFoundError(f"{archive} (the nv-ipam CRDs the Network Operator installs at run time)")
    with tarfile.open(archive) as tar:
        text = tar.extractfile(f"network-operator-{version}.operator-crds.yaml").read().decode()
    return [d for d in yaml.safe_load_all(text) if d]


def example_stack_config(stack: str) -> dict[str, Any]:
    """The example's config without its encrypted placeholders (they are set again as real secrets)."""
    doc = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return {k: v for k, v in doc["config"].items() if not (isinstance(v, dict) and set(v) == {"secure"})}


# The label the tier gives the Node objects it creates for a pool, and the pool's nodeSelector selects them by.
E2E_POOL_LABEL = "e2e.gpufleet.dev/pool"


def existing_stack_config(stack: str) -> dict[str, Any]:
    """An example k3s stack as an existing-cluster stack (cluster.platform: existing): the same pools, add-ons and
    policies on nodes the cluster already has. What only k3s can do goes: its hosts (each pool's `hosts` become its
    named `existing.nodes`, selected by E2E_POOL_LABEL, the pool's size their number), its host prices (the GPU
    pools keep theirs), the SSH key, and `storage` (NFS/local-path are k3s's: an existing cluster brings its own).
    An example that is already an existing-cluster stack is returned as it is, serving left out (below)."""
    config = example_stack_config(stack)
    # The serving layer's gateway applies the Gateway API and Inference Extension release manifests by their GitHub
    # URLs (versions.GATEWAY_API_STANDARD_INSTALL and the extension's manifests.yaml), which the tier cannot reach (it
    # downloads nothing; docs/e2e.md): its stacks run without serving, which the plan and render tests cover.
    config.pop("gpufleet:serving", None)
    cluster = config["gpufleet:cluster"]
    if cluster["platform"] == "existing":
        return config
    out = {k: v for k, v in config.items() if k not in ("gpufleet:storage", "gpufleet:sshPrivateKey")}
    out["gpufleet:cluster"] = {
        **{k: v for k, v in cluster.items() if k in ("name", "kubernetesVersion", "protection")},
        "platform": "existing", "existing": {},
    }
    pools = []
    for pool in config.get("gpufleet:nodePools", []):
        nodes = [h["name"] for h in pool.get("hosts", [])]
        converted = {k: v for k, v in pool.items() if k != "hosts"}
        converted.update(minNodes=len(nodes), maxNodes=len(nodes),
                         existing={"nodeSelector": {E2E_POOL_LABEL: pool["name"]}, "nodes": nodes})
        pools.append(converted)
    out["gpufleet:nodePools"] = pools
    # Topology-aware queues read the k3s hosts' declared racks (node labels written at join); an existing cluster's
    # nodes carry their provider's topology labels, which the spec cannot know: the converted stacks queue without.
    kueue = (out.get("gpufleet:addons") or {}).get("kueue")
    if kueue:
        kueue = {k: v for k, v in kueue.items() if k != "topology"}
        kueue["teams"] = [{**t, "queues": [{k: v for k, v in q.items() if k != "topology"} for q in t.get("queues", [])]}
                          for t in kueue.get("teams", [])]
        out["gpufleet:addons"] = {**out["gpufleet:addons"], "kueue": kueue}
    return out


class E2EStack:
    """One stack of the scratch project, created with the real CLI."""

    def __init__(self, name: str, work: Path, config: dict[str, Any], secrets: dict[str, str],
                 project: Optional[Path] = None):
        """`project`: the scratch project folder to add this stack to (several stacks of one project, as a fleet
        run sees them); default: a project of its own, `project-<name>`."""
        self.name = name
        self.dir = project or work / f"project-{name}"
        if not (self.dir / "Pulumi.yaml").exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            doc = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
            doc["runtime"]["options"]["virtualenv"] = str(ROOT / ".venv")
            (self.dir / "Pulumi.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
            (self.dir / "__main__.py").write_text(seam.program_main())
            (self.dir / "stacks").mkdir()
        self.env = cli_env(work / "backend", work / "pulumi-home")
        (work / "backend").mkdir(exist_ok=True)
        self.workspace = auto.LocalWorkspace(
            work_dir=str(self.dir),
            env_vars=self.env,
            secrets_provider="passphrase",
            pulumi_command=auto.PulumiCommand(root=str(TOOLS)),
        )
        with timed(f"{name}: stack init"):
            self.stack = auto.Stack.create_or_select(name, self.workspace)
        self.write_config(config)
        for key, value in secrets.items():
            self.stack.set_config(key, auto.ConfigValue(value, secret=True))

    @property
    def stack_file(self) -> Path:
        return self.dir / "stacks" / f"Pulumi.{self.name}.yaml"

    def write_config(self, config: dict[str, Any]) -> None:
        """Plain config straight into the stack file (structured values as YAML, like the examples);
        secrets already set stay."""
        doc = yaml.safe_load(self.stack_file.read_text()) if self.stack_file.exists() else {}
        doc = doc or {}
        kept = {k: v for k, v in (doc.get("config") or {}).items() if isinstance(v, dict) and set(v) == {"secure"}}
        doc["config"] = {**config, **kept}
        self.stack_file.write_text(yaml.safe_dump(doc, sort_keys=False))

    def plan_file(self, path: Path) -> Path:
        """The stack file as `gpufleet plan --config` reads it (secure values stay secure placeholders)."""
        shutil.copy(self.stack_file, path)
        return path

    def cli(self, *args: str, check: bool = True) -> auto.CommandResult:
        """The real CLI through the Automation API's command runner (raises CommandError on failure)."""
        cmd = self.workspace.pulumi_command
        result = cmd.run([*args, "--stack", self.name, "--non-interactive"], str(self.dir), self.env)
        return result

    def preview_json(self, out: Path, event_log: Path, policy: bool = True) -> dict:
        """`pulumi preview --json [--policy-pack policies] --event-log FILE`; the JSON document."""
        args = ["preview", "--json", "--event-log", str(event_log)]
        if policy:
            args += ["--policy-pack", str(POLICY_PACK)]
        try:
            result = self.cli(*args)
        except auto.errors.CommandError as exc:
            # A failed preview (a mandatory violation) still prints its JSON: keep it for `gpufleet report`.
            text = str(exc)
            out.write_text(text.split(" stdout: ", 1)[-1].split("\n stderr: ", 1)[0])
            raise
        out.write_text(result.stdout)
        return json.loads(result.stdout[result.stdout.index("{"):])


def gpufleet(*args: str, env: Optional[dict[str, str]] = None, stdin: Optional[str] = None,
             seamed: bool = False) -> subprocess.CompletedProcess:
    """The installed `gpufleet` command; `env` is added to this process's environment (e.g. an E2EStack's `env`, so
    `gpufleet preview|up` drives the tier's CLI, backend and plugins). `seamed`: the command with the seams installed
    (seam.install), for commands that plan the tier's stacks in process (`gpufleet preview|up` plan each stack offline
    before the engine runs, and the stack files carry the seam's `gpufleet-e2e:` keys)."""
    command = [str(ROOT / ".venv" / "bin" / "gpufleet"), *args]
    if seamed:
        code = seam.ENTRY.format(root=str(ROOT), module="gpufleet.app.cli", call=f"sys.exit(main({list(args)!r}))")
        command = [str(ROOT / ".venv" / "bin" / "python"), "-c", code]
    return subprocess.run(command, cwd=ROOT, capture_output=True,
                          text=True, timeout=1200, env={**os.environ, **env} if env else None,
                          input=stdin if stdin is not None else "")


def plan_json(stack: str, stack_file: Path, out: Path) -> dict:
    """`gpufleet plan STACK --config FILE --format json` with the seams installed, as the tier's program has them
    (exit 1 means a mandatory violation, still a plan)."""
    args = ["plan", stack, "--config", str(stack_file), "--format", "json", "--output", str(out)]
    code = seam.ENTRY.format(root=str(ROOT), module="gpufleet.app.cli", call=f"sys.exit(main({args!r}))")
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(out.read_text())


def policy_events(event_log: Path) -> list[dict]:
    out = []
    for line in event_log.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("policyEvent"), dict):
            out.append(event["policyEvent"])
    return out


def error_text(exc: Optional[BaseException]) -> str:
    if isinstance(exc, auto.errors.CommandError):
        return str(exc)
    return repr(exc)
