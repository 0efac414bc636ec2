"""`gpufleet` commands each in a process that has run nothing before, without paying an interpreter's imports each time.

    with Forked() as run:
        code, stdout, stderr = run(["plan", "dev", "--format", "json"], catalog=Path(...))

A fresh `python -m gpufleet.app.cli` spends most of a plan's seconds importing Pulumi and the cloud SDKs. Forked starts
one interpreter that imports them (every platform's sdk_modules, as a fleet worker warms up: gpufleet.app.plan.fleet)
and gpufleet's CLI; each command runs in a child forked from it, so it starts with no earlier command's state, as a
fresh process does. With `catalog` (Forked(catalogs=True)) the interpreter imports nothing of gpufleet: the child
points the catalog reader at that directory, then imports gpufleet and runs the command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

from tests.helpers import ROOT

_SERVER = """
import importlib, json, os, sys
from pathlib import Path
for module in sys.argv[1:]:
    importlib.import_module(module)
print("ready", flush=True)
for line in sys.stdin:
    job = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, path in ((1, job["out"]), (2, job["err"])):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        if job["catalog"]:
            import gpufleet.base.catalog._files as catalog_files
            catalog_files._HERE = Path(job["catalog"])
        from gpufleet.app import cli
        code = cli.main(job["argv"])
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""

def _sdk_modules() -> list[str]:
    """What the interpreter imports before it forks: Pulumi and every platform's SDK modules, no gpufleet module
    (with Forked(catalogs=True) a child imports gpufleet itself, after pointing the catalog reader at its directory,
    as a fresh process would)."""
    from gpufleet.base import platforms

    return ["pulumi", "pulumi.runtime", *(m for name in platforms.names() for m in platforms.get(name).program.sdk_modules)]


class Forked:
    def __init__(self, env: Optional[dict[str, str]] = None, catalogs: bool = False) -> None:
        """`env`: variables set for the interpreter beside this process's environment. `catalogs`: commands may name
        a catalog directory, so the interpreter imports nothing of gpufleet before it forks (each child imports it
        after pointing the catalog reader there); otherwise it imports gpufleet's CLI too, once."""
        self._catalogs = catalogs
        self._dir = tempfile.TemporaryDirectory(prefix="gpufleet-forked-")
        self._count = 0
        self._server = subprocess.Popen([sys.executable, "-c", _SERVER, *_sdk_modules(),
                                         *([] if catalogs else ["gpufleet.app.cli"])], cwd=ROOT, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        assert self._server.stdout.readline().strip() == "ready", "the fork server did not start"

    def __call__(self, argv: list[str], catalog: Optional[Path] = None) -> tuple[int, str, str]:
        assert catalog is None or self._catalogs, "Forked(catalogs=True) runs commands with their own catalog"
        self._count += 1
        out, err = (Path(self._dir.name) / f"{self._count}.{n}" for n in ("out", "err"))
        job = {"argv": argv, "catalog": str(catalog) if catalog else None, "out": str(out), "err": str(err)}
        self._server.stdin.write(json.dumps(job) + "\n")
        self._server.stdin.flush()
        code = int(self._server.stdout.readline())
        return code, out.read_text(), err.read_text()

    def close(self) -> None:
        self._server.stdin.close()
        self._server.wait(timeout=60)
        self._dir.cleanup()

    def __enter__(self) -> "Forked":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
