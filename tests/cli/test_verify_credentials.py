"""`gpufleet verify` and its kubeconfig (issue 48): any client error is one line that never prints a credential, and
`--no-exec-plugins` refuses a kubeconfig that would run a command. No API server is needed: each case fails while
the client loads the kubeconfig or sends its first request (to a closed port on 127.0.0.1)."""

from __future__ import annotations

import json
import socket
import sys

from gpufleet.app.cli import main
from gpufleet.app.verify.kubeconfig import REDACTED, redact

TOKEN = "s3cr3t-token-value"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kubeconfig(tmp_path, user: dict) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{_closed_port()}"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": user}],
    }))
    return str(path)


def _verify(capsys, *argv) -> tuple[int, str]:
    rc = main(["verify", "lab", *argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return rc, err


def test_a_token_ending_in_a_newline_is_one_line_without_the_token(tmp_path, capsys):
    rc, err = _verify(capsys, "--kubeconfig", _kubeconfig(tmp_path, {"token": TOKEN + "\n"}))
    assert rc == 2 and TOKEN not in err
    assert err.endswith("users[0].user.token must be one line of text (it holds a control character, such as a "
                        "newline at its end, or is not a string); its value is not shown\n")


def test_a_token_file_ending_in_a_newline_is_one_line_without_the_token(tmp_path, capsys):
    """The token read from `tokenFile` reaches the request header as it is; http.client refuses it with a message
    that holds the header, which gpufleet prints redacted."""
    token_file = tmp_path / "token"
    token_file.write_text(f"{TOKEN}\n\nsecond line\n")
    rc, err = _verify(capsys, "--kubeconfig", _kubeconfig(tmp_path, {"tokenFile": str(token_file)}))
    assert rc == 2 and TOKEN not in err and "second line" not in err, err
    assert err.startswith("gpufleet: ")


def test_a_malformed_kubeconfig_is_one_line(tmp_path, capsys):
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "c",
                                "clusters": [{"name": "c", "cluster": {"server": "::not a url::"}}],
                                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                                "users": [{"name": "u", "user": {"token": TOKEN}}]}))
    rc, err = _verify(capsys, "--kubeconfig", str(path))
    assert rc == 2 and TOKEN not in err


def test_no_exec_plugins_refuses_a_kubeconfig_that_runs_a_command(tmp_path, capsys):
    ran = tmp_path / "ran"
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": ["-c", f"open({str(ran)!r}, 'w')"], "interactiveMode": "Never"}}
    rc, err = _verify(capsys, "--kubeconfig", _kubeconfig(tmp_path, user), "--no-exec-plugins")
    assert rc == 2 and not ran.exists()
    assert err.endswith("users[0] (u) has `exec`, which runs a command to get a credential, and --no-exec-plugins "
                        "refuses it: use a kubeconfig with a token or a client certificate\n")
    rc, err = _verify(capsys, "--kubeconfig", _kubeconfig(tmp_path, {"auth-provider": {"name": "gcp"}}),
                      "--no-exec-plugins")
    assert rc == 2 and "has `auth-provider`" in err


def test_redact_removes_a_credential_in_every_form_a_message_shows_it():
    message = f"Invalid header value b'Bearer {TOKEN}\\n' (token {TOKEN!r}, auth: Basic dXNlcjpwYXNz)"
    out = redact(message, {TOKEN})
    assert TOKEN not in out and "dXNlcjpwYXNz" not in out
    assert out == f"Invalid header value b'Bearer {REDACTED}\\n' (token '{REDACTED}', auth: Basic {REDACTED})"
