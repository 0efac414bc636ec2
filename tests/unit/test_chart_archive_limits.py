"""Hostile chart archives in the charts directory (issue 48, "What gpufleet reads and writes on disk"): the plan reads
CRDs from them within gpufleet.base.limits, and any archive over a limit or malformed is one "not validated" line,
never a traceback and never gigabytes of memory. Each archive is made here, in tmp, under the name of the pinned
Volcano chart (whose Queue CRD is a plain file, volcano/crd/bases/scheduling.volcano.sh_queues.yaml)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import yaml

from gpufleet.app.plan import crd_sources
from gpufleet.app.plan.cr_check import check_custom_resources
from gpufleet.app.plan.crd_sources import Crd, NotValidated, lookup
from gpufleet.app.plan.custom_resources import _as_json_schema
from gpufleet.app.plan.mocks import Registration
from gpufleet.base import limits, versions

QUEUE = ("scheduling.volcano.sh/v1beta1", "Queue")
MEMBER = "volcano/crd/bases/scheduling.volcano.sh_queues.yaml"


def _crd(schema: dict) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "scheduling.volcano.sh", "names": {"kind": "Queue"},
                     "versions": [{"name": "v1beta1", "served": True, "schema": {"openAPIV3Schema": schema}}]}}


class _Zeros(io.RawIOBase):
    """`size` zero bytes, read in chunks (a big member without holding it in memory)."""

    def __init__(self, size: int):
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = min(len(buf), self.left)
        buf[:n] = bytes(n)
        self.left -= n
        return n


def _archive(tmp_path: Path, member: bytes | None = None, *, size: int | None = None, name: str = MEMBER) -> Path:
    path = tmp_path / f"volcano-{versions.VOLCANO.version}.tgz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo(name)
        if size is not None:
            info.size = size
            tar.addfile(info, io.BufferedReader(_Zeros(size)))
        else:
            info.size = len(member)
            tar.addfile(info, io.BytesIO(member))
    return path


def _not_validated(directory: Path) -> str:
    found = lookup(*QUEUE, directory)
    assert isinstance(found, NotValidated), found
    assert "\n" not in found.reason
    return found.reason


def test_a_good_archive_made_here_is_read(tmp_path):
    """The control: the same archive with a plain CRD validates."""
    _archive(tmp_path, yaml.safe_dump(_crd({"type": "object"})).encode())
    assert isinstance(lookup(*QUEUE, tmp_path), Crd)


def test_a_yaml_bomb_member_is_refused_before_it_expands(tmp_path):
    """Nine levels of nine aliases: 9**9 (387 million) strings once expanded, from a file of 1 kB."""
    lines = ['a0: &a0 "lol"'] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    _archive(tmp_path, ("\n".join(lines) + "\nkind: CustomResourceDefinition\n").encode())
    reason = _not_validated(tmp_path)
    assert f"{MEMBER}: holds more than {limits.CRD_YAML_MAX_VALUES:,} values once its aliases are expanded" in reason


def test_an_alias_inside_the_node_it_names_is_refused(tmp_path):
    _archive(tmp_path, b"spec: &loop {versions: [*loop]}\nkind: CustomResourceDefinition\n")
    assert "the alias *loop (line 1) refers to a map or list that contains it" in _not_validated(tmp_path)


def test_a_huge_member_is_refused_by_its_size_before_it_is_read(tmp_path):
    _archive(tmp_path, size=limits.CHART_MEMBER_MAX_BYTES + 1)
    assert (f"{MEMBER} is {limits.CHART_MEMBER_MAX_BYTES + 1:,} bytes, more than the "
            f"{limits.CHART_MEMBER_MAX_BYTES:,} a CRD file may hold") in _not_validated(tmp_path)


def test_a_huge_member_before_the_crd_is_refused_without_reading_through_it(tmp_path, monkeypatch):
    """Every member is read through (tar is read in order); the archive's total is capped too (lowered here so the
    test writes 2 MB, not 256)."""
    monkeypatch.setattr(limits, "CHART_ARCHIVE_MAX_BYTES", 1024 * 1024)
    _archive(tmp_path, size=2 * 1024 * 1024, name="volcano/padding.bin")
    assert f"its files hold more than {1024 * 1024:,} bytes before 'volcano/padding.bin' is read" in _not_validated(tmp_path)


def test_a_deeply_nested_schema_is_refused_when_read(tmp_path):
    schema: dict = {"type": "string"}
    for _ in range(limits.CRD_YAML_MAX_DEPTH):
        schema = {"type": "object", "properties": {"x": schema}}
    _archive(tmp_path, yaml.safe_dump(_crd(schema)).encode())
    assert f"{MEMBER}: maps and lists nest deeper than {limits.CRD_YAML_MAX_DEPTH} levels" in _not_validated(tmp_path)


def test_the_schema_conversion_needs_no_python_frame_per_level():
    """_as_json_schema walks with its own stack: a schema far deeper than the recursion limit converts."""
    schema: dict = {"type": "string"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"x": schema}}
    out = _as_json_schema(schema)
    for _ in range(5000):
        assert out["additionalProperties"] is False
        out = out["properties"]["x"]
    assert out == {"type": "string"}


def test_malformed_archives_and_crds_are_one_line_each(tmp_path):
    cases = {
        "not-gzip": (b"not a tar archive at all", "cannot be read"),
        "not-utf8": (None, f"{MEMBER} is not UTF-8 (byte 0xff at offset 0)"),
        "not-yaml": (None, f"{MEMBER} is not valid YAML"),
        "no-group": (None, "holds a CustomResourceDefinition without spec.group and spec.names.kind strings"),
        "bad-versions": (None, "does not serve scheduling.volcano.sh/v1beta1 with an openAPIV3Schema"),
    }
    members = {"not-utf8": b"\xff\xfe", "not-yaml": b"kind: [unclosed\n",
               "no-group": b"kind: CustomResourceDefinition\nspec: {names: 5}\n",
               "bad-versions": yaml.safe_dump({**_crd({}), "spec": {"group": "scheduling.volcano.sh",
                                                                     "names": {"kind": "Queue"}, "versions": 5}}).encode()}
    for case, (raw, expected) in cases.items():
        directory = tmp_path / case
        directory.mkdir()
        if raw is not None:
            (directory / f"volcano-{versions.VOLCANO.version}.tgz").write_bytes(raw)
        else:
            _archive(directory, members[case])
        assert expected in _not_validated(directory), case


def test_a_schema_the_validator_cannot_apply_is_a_warning_not_a_traceback(tmp_path):
    """A pattern that is no regular expression: jsonschema raises while validating; the plan warns."""
    _archive(tmp_path, yaml.safe_dump(_crd({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"weight": {"type": "string", "pattern": "(unclosed"}}}}})).encode())
    queue = Registration("urn:q", "kubernetes:scheduling.volcano.sh/v1beta1:Queue", "q", None, True,
                         {"apiVersion": QUEUE[0], "kind": "Queue", "metadata": {"name": "q"}, "spec": {"weight": "1"}})
    problems, warnings = check_custom_resources("test", None, [queue], tmp_path)
    assert problems == []
    [warning] = warnings
    assert warning.message.endswith("Queue not validated against its CRD: its CRD (scheduling.volcano.sh/v1beta1 "
                                    f"Queue, CRD of chart volcano {versions.VOLCANO.version}) cannot be applied: error")


def teardown_module():
    crd_sources._crds_in.cache_clear()  # the archives made here are gone
