"""`gpufleet preview` and `gpufleet up` over several stacks through the Automation API, the real CLI and engine, the
real policy pack and real API servers (issue 39; docs/fleet.md).

Three k3s example stacks, as existing-cluster stacks (harness.existing_stack_config), in one scratch project, each on
its own API server (a cluster per stack, as in a fleet): `dev`, `ha` and `teams`. `ha`'s API server refuses its `gpu-operator` Namespace at apply time (a
ValidatingAdmissionPolicy: the API server's own admission, no webhook). Then:

- `gpufleet up` with one stack whose offline plan fails exits 2 and never touches the engine;
- `gpufleet preview dev ha --parallel 2`: both previewed, each with the resources it would create and the policy
  verdicts `gpufleet plan` gives;
- `gpufleet up dev ha teams --parallel 1`: `dev` is updated, `ha` fails on the refused object, `teams` is never
  started; the summary says exactly that, and the engine's own history and the API servers agree.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import threading
import time

import pytest

from tests.e2e import harness
from tests.e2e.cluster import ApiServer
from tests.e2e.harness import E2EStack, plan_json, timed

STACKS = ["dev", "ha", "teams"]
FAILING = "ha"
REFUSED_NAMESPACE = "gpu-operator"
REFUSAL = "gpufleet-e2e: this API server refuses the gpu-operator namespace"


def refuse_namespace(server: ApiServer, name: str) -> None:
    """A ValidatingAdmissionPolicy (built into the API server, GA since 1.30) that denies creating Namespace `name`,
    except in a dry run (so a preview that dry-runs still passes and only the real apply is refused)."""
    server.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "refuse-namespace"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                    "resources": ["namespaces"]}]},
            "validations": [{"expression": f"request.dryRun == true || object.metadata.name != '{name}'",
                             "message": REFUSAL}],
        },
    })
    server.request("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "refuse-namespace"},
        "spec": {"policyName": "refuse-namespace", "validationActions": ["Deny"]},
    })


def namespaces(server: ApiServer) -> set[str]:
    return {n["metadata"]["name"] for n in server.request("GET", "/api/v1/namespaces")["items"]}


@pytest.fixture(scope="module")
def fleet(tools, chart_repo, tmp_path_factory):
    work = tmp_path_factory.mktemp("e2e-fleet")
    project = work / "project-fleet"
    servers, stacks, configs = {}, {}, {}
    try:
        for name in STACKS:
            with timed(f"fleet {name}: etcd + kube-apiserver up"):
                servers[name] = ApiServer(harness.BIN, work / f"apiserver-{name}").start()
            config = {**harness.existing_stack_config(name), "gpufleet-e2e:chartRepository": chart_repo.url,
                      "gpufleet-e2e:noKubelets": True}
            for pool in config.get("gpufleet:nodePools", []):
                for node in pool["existing"].get("nodes", []):
                    servers[name].create_node(node)  # the pool's nodes, which its NodePatches label
            stacks[name] = E2EStack(name, work, config, {"gpufleet:kubeconfig": servers[name].kubeconfig},
                                    project=project)
            configs[name] = config
        refuse_namespace(servers[FAILING], REFUSED_NAMESPACE)
        yield work, project, servers, stacks, configs
    finally:
        for server in servers.values():
            server.stop()


def run_fleet(project, stacks, *args):
    env = next(iter(stacks.values())).env
    proc = harness.gpufleet(*args, "--project-dir", str(project), "--policy-pack", str(harness.POLICY_PACK),
                            "--format", "json", env=env, seamed=True)
    return proc, (json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None)


def provider_children(plan: dict) -> int:
    """Objects the kubernetes provider expands a yaml/v2 ConfigGroup into (one child resource each)."""
    import yaml

    return sum(len([d for d in yaml.safe_load_all(r["inputs"].get("yaml") or "") if d])
               for r in plan["resources"] if r["type"] == "kubernetes:yaml/v2:ConfigGroup")


def history(stack: E2EStack) -> list:
    return stack.stack.history()


def test_up_refuses_a_stack_whose_offline_plan_fails_before_the_engine(fleet):
    work, project, servers, stacks, configs = fleet
    broken = {**configs["teams"], "gpufleet:nodePool": []}  # a misspelt key: the spec refuses it
    stacks["teams"].write_config(broken)
    try:
        proc, _ = run_fleet(project, stacks, "up", *STACKS, "--yes")
    finally:
        stacks["teams"].write_config(configs["teams"])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the offline plan fails, nothing was updated" in proc.stderr
    assert "stack 'teams'" in proc.stderr and "gpufleet:nodePool" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert all(history(s) == [] for s in stacks.values())  # the engine never ran an update


def test_preview_runs_each_stack_with_the_policy_pack(fleet):
    work, project, servers, stacks, configs = fleet
    with timed("fleet: gpufleet preview dev ha --parallel 2"):
        proc, doc = run_fleet(project, stacks, "preview", "dev", FAILING, "--parallel", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [s["stack"] for s in doc["stacks"]] == ["dev", FAILING]
    for row in doc["stacks"]:
        name = row["stack"]
        assert row["result"] == "succeeded", row
        plan = plan_json(name, stacks[name].plan_file(work / f"plan-{name}.yaml"), work / f"plan-{name}.json")
        # the engine would create every planned resource, and its policy verdicts are the plan's
        # + the engine's root Stack, + each object of a ConfigGroup (a chart's CRDs applied before its release), which
        # the kubernetes provider registers as the group's children
        assert row["changes"] == {"create": len(plan["resources"]) + 1 + provider_children(plan)}, row
        assert {(p["policy"], p["urn"], p["level"]) for p in row["policies"]} == \
            {(v["policy"], v["urn"], v["level"]) for v in plan["violations"]}
    assert doc["changed"] == ["dev", FAILING]
    assert all(history(s) == [] for s in stacks.values())  # a preview records no update
    assert namespaces(servers["dev"]).isdisjoint({REFUSED_NAMESPACE})


def test_up_stops_after_a_failure_and_reports_what_changed(fleet):
    work, project, servers, stacks, configs = fleet
    with timed("fleet: gpufleet up dev ha teams --parallel 1"):
        proc, doc = run_fleet(project, stacks, "up", *STACKS, "--parallel", "1", "--yes")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {r["stack"]: r for r in doc["stacks"]}
    assert [r["stack"] for r in doc["stacks"]] == STACKS
    assert rows["dev"]["result"] == "succeeded" and rows["dev"]["changed"]
    assert rows[FAILING]["result"] == "failed"
    assert REFUSAL in rows[FAILING]["message"], rows[FAILING]["message"]
    assert rows["teams"]["result"] == "not started"
    assert rows["teams"]["message"] == f"not started: stack '{FAILING}' failed first"
    assert doc["failed"] == [FAILING] and doc["notStarted"] == ["teams"] and doc["succeeded"] == ["dev"]
    # What the summary says changed is what the engine recorded for each stack's update.
    for name in ("dev", FAILING):
        (last,) = history(stacks[name])
        recorded = {op: n for op, n in (last.resource_changes or {}).items() if op != "same" and n}
        assert {op: n for op, n in rows[name]["changes"].items() if n} == recorded, (name, recorded)
        assert last.result == ("succeeded" if name == "dev" else "failed")
    assert doc["changed"] == ["dev", FAILING] if rows[FAILING]["changed"] else doc["changed"] == ["dev"]
    # teams was never started: no update in its history, nothing on its API server.
    assert history(stacks["teams"]) == []
    assert REFUSED_NAMESPACE not in namespaces(servers["teams"])
    assert REFUSED_NAMESPACE in namespaces(servers["dev"])
    assert REFUSED_NAMESPACE not in namespaces(servers[FAILING])
    # dev is up to date: a second preview, its state refreshed from the API server first, would change nothing
    again, doc = run_fleet(project, stacks, "preview", "dev", "--refresh")
    assert again.returncode == 0, again.stdout + again.stderr
    assert doc["stacks"][0]["changes"] == {} and doc["changed"] == []
    stacks["dev"].stack.preview(expect_no_changes=True, color="never")  # issue 50: the engine's own no-change check


class Terminal:
    """A process on a pseudo-terminal of its own, as a user's `pulumi up` on their terminal.

    A thread reads the terminal all the time: the CLI redraws its progress while it runs, and once the terminal's
    buffer is full (a few KB) its writes block, so it would never reach its prompt nor exit on SIGINT, and waiting
    for it would hang the run (it did, in CI: the tier hit the 90 minutes). Stopping types Ctrl-C on the terminal, as
    the user would (a SIGINT sent with kill(2) did not end the CLI at its prompt, whose terminal is in raw mode and
    reads Ctrl-C as a key), and kills the process if it has not exited within `grace` seconds."""

    def __init__(self, argv: list[str], env: dict, cwd) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the other update
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)  # never back into pytest in the child
        self.output = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # EIO: the child's side of the terminal is closed
                return
            if not chunk:
                return
            self.output.extend(chunk)

    def stop(self, grace: float = 30) -> bool:
        """Ctrl-C, then SIGKILL after `grace` seconds; True when the process exited on the Ctrl-C."""
        try:
            os.write(self.fd, b"\x03")
        except OSError:  # EIO: the process has already closed its terminal (exited)
            pass
        deadline = time.monotonic() + grace
        exited = False
        while time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                exited = True
                break
            time.sleep(0.2)
        if not exited:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self._reader.join(timeout=10)
        if not self._reader.is_alive():  # else a plugin the CLI left still holds the terminal: the fd stays the reader's
            os.close(self.fd)
        return exited


def test_a_stack_another_update_holds_is_refused_with_the_holder_named(fleet):
    """A real concurrent update: `pulumi up` of dev on a terminal, waiting at its confirmation prompt (it holds the
    stack's lock from its start), while `gpufleet up dev` runs."""
    work, project, servers, stacks, configs = fleet
    env = {**os.environ, **stacks["dev"].env}
    env.pop("PULUMI_SKIP_CONFIRMATIONS")
    locks = work / "backend" / ".pulumi" / "locks"
    other = Terminal([str(harness.BIN / "pulumi"), "up", "--stack", "dev", "--refresh"], env, project)
    try:
        deadline = time.monotonic() + 120
        while not list(locks.rglob("*.json")):
            assert time.monotonic() < deadline, "the concurrent `pulumi up` never took the lock:\n" + \
                other.output.decode(errors="replace")
            time.sleep(0.2)
        proc, doc = run_fleet(project, stacks, "up", "dev", "--yes")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        (row,) = doc["stacks"]
        assert row["result"] == "locked"
        assert row["message"].startswith("stack 'dev' is locked by another update: "), row["message"]
        assert f"(pid {other.pid})" in row["message"], row["message"]  # the holder, as the CLI names it
        assert doc["failed"] == ["dev"] and doc["changed"] == []
    finally:
        if not other.stop():  # killed: its lock stays behind, and would refuse the next update of dev
            for lock in locks.rglob("*.json*"):
                lock.unlink()
