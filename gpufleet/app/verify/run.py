"""The checks against the live cluster, with the official Kubernetes client. Everything created carries the run's
`gpufleet.io/verify` label and is deleted in a `finally` (success, failure, timeout, Ctrl-C, SIGTERM)."""

from __future__ import annotations

import copy
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

from gpufleet.base import labels, versions
from gpufleet.app.verify.busbw import ExpectedBusbw, busbw_at
from gpufleet.app.verify.kubeconfig import client_secrets, redact
from gpufleet.app.verify.targets import PoolTarget, Targets

PASS, FAIL, SKIP = "pass", "fail", "skip"
# DCGM run levels (`dcgmi diag -r`): 1 quick (software/deployment), 2 medium (adds short hardware tests).
DIAG_LEVEL = {"quick": 1, "full": 2}
BANDWIDTH_FLOOR = 0.8  # an NCCL all-reduce below 80 % of the expected bus bandwidth fails


class ConnectionProblem(Exception):
    """The API server cannot be reached or refuses us: exit 2."""


@dataclass
class Check:
    name: str  # components | schedule | capacity | dcgm-diag | nccl
    target: str  # pool name or operator
    status: str
    detail: str
    seconds: Optional[float] = None


@dataclass
class Result:
    stack: str
    run_id: str
    level: str
    checks: list[Check] = field(default_factory=list)
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(c.status != FAIL for c in self.checks)


class Runner:
    def __init__(self, api_client, targets: Targets, level: str, timeout: float, namespace: str = "default",
                 expected_busbw: Optional[Mapping[str, "float | ExpectedBusbw"]] = None, poll: float = 2.0,
                 run_id: Optional[str] = None, clock: Callable[[], float] = time.monotonic):
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)
        self.version = client.VersionApi(api_client)
        self.secrets = client_secrets(api_client)  # removed from every message (gpufleet.app.verify.kubeconfig)
        self.t, self.level, self.timeout, self.ns = targets, level, timeout, namespace
        # A bare number is a figure at no particular size: compared with whatever size the check measured.
        self.expected = {k: v if isinstance(v, ExpectedBusbw) else ExpectedBusbw(float(v))
                         for k, v in (expected_busbw or {}).items()}
        self.poll, self.clock = poll, clock
        self.run_id = run_id or uuid.uuid4().hex[:8]
        self.created: list[tuple[str, str, str]] = []  # (kind, namespace, name), in creation order
        self.result = Result(targets.stack, self.run_id, level)

    # --- plumbing -------------------------------------------------------------------------------------------
    def _label(self, obj: dict) -> dict:
        obj.setdefault("metadata", {}).setdefault("labels", {})[labels.VERIFY_RUN_LABEL] = self.run_id
        return obj

    def _name(self, pool: str, role: str) -> str:
        return f"gpufleet-verify-{self.run_id}-{pool}-{role}"[:63].rstrip("-")

    def _create(self, kind: str, ns: str, body: dict) -> None:
        self._label(body)
        if kind == "Job":
            self._label(body["spec"]["template"])
        create = {"Pod": self.core.create_namespaced_pod, "Job": self.batch.create_namespaced_job,
                  "ConfigMap": self.core.create_namespaced_config_map,
                  "Service": self.core.create_namespaced_service}[kind]
        from kubernetes.client.rest import ApiException

        # Recorded before the call, so an interrupt while it is in flight still deletes it; a refused create
        # (e.g. 409: a user's object of that name) is forgotten again, so cleanup never deletes what is not ours.
        self.created.append((kind, ns, body["metadata"]["name"]))
        try:
            create(ns, body)
        except ApiException:
            self.created.pop()
            raise

    def cleanup(self) -> None:
        """Delete everything this run created, newest first; a missing object is fine."""
        from kubernetes.client.rest import ApiException

        delete = {"Pod": self.core.delete_namespaced_pod, "Job": self.batch.delete_namespaced_job,
                  "ConfigMap": self.core.delete_namespaced_config_map,
                  "Service": self.core.delete_namespaced_service}
        while self.created:
            kind, ns, name = self.created.pop()
            try:
                # Background propagation: a Job's pods go with it. The answer (the object or a Status, depending on
                # kind and server) is not needed: _preload_content=False leaves it undecoded.
                delete[kind](name, ns, propagation_policy="Background", grace_period_seconds=0, _preload_content=False)
            except ApiException as exc:
                if exc.status != 404:
                    self.result.checks.append(Check("cleanup", f"{kind}/{ns}/{name}", FAIL, f"delete failed: {exc.status} {exc.reason}"))
            except Exception as exc:  # noqa: BLE001 - keep deleting the rest
                self.result.checks.append(Check("cleanup", f"{kind}/{ns}/{name}", FAIL, f"delete failed: {_reason(exc)}"))

    def _wait(self, done: Callable[[], Optional[object]]) -> tuple[Optional[object], float]:
        start = self.clock()
        while True:
            value = done()
            elapsed = self.clock() - start
            if value is not None:
                return value, elapsed
            if elapsed >= self.timeout:
                return None, elapsed
            time.sleep(self.poll)

    # --- the run --------------------------------------------------------------------------------------------
    def run(self, pools: list[PoolTarget]) -> Result:
        from kubernetes.client.rest import ApiException
        from urllib3.exceptions import HTTPError

        main = threading.current_thread() is threading.main_thread()
        previous = signal.getsignal(signal.SIGTERM) if main else None
        lost = ""  # set when the API server goes away mid-run: exit 2 after the cleanup
        if main:  # SIGTERM (CI cancelling the job) cleans up like Ctrl-C
            signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            try:
                self.version.get_code()
            except ApiException as exc:
                raise ConnectionProblem(redact(f"the API server answered {exc.status} {exc.reason}", self.secrets)) from None
            except (HTTPError, OSError, ValueError, TypeError) as exc:
                # ValueError: a credential http.client refuses as a header value (its message holds the header).
                raise ConnectionProblem(redact(f"cannot reach the API server: {_reason(exc)}", self.secrets)) from None
            self.check_operators()
            for pool in pools:
                self.check_pool(pool)
        except KeyboardInterrupt:
            self.result.interrupted = True
        except HTTPError as exc:
            lost = redact(f"lost the API server: {_reason(exc)}", self.secrets)
        finally:
            if main:
                sigint = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not stop the cleanup
            try:
                self.cleanup()
            finally:
                if main:
                    signal.signal(signal.SIGINT, sigint)
                    signal.signal(signal.SIGTERM, previous)
        if lost:
            if any(c.name == "cleanup" for c in self.result.checks):
                lost += (f"; some objects could not be deleted: kubectl delete pods,jobs,configmaps,services -A "
                         f"-l {labels.VERIFY_RUN_LABEL}={self.run_id}")
            raise ConnectionProblem(lost)
        return self.result

    def check_operators(self) -> None:
        if not self.t.operators:
            self.result.checks.append(Check("components", "gpu-stack", SKIP, self.t.operators_note or "no operator installed"))
        for op in self.t.operators:
            sets = self.apps.list_namespaced_daemon_set(op.namespace).items
            if not sets:
                self.result.checks.append(Check("components", op.name, FAIL, f"no DaemonSet in namespace {op.namespace}"))
                continue
            bad = [f"{d.metadata.name} {d.status.number_ready or 0}/{d.status.desired_number_scheduled or 0} ready"
                   for d in sets if (d.status.number_ready or 0) < (d.status.desired_number_scheduled or 0)]
            self.result.checks.append(Check(
                "components", op.name, FAIL if bad else PASS,
                "; ".join(bad) if bad else f"{len(sets)} DaemonSets Ready in {op.namespace}"))

    def check_pool(self, pool: PoolTarget) -> None:
        if pool.described is not None:
            self._guard("nodes", pool, lambda: self.check_described(pool))
        scheduled = self._guard("schedule", pool, lambda: self.check_schedule(pool))
        self._guard("capacity", pool, lambda: self.check_capacity(pool))
        self._guard("dcgm-diag", pool, lambda: self.check_diag(pool, bool(scheduled)))
        if pool.rdma:
            self._guard("nccl", pool, lambda: self.check_nccl(pool))

    def check_described(self, pool: PoolTarget) -> None:
        """An existing cluster's pool: nodes with the stack's nodeSelector exist, as many as it says, the named ones
        among them, each with the stated GPUs (GPU feature discovery's nvidia.com/gpu.count) and gpufleet's pool
        labels (what the other checks and the workloads select them by)."""
        d = pool.described
        selector = ",".join(f"{k}={v}" for k, v in d.selector.items())
        nodes = self.core.list_node(label_selector=selector).items
        names = {n.metadata.name for n in nodes}
        problems = []
        if not d.min_nodes <= len(nodes) <= d.max_nodes:
            problems.append(f"{len(nodes)} node(s) carry {selector}; the stack says {d.min_nodes}-{d.max_nodes}")
        missing = [n for n in d.names if n not in names]
        if missing:
            problems.append(f"listed in existing.nodes but not carrying {selector}: {', '.join(missing)}")
        counted = [(n.metadata.name, (n.metadata.labels or {}).get("nvidia.com/gpu.count")) for n in nodes]
        if d.gpu_count_label:
            wrong = [f"{name} has {got}" for name, got in counted if got is not None and got != str(d.gpus_per_node)]
            if wrong:
                problems.append(f"GPUs per node (nvidia.com/gpu.count): stack says {d.gpus_per_node}; {'; '.join(wrong)}")
        unlabelled = sorted(n.metadata.name for n in nodes
                            if any((n.metadata.labels or {}).get(k) != v for k, v in d.labels.items()))
        if unlabelled:
            fix = ("`pulumi up` labels the nodes listed in existing.nodes" if d.names else
                   f"kubectl label nodes -l {selector} " + " ".join(f"{k}={v}" for k, v in d.labels.items()))
            problems.append(f"without gpufleet's pool labels: {', '.join(unlabelled)} ({fix})")
        if problems:
            self.result.checks.append(Check("nodes", pool.name, FAIL, "; ".join(problems)))
            return
        uncounted = "" if not d.gpu_count_label or all(got is not None for _, got in counted) else \
            " (GPU count not checked on nodes without nvidia.com/gpu.count: GPU feature discovery has not labelled them)"
        self.result.checks.append(Check("nodes", pool.name, PASS, f"{len(nodes)} node(s) carry {selector} with "
                                        f"{d.gpus_per_node} GPU(s) each and the pool's labels{uncounted}"))

    def _guard(self, check: str, pool: PoolTarget, fn):
        """An API error (403 on a namespace, 409 on a name in use) fails that check, not the run."""
        from kubernetes.client.rest import ApiException

        try:
            return fn()
        except ApiException as exc:
            self.result.checks.append(Check(check, pool.name, FAIL, f"API error {exc.status} {exc.reason}"))
            return None

    def _pod_spec(self, pool: PoolTarget, resource: str, count: int, command: list[str], restart: str) -> dict:
        return {
            "restartPolicy": restart,
            "nodeSelector": dict(pool.node_selector),
            "tolerations": [dict(t) for t in pool.tolerations],
            "containers": [{
                "name": "verify", "image": versions.DCGM_IMAGE, "command": command,
                "resources": {"limits": {resource: str(count)}, "requests": {resource: str(count)}},
            }],
        }

    def check_schedule(self, pool: PoolTarget) -> bool:
        if pool.capacity == "queued":
            # A bare pod never scales a DWS queued-provisioning pool up: only a ProvisioningRequest (Kueue) does.
            self.result.checks.append(Check("schedule", pool.name, SKIP,
                                            "queued-provisioning pool: nodes come only through a ProvisioningRequest (Kueue)"))
            return False
        name = self._name(pool.name, "schedule")
        body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": self.ns},
                "spec": self._pod_spec(pool, pool.probe_resource, 1, ["sleep", "3600"], "Never")}
        self._create("Pod", self.ns, body)

        def node():
            pod = self.core.read_namespaced_pod(name, self.ns)
            return pod.spec.node_name or None

        node_name, seconds = self._wait(node)
        if node_name:
            self.result.checks.append(Check("schedule", pool.name, PASS, f"1 {pool.probe_resource} on {node_name}", round(seconds, 1)))
            return True
        self.result.checks.append(Check("schedule", pool.name, FAIL, f"not scheduled within {self.timeout:g}s "
                                        f"({self._last_event(name, self.ns)})", round(seconds, 1)))
        return False

    def _last_event(self, pod: str, ns: str) -> str:
        events = self.core.list_namespaced_event(ns, field_selector=f"involvedObject.kind=Pod,involvedObject.name={pod}").items
        last = max(events, key=_event_time, default=None)
        return f"last event: {last.reason}: {last.message}" if last else "no scheduling event"

    def check_capacity(self, pool: PoolTarget) -> None:
        selector = ",".join(f"{k}={v}" for k, v in pool.node_selector.items())
        nodes = [n for n in self.core.list_node(label_selector=selector).items if _ready(n)]
        if not nodes:
            self.result.checks.append(Check("capacity", pool.name, SKIP, "no Ready node in the pool"))
            return
        wrong = []
        for n in nodes:
            have = n.status.allocatable or {}
            for resource, want in pool.advertised.items():
                got = have.get(resource)
                if got is None or int(got) != want:
                    wrong.append(f"{n.metadata.name}: {resource} {got if got is not None else 'absent'}, plan {want}")
        want = ", ".join(f"{r}={c}" for r, c in pool.advertised.items())
        self.result.checks.append(Check("capacity", pool.name, FAIL if wrong else PASS,
                                        "; ".join(wrong) if wrong else f"{len(nodes)} Ready node(s) advertise {want}"))

    def check_diag(self, pool: PoolTarget, scheduled: bool) -> None:
        if pool.vendor != "nvidia":
            self.result.checks.append(Check("dcgm-diag", pool.name, SKIP, "DCGM is NVIDIA's; AMD pools are not diagnosed"))
            return
        if pool.mig:
            self.result.checks.append(Check("dcgm-diag", pool.name, SKIP, "MIG pool: verify runs dcgmi diag on whole GPUs only"))
            return
        if not scheduled:
            self.result.checks.append(Check("dcgm-diag", pool.name, SKIP, "the pool's probe pod did not schedule"))
            return
        level = DIAG_LEVEL[self.level]
        name = self._name(pool.name, "diag")
        count = 1 if pool.shared else pool.gpus_per_node
        body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": self.ns},
                "spec": {"backoffLimit": 0, "ttlSecondsAfterFinished": 3600,
                         "template": {"metadata": {}, "spec": self._pod_spec(
                             pool, pool.probe_resource, count, ["dcgmi", "diag", "-r", str(level)], "Never")}}}
        self._create("Job", self.ns, body)

        def finished():
            st = self.batch.read_namespaced_job_status(name, self.ns).status
            return PASS if st.succeeded else FAIL if st.failed else None

        status, seconds = self._wait(finished)
        if status is None:
            self.result.checks.append(Check("dcgm-diag", pool.name, FAIL, f"level {level}: not finished within {self.timeout:g}s", round(seconds, 1)))
            return
        tail = self._job_log_tail(name)
        self.result.checks.append(Check("dcgm-diag", pool.name, status,
                                        f"level {level}: {'passed' if status == PASS else 'failed'}" + (f" ({tail})" if tail else ""),
                                        round(seconds, 1)))

    def _job_log_tail(self, job: str) -> str:
        pods = self.core.list_namespaced_pod(self.ns, label_selector=f"job-name={job}").items
        if not pods:
            return ""
        log = self._pod_log(pods[0].metadata.name, self.ns)
        lines = [ln.strip() for ln in log.splitlines() if "fail" in ln.lower()] or [ln.strip() for ln in log.splitlines()[-1:]]
        return "; ".join(lines[:3])

    def _pod_log(self, name: str, ns: str) -> str:
        # The raw body, decoded here: kubernetes client 36.x returns the repr of the bytes ("b'...'", every newline
        # an escaped "\\n") instead of the text (kubernetes-client/python issue 2596), which no log line matches.
        resp = self.core.read_namespaced_pod_log(name, ns, _preload_content=False)
        return (resp.data or b"").decode("utf-8", errors="replace")

    def check_nccl(self, pool: PoolTarget) -> None:
        if self.level != "full":
            self.result.checks.append(Check("nccl", pool.name, SKIP, "runs with --level full"))
            return
        if not pool.rdma_manifests:
            self.result.checks.append(Check("nccl", pool.name, SKIP, pool.nccl_note or "no NCCL manifests for this pool"))
            return
        objs = copy.deepcopy(pool.rdma_manifests)
        expected = self.expected.get(pool.instance_type or "")
        size = expected.message_bytes if expected else None
        if size is not None:  # measure at the size the published figure was measured at
            for obj in objs:
                for c in obj["spec"]["containers"] if obj["kind"] == "Pod" else []:
                    c.setdefault("env", []).append({"name": "NCCL_TEST_BYTES", "value": str(size)})
        for obj in objs:
            self._create(obj["kind"], obj["metadata"]["namespace"], obj)
        rank0 = next(o for o in objs if o["kind"] == "Pod")
        name, ns = rank0["metadata"]["name"], rank0["metadata"]["namespace"]

        def finished():
            phase = self.core.read_namespaced_pod(name, ns).status.phase
            return phase if phase in ("Succeeded", "Failed") else None

        phase, seconds = self._wait(finished)
        if phase is None:
            # A rank that never got a node (e.g. no hugepages-2Mi or too few EFA interfaces on the nodes) says why.
            waiting = [p["metadata"]["name"] for p in objs if p["kind"] == "Pod"
                       and not self.core.read_namespaced_pod(p["metadata"]["name"], ns).spec.node_name]
            why = f" ({waiting[0]} not scheduled, {self._last_event(waiting[0], ns)})" if waiting else ""
            self.result.checks.append(Check("nccl", pool.name, FAIL, f"all-reduce not finished within {self.timeout:g}s{why}",
                                            round(seconds, 1)))
            return
        log = self._pod_log(name, ns)
        found = busbw_at(log, size)
        if phase != "Succeeded" or not found:
            at = f" at {size} bytes" if size is not None else ""
            self.result.checks.append(Check("nccl", pool.name, FAIL, f"all-reduce {phase.lower()}, no bus bandwidth{at} in the log", round(seconds, 1)))
            return
        measured_at, busbw = found
        if expected is None:
            self.result.checks.append(Check("nccl", pool.name, SKIP,
                                            f"busbw {busbw:g} GB/s; no expected figure for {pool.instance_type or 'this pool'} in the catalog",
                                            round(seconds, 1)))
            return
        ok = busbw >= BANDWIDTH_FLOOR * expected.gbps
        at = f" at {measured_at} bytes" if size is not None else ""
        self.result.checks.append(Check("nccl", pool.name, PASS if ok else FAIL,
                                        f"busbw {busbw:g} GB/s{at}, {busbw / expected.gbps:.0%} of the expected {expected.gbps:g} GB/s "
                                        f"(fails below {BANDWIDTH_FLOOR:.0%})", round(seconds, 1)))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _reason(exc) -> str:
    return str(getattr(exc, "reason", None) or exc).splitlines()[0]


def _ready(node) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or []))


def _event_time(ev) -> float:
    t = ev.last_timestamp or ev.event_time or ev.metadata.creation_timestamp
    return t.timestamp() if t else 0.0
