"""etcd and kube-apiserver on loopback, with a generated CA, serving certificate and bearer token.

No kubelets, controllers or scheduler run: the API server stores and validates objects (schema, CEL rules,
defaulting), which is what the e2e tier checks. Admission webhooks are off: the charts register webhooks
whose servers are pods, and nothing schedules here (docs/e2e.md).
"""

from __future__ import annotations

import json
import secrets
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from base64 import b64encode
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def generate_pki(d: Path) -> None:
    """ca.crt/key, apiserver.crt/key (SAN 127.0.0.1, localhost), sa.key/pub (service account signing)."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=gpufleet-e2e-ca",
             "-keyout", "ca.key", "-out", "ca.crt", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=kube-apiserver",
             "-keyout", "apiserver.key", "-out", "apiserver.csr", cwd=d)
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n")
    _openssl("x509", "-req", "-in", "apiserver.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", "san.ext", "-out", "apiserver.crt", cwd=d)
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)


@dataclass
class ApiServer:
    """A running etcd + kube-apiserver; `kubeconfig` reaches it as a cluster admin."""

    bin_dir: Path
    work: Path
    port: int = 0
    token: str = ""
    procs: list[subprocess.Popen] = field(default_factory=list)
    startup_seconds: float = 0.0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def ca_pem(self) -> bytes:
        return (self.work / "pki" / "ca.crt").read_bytes()

    @property
    def kubeconfig(self) -> str:
        return json.dumps({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {
                "server": self.url, "certificate-authority-data": b64encode(self.ca_pem).decode()}}],
            "users": [{"name": "admin", "user": {"token": self.token}}],
            "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "admin"}}],
            "current-context": "e2e",
        })

    def start(self, timeout: float = 180) -> "ApiServer":
        started = time.monotonic()
        pki = self.work / "pki"
        pki.mkdir(parents=True)
        generate_pki(pki)
        self.token = secrets.token_hex(24)
        (pki / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        etcd_port, peer_port, self.port = free_port(), free_port(), free_port()
        logs = self.work / "logs"
        logs.mkdir()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        self._spawn("etcd", [
            str(self.bin_dir / "etcd"), "--name", "e2e", "--data-dir", str(self.work / "etcd"),
            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"e2e=http://127.0.0.1:{peer_port}",
            "--listen-metrics-urls", f"http://127.0.0.1:{free_port()}",
            "--log-level", "warn",
        ], logs)
        self._spawn("kube-apiserver", [
            str(self.bin_dir / "kube-apiserver"),
            "--etcd-servers", etcd_url,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(self.port),
            "--cert-dir", str(self.work / "certs"),
            "--tls-cert-file", str(pki / "apiserver.crt"), "--tls-private-key-file", str(pki / "apiserver.key"),
            "--client-ca-file", str(pki / "ca.crt"),
            "--token-auth-file", str(pki / "tokens.csv"),
            "--authorization-mode", "RBAC",
            "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
            "--service-account-key-file", str(pki / "sa.pub"),
            "--service-account-signing-key-file", str(pki / "sa.key"),
            "--service-cluster-ip-range", "10.96.0.0/16",
            # The charts' webhook servers are pods, and no pod runs here: validation is the API server's own.
            "--disable-admission-plugins", "ValidatingAdmissionWebhook,MutatingAdmissionWebhook",
            # As k3s's API server runs (its default): the CSI, GPU and network daemons are privileged pods.
            "--allow-privileged=true",
            "--enable-priority-and-fairness=false",
            "--profiling=false",
            "--v", "1",
        ], logs)
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.request("GET", "/readyz") == "ok":
                    break
            except (OSError, urllib.error.URLError, ValueError):
                pass
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{p.args[0]} exited with {p.returncode}: see {logs}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"API server not ready after {timeout}s: see {logs}")
            time.sleep(0.5)
        self.startup_seconds = time.monotonic() - started
        return self

    def _spawn(self, name: str, argv: list[str], logs: Path) -> None:
        out = open(logs / f"{name}.log", "wb")
        self.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()

    def request(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        """One authenticated API call; JSON in, JSON (or text) out."""
        ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json", "Accept": "application/json"})
        with urllib.request.urlopen(req, context=ctx, timeout=30) as resp:
            text = resp.read().decode()
        try:
            return json.loads(text)
        except ValueError:
            return text

    def install_crds(self, documents: list[dict], timeout: float = 60) -> list[str]:
        """Create CustomResourceDefinitions (as a controller would at run time) and wait until each is
        Established; returns their names."""
        names = []
        for doc in documents:
            if doc and doc.get("kind") == "CustomResourceDefinition":
                self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", doc)
                names.append(doc["metadata"]["name"])
        deadline = time.monotonic() + timeout
        for name in names:
            while True:
                crd = self.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                conditions = {c["type"]: c["status"] for c in (crd.get("status") or {}).get("conditions") or []}
                if conditions.get("Established") == "True":
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"CRD {name} not Established after {timeout}s: {conditions}")
                time.sleep(0.2)
        return names

    def create_node(self, name: str) -> None:
        """A Node object (NotReady: no kubelet behind it) so that NodePatch resources have a target."""
        self.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})


def tools_present(bin_dir: Path) -> list[str]:
    """Names of the binaries the cluster needs that are missing from bin_dir (also checks openssl)."""
    missing = [b for b in ("etcd", "kube-apiserver") if not (bin_dir / b).exists()]
    if shutil.which("openssl") is None:
        missing.append("openssl")
    return missing
