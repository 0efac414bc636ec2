"""`gpufleet verify` against a fake Kubernetes API: a local HTTP server implementing the endpoints verify uses,
with the real `kubernetes` client pointed at it by a kubeconfig. Every path: success, a pool that never schedules,
a failing diag, low NCCL bandwidth, connection refused, interruption; each asserts the outcome and the requests."""

from __future__ import annotations

import dataclasses
import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional
from urllib.parse import parse_qs, urlparse

import pytest

pytest.importorskip("kubernetes")

from gpufleet.base import labels  # noqa: E402
from gpufleet.app.cli import main  # noqa: E402

LAB_POOLS = ("l4-shared", "h100-mig", "a100-rdma")
EFA_POOLS = ("p5", "p4d")  # stacks/Pulumi.p5-efa.yaml
# GPUDirect-TCPX (stacks/Pulumi.prod-gke.yaml), -TCPXO (dws-gke), -RDMA (tests/unit/test_nccl_gke.py rdma_config)
GKE_POOLS = ("h100-train", "a3mega-queued", "ultra")
ADVERTISED = {"l4-shared": {"nvidia.com/gpu": "16"}, "h100-mig": {"nvidia.com/mig-1g.10gb": "56"},
              "a100-rdma": {"nvidia.com/gpu": "8"},
              # The catalog's EFA interfaces per type (aws_instances.yaml): p5.48xlarge 32, p4d.24xlarge 4.
              "p5": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"},
              "p4d": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"},
              "h100-train": {"nvidia.com/gpu": "8"}, "a3mega-queued": {"nvidia.com/gpu": "8"},
              "ultra": {"nvidia.com/gpu": "8"}}


class FakeCluster:
    """State and behaviour of the fake API server; `requests` records (method, path, query) in order."""

    def __init__(self):
        self.requests: list[tuple[str, str, dict]] = []
        self.objects: dict[str, dict] = {}  # path -> object created
        self.daemonsets = [("nvidia-device-plugin-daemonset", 2, 2), ("nvidia-dcgm-exporter", 2, 2)]
        self.unschedulable: set[str] = set()  # pools whose probe pod never gets a node
        self.diag_fails: set[str] = set()
        self.busbw = 180.0
        self.nccl_log: Optional[str] = None  # rank 0's log, when a test gives a real all_reduce_perf table
        self.nccl_phase: Optional[str] = "Succeeded"  # rank 0's end phase; None: the NCCL pods never get a node
        self.refuse = ""  # name prefix whose create answers 409 Conflict
        self.gone = False  # the server cuts every request off (it "died")
        self.allocatable = {k: dict(v) for k, v in ADVERTISED.items()}

    # -- responses ------------------------------------------------------------------------------------------
    def get(self, path: str, query: dict):
        if path.rstrip("/") == "/version":
            return {"major": "1", "minor": "33", "gitVersion": "v1.33.0", "buildDate": "", "compiler": "gc",
                    "gitCommit": "", "gitTreeState": "clean", "goVersion": "go1.24", "platform": "linux/amd64"}
        if m := re.fullmatch(r"/apis/apps/v1/namespaces/([^/]+)/daemonsets", path):
            items = [] if m.group(1) != "gpu-operator" else [
                {"metadata": {"name": n, "namespace": "gpu-operator"}, "spec": {"selector": {}, "template": {}},
                 "status": {"desiredNumberScheduled": d, "numberReady": r, "currentNumberScheduled": d,
                            "numberMisscheduled": 0}} for n, d, r in self.daemonsets]
            return {"kind": "DaemonSetList", "apiVersion": "apps/v1", "metadata": {}, "items": items}
        if path == "/api/v1/nodes":
            pool = query["labelSelector"][0].split("=", 1)[1]
            return {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": [{
                "metadata": {"name": f"{pool}-node-1", "labels": {labels.POOL_LABEL: pool}},
                "status": {"allocatable": self.allocatable.get(pool, {}),
                           "conditions": [{"type": "Ready", "status": "True"}]}}]}
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/events", path):
            name = query["fieldSelector"][0].split("involvedObject.name=")[1]
            return {"kind": "EventList", "apiVersion": "v1", "metadata": {}, "items": [
                {"metadata": {"name": "e1", "namespace": m.group(1)}, "involvedObject": {"name": name},
                 "reason": "FailedScheduling", "message": "old", "lastTimestamp": "2026-12-03T01:00:00Z"},
                {"metadata": {"name": "e2", "namespace": m.group(1)}, "involvedObject": {"name": name},
                 "reason": "NotTriggerScaleUp", "message": "pod didn't trigger scale-up: 1 max node group size reached",
                 "lastTimestamp": "2026-12-03T01:00:05Z"}]}
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods", path):  # the diag Job's pod
            job = query["labelSelector"][0].split("=", 1)[1]
            return {"kind": "PodList", "apiVersion": "v1", "metadata": {},
                    "items": [{"metadata": {"name": f"{job}-x1", "namespace": m.group(1)}, "spec": {"containers": [{"name": "verify"}]}}]}
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/log", path):
            name = m.group(2)
            if name.startswith("nccl-allreduce") and self.nccl_log is not None:
                return self.nccl_log
            if name.startswith("nccl-allreduce"):
                return f"NCCL INFO NET/IB : Using [0]mlx5_0\nall_reduce 1073741824 bytes over 16 GPUs: 11.9 ms, algbw 90.0 GB/s, busbw {self.busbw} GB/s\n"
            pool = _pool_of(name)
            if pool in self.diag_fails:
                return "| Diagnostic | Result |\n| Memory | Fail - GPU 3 ECC errors |\n"
            return "| Deployment | Pass |\n"
        if m := re.fullmatch(r"/apis/batch/v1/namespaces/([^/]+)/jobs/([^/]+)/status", path):
            job = self.objects[path[: -len("/status")]]
            pool = _pool_of(m.group(2))
            return {**job, "status": {"failed": 1} if pool in self.diag_fails else {"succeeded": 1}}
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)", path):
            pod = json.loads(json.dumps(self.objects[path]))
            name = m.group(2)
            if name.startswith("nccl-allreduce"):
                pod["status"] = {"phase": self.nccl_phase or "Pending"}
                if self.nccl_phase:
                    pod["spec"]["nodeName"] = f"{name}-node"
            elif _pool_of(name) not in self.unschedulable:
                pod["spec"]["nodeName"] = f"{_pool_of(name)}-node-1"
            return pod
        return None


def _pool_of(name: str) -> str:
    return next(p for p in LAB_POOLS + EFA_POOLS + GKE_POOLS if f"-{p}-" in name)


def _handler(cluster: FakeCluster):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _send(self, code: int, body):
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "text/plain" if isinstance(body, str) else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self):
            url = urlparse(self.path)
            query = parse_qs(url.query)
            cluster.requests.append((self.command, url.path, query))
            return url.path, query

        def do_GET(self):
            path, query = self._record()
            if cluster.gone:
                self.close_connection = True
                return
            body = cluster.get(path, query)
            self._send(404 if body is None else 200, body if body is not None else
                       {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404, "reason": "NotFound"})

        def do_POST(self):
            path, _ = self._record()
            obj = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if cluster.refuse and obj["metadata"]["name"].startswith(cluster.refuse):
                self._send(409, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409,
                                 "reason": "AlreadyExists"})
                return
            cluster.objects[f"{path}/{obj['metadata']['name']}"] = obj
            self._send(201, obj)

        def do_DELETE(self):
            path, _ = self._record()
            if cluster.gone:
                self.close_connection = True
                return
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(200, cluster.objects.get(path, {"kind": "Status", "apiVersion": "v1", "status": "Success"}))

    return Handler


@pytest.fixture
def cluster(tmp_path):
    fake = FakeCluster()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    # shutdown() waits for serve_forever's next poll: 0.5 s by default, after every test.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    fake.kubeconfig = _kubeconfig(tmp_path, f"http://127.0.0.1:{server.server_address[1]}")
    yield fake
    server.shutdown()
    server.server_close()


def _kubeconfig(tmp_path, server: str) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": server}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
        "users": [{"name": "fake", "user": {"token": "t"}}],
    }))
    return str(path)


def _run(cluster, capsys, *extra) -> tuple[int, dict]:
    rc = main(["verify", "lab", "--kubeconfig", cluster.kubeconfig, "--format", "json", *extra])
    captured = capsys.readouterr()
    assert rc != 2, captured.err
    return rc, json.loads(captured.out)


def _outcomes(report: dict) -> set[tuple[str, str, str]]:
    return {(c["check"], c["target"], c["status"]) for c in report["checks"]}


def _posts(cluster) -> list[str]:
    return [k for k in cluster.objects]


def _deletes(cluster) -> list[str]:
    return [p for m, p, _ in cluster.requests if m == "DELETE"]


def test_success_quick_every_pool(cluster, capsys):
    rc, report = _run(cluster, capsys)
    assert rc == 0 and report["ok"] is True
    assert _outcomes(report) == {
        ("components", "NVIDIA GPU Operator", "pass"),
        ("schedule", "l4-shared", "pass"), ("schedule", "h100-mig", "pass"), ("schedule", "a100-rdma", "pass"),
        ("capacity", "l4-shared", "pass"), ("capacity", "h100-mig", "pass"), ("capacity", "a100-rdma", "pass"),
        ("dcgm-diag", "l4-shared", "pass"), ("dcgm-diag", "h100-mig", "skip"), ("dcgm-diag", "a100-rdma", "pass"),
        ("nccl", "a100-rdma", "skip"),
    }
    run_id = report["runId"]
    # Every created object carries the run label, and each was deleted.
    for obj in cluster.objects.values():
        assert obj["metadata"]["labels"][labels.VERIFY_RUN_LABEL] == run_id
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))
    probe = cluster.objects[f"/api/v1/namespaces/default/pods/gpufleet-verify-{run_id}-h100-mig-schedule"]
    assert probe["spec"]["nodeSelector"] == {labels.POOL_LABEL: "h100-mig"}
    assert probe["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/mig-1g.10gb": "1"}
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in probe["spec"]["tolerations"]
    job = cluster.objects[f"/apis/batch/v1/namespaces/default/jobs/gpufleet-verify-{run_id}-a100-rdma-diag"]
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["dcgmi", "diag", "-r", "1"]
    assert job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "8"}


def test_full_runs_nccl_and_reports_no_expected_figure(cluster, capsys):
    rc, report = _run(cluster, capsys, "--pools", "a100-rdma", "--level", "full")
    assert rc == 0
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert nccl["status"] == "skip" and "busbw 180 GB/s; no expected figure" in nccl["detail"]
    job = next(v for k, v in cluster.objects.items() if "/jobs/" in k)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["dcgmi", "diag", "-r", "2"]
    assert {k.rsplit("/", 2)[-2] + "/" + k.rsplit("/", 1)[-1] for k in cluster.objects if "nccl" in k} == {
        "configmaps/nccl-allreduce", "services/nccl-allreduce", "pods/nccl-allreduce-0", "pods/nccl-allreduce-1"}
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_pool_that_never_schedules_times_out_with_its_last_event(cluster, capsys):
    cluster.unschedulable = {"l4-shared"}
    rc, report = _run(cluster, capsys, "--pools", "l4-shared", "--timeout", "0.3")
    assert rc == 1 and report["ok"] is False
    sched = next(c for c in report["checks"] if c["check"] == "schedule")
    assert sched["status"] == "fail"
    assert sched["detail"] == ("not scheduled within 0.3s (last event: NotTriggerScaleUp: pod didn't trigger "
                               "scale-up: 1 max node group size reached)")
    assert ("dcgm-diag", "l4-shared", "skip") in _outcomes(report)
    assert any(m == "GET" and p == "/api/v1/namespaces/default/events" for m, p, _ in cluster.requests)
    assert _deletes(cluster) == _posts(cluster) == [f"/api/v1/namespaces/default/pods/gpufleet-verify-{report['runId']}-l4-shared-schedule"]


def test_failing_diag_fails_with_the_log_line(cluster, capsys):
    cluster.diag_fails = {"a100-rdma"}
    rc, report = _run(cluster, capsys, "--pools", "a100-rdma")
    assert rc == 1
    diag = next(c for c in report["checks"] if c["check"] == "dcgm-diag")
    assert diag["status"] == "fail" and diag["detail"] == "level 1: failed (| Memory | Fail - GPU 3 ECC errors |)"
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_capacity_mismatch_fails(cluster, capsys):
    cluster.allocatable["l4-shared"] = {"nvidia.com/gpu": "4"}
    rc, report = _run(cluster, capsys, "--pools", "l4-shared")
    assert rc == 1
    cap = next(c for c in report["checks"] if c["check"] == "capacity")
    assert cap["status"] == "fail" and cap["detail"] == "l4-shared-node-1: nvidia.com/gpu 4, plan 16"


def test_operator_not_ready_fails(cluster, capsys):
    cluster.daemonsets = [("nvidia-driver-daemonset", 3, 1)]
    rc, report = _run(cluster, capsys, "--pools", "l4-shared")
    assert rc == 1
    assert ("components", "NVIDIA GPU Operator", "fail") in _outcomes(report)


def _direct(cluster, expected: dict, busbw: float):
    """Drive the runner directly with an instance type ("test-host") and the expected figure the test states
    (a bare number, or one of the catalog's figures with its message size)."""
    from kubernetes import config as kube_config

    from gpufleet.app import verify
    from gpufleet.app.plan.stackfile import read_stack_file, stack_path
    from gpufleet.base.spec import load_spec
    from pathlib import Path

    cluster.busbw = busbw
    sf = read_stack_file("lab", stack_path(Path(__file__).resolve().parents[2], "lab"))
    t = verify.targets("lab", load_spec(sf.stack, sf.config, sf.secret_keys))
    pool = dataclasses.replace(verify.select_pools(t, ["a100-rdma"])[0], instance_type="test-host")
    api = kube_config.new_client_from_config(config_file=cluster.kubeconfig)
    return verify.verify(api, t, [pool], level="full", timeout=5, expected=expected)


def test_low_nccl_bandwidth_fails(cluster):
    result = _direct(cluster, {"test-host": 200.0}, busbw=150.0)
    nccl = next(c for c in result.checks if c.name == "nccl")
    assert (nccl.status, nccl.detail) == ("fail", "busbw 150 GB/s, 75% of the expected 200 GB/s (fails below 80%)")
    assert not result.ok
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_nccl_bandwidth_at_floor_passes(cluster):
    result = _direct(cluster, {"test-host": 200.0}, busbw=160.0)
    assert next(c for c in result.checks if c.name == "nccl").status == "pass" and result.ok


P5_TABLE = (Path(__file__).resolve().parents[1] / "fixtures" / "nccl" / "all_reduce_perf-2x-p5.48xlarge-slurm.txt").read_text()


def _nccl_env(cluster) -> list[dict]:
    return [c.get("env", []) for path, o in cluster.objects.items() if "/pods/nccl-allreduce-" in path
            for c in o["spec"]["containers"]]


@pytest.mark.parametrize("measured, status, detail", [
    # The catalog's p5.48xlarge figure: 487.09 GB/s at 16 GiB (gpufleet/base/catalog/nccl_busbw.yaml); 80 % is 389.67.
    (487.09, "pass", "busbw 487.09 GB/s at 17179869184 bytes, 100% of the expected 487.09 GB/s (fails below 80%)"),
    (389.7, "pass", "busbw 389.7 GB/s at 17179869184 bytes, 80% of the expected 487.09 GB/s (fails below 80%)"),
    (300.0, "fail", "busbw 300 GB/s at 17179869184 bytes, 62% of the expected 487.09 GB/s (fails below 80%)"),
])
def test_catalog_figure_compared_at_its_message_size(cluster, measured, status, detail):
    from gpufleet.app import verify

    cluster.nccl_log = P5_TABLE.replace("487.09      0    66109", f"{measured:6.2f}      0    66109")
    result = _direct(cluster, {"test-host": verify.expected_busbw()["p5.48xlarge"]}, busbw=0.0)
    nccl = next(c for c in result.checks if c.name == "nccl")
    assert (nccl.status, nccl.detail) == (status, detail)
    # Both ranks ran the all-reduce at the size the figure was measured at.
    envs = _nccl_env(cluster)
    assert len(envs) == 2 and all({"name": "NCCL_TEST_BYTES", "value": "17179869184"} in env for env in envs)


def test_a_run_without_the_figures_size_fails(cluster):
    from gpufleet.app import verify

    # Bandwidth at 1 GiB only (gpufleet's own line) cannot be judged against a 16 GiB figure.
    result = _direct(cluster, {"test-host": verify.expected_busbw()["p5.48xlarge"]}, busbw=480.0)
    nccl = next(c for c in result.checks if c.name == "nccl")
    assert (nccl.status, nccl.detail) == ("fail", "all-reduce succeeded, no bus bandwidth at 17179869184 bytes in the log")


def test_connection_refused_exits_2_with_one_line(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    rc = main(["verify", "lab", "--kubeconfig", _kubeconfig(tmp_path, f"http://127.0.0.1:{port}")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("gpufleet: cannot reach the API server") and err.count("\n") == 1 and "Traceback" not in err


def test_interrupt_during_wait_cleans_up(cluster, capsys, monkeypatch):
    from gpufleet.app.verify import run

    cluster.unschedulable = {"l4-shared"}

    def interrupt(_):
        raise KeyboardInterrupt

    monkeypatch.setattr(run.time, "sleep", interrupt)
    rc, report = _run(cluster, capsys, "--timeout", "30")
    assert rc == 1 and report["interrupted"] is True
    assert _outcomes(report) == {("components", "NVIDIA GPU Operator", "pass")}  # stopped in l4-shared's wait
    pod = f"/api/v1/namespaces/default/pods/gpufleet-verify-{report['runId']}-l4-shared-schedule"
    assert _posts(cluster) == [pod]
    assert _deletes(cluster) == [pod]  # deleted although the run stopped mid-wait


@pytest.mark.parametrize("argv, message", [
    (["verify", "lab", "--pools", "nope"], "gpufleet: --pools nope: not a GPU pool of stack 'lab' (pools: l4-shared, h100-mig, a100-rdma)\n"),
    (["verify", "lab", "--timeout", "0"], "gpufleet: --timeout 0: must be more than 0 seconds\n"),
    (["verify", "no-such-stack"], None),
])
def test_usage_errors_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    if message:
        assert err == message


def test_refused_create_fails_that_check_and_is_not_deleted(cluster, capsys):
    cluster.refuse = "nccl-allreduce"  # e.g. the user's own example run holds the name: 409
    rc, report = _run(cluster, capsys, "--pools", "a100-rdma", "--level", "full")
    assert rc == 1
    assert ("nccl", "a100-rdma", "fail") in _outcomes(report)
    assert next(c for c in report["checks"] if c["check"] == "nccl")["detail"] == "API error 409 Conflict"
    assert not any("nccl-allreduce" in p for p in _deletes(cluster))
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_markdown_and_text_reports(cluster, capsys):
    cluster.diag_fails = {"l4-shared"}
    assert main(["verify", "lab", "--kubeconfig", cluster.kubeconfig, "--pools", "l4-shared", "--format", "markdown"]) == 1
    md = capsys.readouterr().out.splitlines()
    assert md[0] == "### gpufleet verify `lab` (quick): FAILED"
    assert md[2:4] == ["| check | target | result | seconds | detail |", "|---|---|---|---|---|"]
    assert md[4] == "| components | NVIDIA GPU Operator | PASS |  | 2 DaemonSets Ready in gpu-operator |"
    assert md[-1].startswith("| dcgm-diag | l4-shared | FAIL | ") and md[-1].endswith(
        "| level 1: failed (/ Memory / Fail - GPU 3 ECC errors /) |")
    assert main(["verify", "lab", "--kubeconfig", cluster.kubeconfig, "--pools", "l4-shared"]) == 1
    text = capsys.readouterr().out.splitlines()
    assert text[0].startswith("gpufleet verify lab (quick, run ") and text[0].endswith("): FAILED")
    assert text[1].split() == ["PASS", "components", "NVIDIA", "GPU", "Operator", "2", "DaemonSets", "Ready", "in", "gpu-operator"]


def test_sigterm_during_wait_cleans_up_and_restores_the_handler(cluster, capsys, monkeypatch):
    import os
    import signal

    from gpufleet.app.verify import run

    cluster.unschedulable = {"h100-mig"}
    monkeypatch.setattr(run.time, "sleep", lambda _: os.kill(os.getpid(), signal.SIGTERM))
    before = signal.getsignal(signal.SIGTERM)
    rc, report = _run(cluster, capsys, "--pools", "h100-mig", "--timeout", "30")
    assert rc == 1 and report["interrupted"] is True
    assert _deletes(cluster) == _posts(cluster) == [
        f"/api/v1/namespaces/default/pods/gpufleet-verify-{report['runId']}-h100-mig-schedule"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_queued_pool_schedule_is_skipped_and_gke_managed_stack_has_no_operator_check(cluster, capsys):
    cluster.allocatable["a3mega-queued"] = {"nvidia.com/gpu": "8"}
    rc = main(["verify", "dws-gke", "--kubeconfig", cluster.kubeconfig, "--pools", "a3mega-queued", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert ("schedule", "a3mega-queued", "skip") in _outcomes(report)
    assert _outcomes(report) == {("components", "gpu-stack", "skip"), ("schedule", "a3mega-queued", "skip"),
                                 ("capacity", "a3mega-queued", "pass"), ("dcgm-diag", "a3mega-queued", "skip"),
                                 ("nccl", "a3mega-queued", "skip")}
    assert not any(m == "GET" and "daemonsets" in p for m, p, _ in cluster.requests)
    assert _posts(cluster) == []


def test_api_server_lost_mid_run_exits_2_naming_the_leftovers(cluster, capsys, monkeypatch):
    from gpufleet.app.verify import run

    cluster.unschedulable = {"l4-shared"}
    # The server dies while verify waits for the probe pod: every later request (the deletes too) is cut off.
    monkeypatch.setattr(run.time, "sleep", lambda _: setattr(cluster, "gone", True))
    rc = main(["verify", "lab", "--kubeconfig", cluster.kubeconfig, "--pools", "l4-shared", "--timeout", "30"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("gpufleet: lost the API server: ")
    assert err.endswith("; some objects could not be deleted: kubectl delete pods,jobs,configmaps,services -A "
                        "-l gpufleet.io/verify=" + err.rsplit("=", 1)[1])
    assert any(m == "DELETE" for m, _, _ in cluster.requests)  # it tried


# ---------- EKS EFA pools (stacks/Pulumi.p5-efa.yaml): the all-reduce in the AWS DLC image, compared with the
# catalog's p5.48xlarge figure (487.09 GB/s at 16 GiB, gpufleet/base/catalog/nccl_busbw.yaml) ----------

P5_SIZE = 17179869184


def _script_log(size: int, busbw: float) -> str:
    """What gpufleet's all-reduce (gpufleet/app/verify/nccl/allreduce.py SCRIPT) prints on rank 0, after NCCL's INFO lines."""
    return ("nccl-allreduce-0:1:1 [0] NCCL INFO NET/OFI Selected provider is efa\n"
            "nccl-allreduce-0:1:1 [0] NCCL INFO Using network Libfabric\n"
            f"all_reduce {size} bytes over 16 GPUs: 66.10 ms, algbw 259.9 GB/s, busbw {busbw} GB/s\n")


def _run_efa(cluster, capsys, pool: str, *extra) -> tuple[int, dict]:
    rc = main(["verify", "p5-efa", "--kubeconfig", cluster.kubeconfig, "--format", "json", "--pools", pool,
               "--level", "full", *extra])
    captured = capsys.readouterr()
    assert rc != 2, captured.err
    return rc, json.loads(captured.out)


def _nccl_objects(cluster) -> dict[str, dict]:
    return {k.rsplit("/", 2)[-2] + "/" + k.rsplit("/", 1)[-1]: v for k, v in cluster.objects.items() if "/nccl-allreduce" in k}


@pytest.mark.parametrize("measured, status, detail", [
    (487.09, "pass", f"busbw 487.09 GB/s at {P5_SIZE} bytes, 100% of the expected 487.09 GB/s (fails below 80%)"),
    (389.7, "pass", f"busbw 389.7 GB/s at {P5_SIZE} bytes, 80% of the expected 487.09 GB/s (fails below 80%)"),
    (389.6, "fail", f"busbw 389.6 GB/s at {P5_SIZE} bytes, 80% of the expected 487.09 GB/s (fails below 80%)"),
    (250.0, "fail", f"busbw 250 GB/s at {P5_SIZE} bytes, 51% of the expected 487.09 GB/s (fails below 80%)"),
])
def test_p5_efa_pool_runs_the_all_reduce_against_the_catalog_figure(cluster, capsys, measured, status, detail):
    from gpufleet.base import versions
    from tests.k8s_validate import validate_strict

    cluster.nccl_log = _script_log(P5_SIZE, measured)
    rc, report = _run_efa(cluster, capsys, "p5")
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert (nccl["target"], nccl["status"], nccl["detail"]) == ("p5", status, detail)
    assert rc == (0 if status == "pass" else 1)
    objs = _nccl_objects(cluster)
    assert set(objs) == {"configmaps/nccl-allreduce", "services/nccl-allreduce", "pods/nccl-allreduce-0",
                         "pods/nccl-allreduce-1"}
    for rank in (0, 1):
        spec = objs[f"pods/nccl-allreduce-{rank}"]["spec"]
        c = spec["containers"][0]
        assert c["image"] == versions.efa_nccl_test_image()
        assert c["image"] == "public.ecr.aws/deep-learning-containers/pytorch-training:2.10.0-gpu-py313-cu130-ubuntu22.04-ec2"
        # Every GPU and every EFA interface of a p5.48xlarge (32), the AWS sample's hugepages; no Multus network.
        assert c["resources"]["limits"] == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "hugepages-2Mi": "5120Mi"}
        assert c["resources"]["requests"] == {**c["resources"]["limits"], "memory": "8000Mi"}
        env = {e["name"]: e["value"] for e in c["env"]}
        assert env == {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,NET", "FI_PROVIDER": "efa", "FI_EFA_FORK_SAFE": "1",
                       "NCCL_BUFFSIZE": "8388608", "NCCL_P2P_NET_CHUNKSIZE": "524288", "FI_EFA_USE_DEVICE_RDMA": "1",
                       "NCCL_TEST_BYTES": str(P5_SIZE)}
        assert spec["nodeSelector"] == {labels.POOL_LABEL: "p5"}
        assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}]
        assert "annotations" not in objs[f"pods/nccl-allreduce-{rank}"]["metadata"]
        assert f"--node-rank={rank}" in c["command"][2] and "--nproc-per-node=8" in c["command"][2]
    # What verify sent validates strictly at the stack's Kubernetes version (1.34).
    for obj in objs.values():
        validate_strict(obj, "1.34")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))
    assert all(obj["metadata"]["labels"][labels.VERIFY_RUN_LABEL] == report["runId"] for obj in cluster.objects.values())


def test_p4d_efa_pool_is_measured_without_a_figure(cluster, capsys):
    # p4d.24xlarge has no sourced figure (the source measured p4de): measured at the script's default size, skipped.
    cluster.nccl_log = _script_log(1 << 30, 71.5)
    rc, report = _run_efa(cluster, capsys, "p4d")
    assert rc == 0
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert (nccl["status"], nccl["detail"]) == ("skip", "busbw 71.5 GB/s; no expected figure for p4d.24xlarge in the catalog")
    c = _nccl_objects(cluster)["pods/nccl-allreduce-0"]["spec"]["containers"][0]
    assert c["resources"]["limits"]["vpc.amazonaws.com/efa"] == "4"
    env = {e["name"]: e["value"] for e in c["env"]}
    assert env["FI_EFA_USE_DEVICE_RDMA"] == "1" and "NCCL_TEST_BYTES" not in env
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_efa_all_reduce_that_fails_is_a_failure_and_cleaned_up(cluster, capsys):
    cluster.nccl_phase = "Failed"
    cluster.nccl_log = "nccl-allreduce-0:1:1 [0] NCCL WARN NET/OFI Failed to initialize rdma protocol\n"
    rc, report = _run_efa(cluster, capsys, "p5")
    assert rc == 1
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert (nccl["status"], nccl["detail"]) == ("fail", f"all-reduce failed, no bus bandwidth at {P5_SIZE} bytes in the log")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_efa_ranks_that_never_schedule_time_out_with_the_reason(cluster, capsys):
    cluster.nccl_phase = None  # e.g. nodes without hugepages-2Mi: the ranks stay Pending
    rc, report = _run_efa(cluster, capsys, "p5", "--timeout", "0.3")
    assert rc == 1
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert nccl["status"] == "fail"
    assert nccl["detail"] == ("all-reduce not finished within 0.3s (nccl-allreduce-0 not scheduled, last event: "
                              "NotTriggerScaleUp: pod didn't trigger scale-up: 1 max node group size reached)")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))
    assert {p.rsplit("/", 1)[-1] for p in _deletes(cluster) if "nccl" in p} == {
        "nccl-allreduce", "nccl-allreduce-0", "nccl-allreduce-1"} and sum("nccl" in p for p in _deletes(cluster)) == 4


def test_interrupt_during_the_efa_all_reduce_deletes_its_objects(cluster, capsys, monkeypatch):
    from gpufleet.app.verify import run

    cluster.nccl_phase = None
    real_sleep = run.time.sleep

    def sleep(seconds):
        if any("/nccl-allreduce-1" in k for k in cluster.objects):  # waiting on the all-reduce
            raise KeyboardInterrupt
        real_sleep(0)

    monkeypatch.setattr(run.time, "sleep", sleep)
    rc, report = _run_efa(cluster, capsys, "p5", "--timeout", "30")
    assert rc == 1 and report["interrupted"] is True
    assert any("nccl-allreduce" in p for p in _posts(cluster))
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


# ---------- GKE GPUDirect pools: Google's two-pod NCCL test, rank 0 running all_reduce_perf itself (gpufleet/app/verify/nccl/gke.py);
# no GKE type has a sourced figure, so the measured busbw is reported and the comparison skipped ----------

GKE_STACKS = {"h100-train": ("prod-gke", "a3-highgpu-8g", "TCPX", 4), "a3mega-queued": ("dws-gke", "a3-megagpu-8g", "TCPXO", 8)}


def _all_reduce_perf_log(busbw: float) -> str:
    """nccl-tests all_reduce_perf's table at gpufleet's default 1 GiB (-b and -e both 1073741824), under mpirun."""
    return ("#  Rank  0 Group  0 Pid     42 on nccl-allreduce-0 device  0 [0x04] NVIDIA H100 80GB HBM3\n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
            f"   1073741824     268435456     float     sum      -1   9000.1  119.30  {busbw}      0   9010.2  119.17  223.44      0\n"
            "# Avg bus bandwidth    : 223.5\n")


def _run_gke(cluster, capsys, pool: str, *extra) -> tuple[int, dict]:
    rc = main(["verify", GKE_STACKS[pool][0], "--kubeconfig", cluster.kubeconfig, "--format", "json", "--pools", pool,
               "--level", "full", *extra])
    captured = capsys.readouterr()
    assert rc != 2, captured.err
    return rc, json.loads(captured.out)


@pytest.mark.parametrize("pool", sorted(GKE_STACKS))
def test_gke_gpudirect_pool_runs_all_reduce_perf_and_reports_busbw(cluster, capsys, pool):
    from gpufleet.base import versions
    from tests.k8s_validate import validate_strict

    stack, machine, kind, nics = GKE_STACKS[pool]
    cluster.nccl_log = _all_reduce_perf_log(223.51)
    rc, report = _run_gke(cluster, capsys, pool)
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert (nccl["target"], nccl["status"], nccl["detail"]) == (
        pool, "skip", f"busbw 223.51 GB/s; no expected figure for {machine} in the catalog")
    assert rc == 0
    objs = _nccl_objects(cluster)
    # No ConfigMap of its own: TCPX's scripts come from the nccl-configmap gpufleet installs with the plugin.
    assert set(objs) == {"services/nccl-allreduce", "pods/nccl-allreduce-0", "pods/nccl-allreduce-1"}
    images = versions.GKE_GPUDIRECT_TEST_IMAGES[kind]
    for rank in (0, 1):
        pod = objs[f"pods/nccl-allreduce-{rank}"]
        spec, ann = pod["spec"], pod["metadata"]["annotations"]
        assert json.loads(ann["networking.gke.io/interfaces"]) == [
            {"interfaceName": "eth0", "network": "default"},
            *[{"interfaceName": f"eth{i + 1}", "network": f"{pool}-vpc-{i}"} for i in range(nics)]]
        daemon, test = spec["initContainers"][0], spec["containers"][0]
        assert len(spec["containers"]) == 1  # verify reads the log without naming a container
        assert (daemon["image"], daemon["restartPolicy"]) == (images["rxdm"], "Always")
        assert ann[f"devices.gke.io/container.{daemon['name']}"].startswith("- path: /dev/nvidia0\n")
        assert test["image"] == images["nccl-test"]
        assert test["resources"]["limits"] == {"nvidia.com/gpu": "8"}
        assert spec["nodeSelector"] == {labels.POOL_LABEL: pool}
        # GKE taints its GPU nodes nvidia.com/gpu=present:NoSchedule itself.
        assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"} in spec["tolerations"]
        assert spec["restartPolicy"] == ("Never" if rank == 0 else "OnFailure")
    script = objs["pods/nccl-allreduce-0"]["spec"]["containers"][0]["command"][2]
    assert "all_reduce_perf" in script and "all_gather_perf" not in script
    assert objs["pods/nccl-allreduce-1"]["spec"]["containers"][0]["command"][2] == "service ssh restart\nsleep infinity\n"
    for obj in objs.values():
        validate_strict(obj, "1.34")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))
    assert all(obj["metadata"]["labels"][labels.VERIFY_RUN_LABEL] == report["runId"] for obj in cluster.objects.values())


def test_gke_gpudirect_rdma_pool_runs_all_reduce_perf_from_its_stack_file(cluster, capsys, tmp_path):
    import yaml

    from gpufleet.base import versions
    from tests.k8s_validate import validate_strict
    from tests.unit.test_nccl_gke import rdma_config

    stack_file = tmp_path / "Pulumi.ultra-gke.yaml"
    stack_file.write_text(yaml.safe_dump({"config": rdma_config()}))
    cluster.nccl_log = _all_reduce_perf_log(351.2)
    rc = main(["verify", "ultra-gke", "--config", str(stack_file), "--kubeconfig", cluster.kubeconfig, "--format", "json",
               "--pools", "ultra", "--level", "full"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    report = json.loads(captured.out)
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert (nccl["status"], nccl["detail"]) == ("skip", "busbw 351.2 GB/s; no expected figure for a3-ultragpu-8g in the catalog")
    objs = _nccl_objects(cluster)
    assert set(objs) == {"services/nccl-allreduce", "pods/nccl-allreduce-0", "pods/nccl-allreduce-1"}
    for rank in (0, 1):
        pod = objs[f"pods/nccl-allreduce-{rank}"]
        assert [i["network"] for i in json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])] == [
            "default", *[f"ultra-rdma-{i}" for i in range(8)]]
        assert pod["spec"]["containers"][0]["image"] == versions.GKE_GPUDIRECT_TEST_IMAGES["RDMA"]["nccl-test"]
        assert "initContainers" not in pod["spec"]  # gIB needs no rxdm
    for obj in objs.values():
        validate_strict(obj, "1.34")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_gke_all_reduce_that_fails_is_a_failure_and_cleaned_up(cluster, capsys):
    cluster.nccl_phase = "Failed"
    cluster.nccl_log = "nccl-allreduce-0:1:1 [0] NCCL WARN NET/GPUDirectTCPX : no devices found\n"
    rc, report = _run_gke(cluster, capsys, "h100-train")
    assert rc == 1
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert (nccl["status"], nccl["detail"]) == ("fail", "all-reduce failed, no bus bandwidth in the log")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))


def test_gke_ranks_that_never_schedule_time_out_and_are_cleaned_up(cluster, capsys):
    cluster.nccl_phase = None  # e.g. the queued pool has no nodes yet: the ranks stay Pending
    rc, report = _run_gke(cluster, capsys, "a3mega-queued", "--timeout", "0.3")
    assert rc == 1
    nccl = next(c for c in report["checks"] if c["check"] == "nccl")
    assert nccl["status"] == "fail"
    assert nccl["detail"] == ("all-reduce not finished within 0.3s (nccl-allreduce-0 not scheduled, last event: "
                              "NotTriggerScaleUp: pod didn't trigger scale-up: 1 max node group size reached)")
    assert sorted(_deletes(cluster)) == sorted(_posts(cluster))
    assert {p.rsplit("/", 1)[-1] for p in _deletes(cluster) if "nccl" in p} == {
        "nccl-allreduce", "nccl-allreduce-0", "nccl-allreduce-1"} and sum("nccl" in p for p in _deletes(cluster)) == 3
