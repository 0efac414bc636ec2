"""CRDs read from a pinned Helm chart archive, within limits, and where those archives are on this machine.

    directory = charts_dir()                                   # $GPUFLEET_CHARTS_DIR, else the per-user cache
    archive = find_archive(versions.JOBSET, directory)         # .../jobset-<version>.tgz, or None
    crds = read_crds(str(archive), dirs=("jobset/crds",))      # [(member, CRD document)], in archive order

The base of two users: the plan validates custom resources against the CRD of the chart that installs them
(gpufleet.app.plan.crd_sources), and the components apply a chart's `crds/` as their own resources before its release
(gpufleet.components.chart_crds, docs/upgrades.md), both from the very archive Helm installs. An archive is a file
anyone who can write the charts directory may have replaced, so it is read within the limits of gpufleet.base.limits
(as a stack file is): at most CHART_ARCHIVE_MAX_MEMBERS entries and CHART_ARCHIVE_MAX_BYTES read through, a CRD file
of at most CHART_MEMBER_MAX_BYTES, UTF-8, whose YAML nests at most CRD_YAML_MAX_DEPTH and holds at most
CRD_YAML_MAX_VALUES values once its aliases are expanded (counted on libyaml's events, which nest no calls, before a
node is composed). Over a limit or malformed: ArchiveRefused (or the tarfile/OS error), with a one-line reason.

The directory holds `<name>-<version>.tgz` files, as `helm pull` names them (helm/helm pkg/downloader/
chart_downloader.go DownloadTo: the file name of the chart's URL, which repositories and gpufleet's pinned archive URLs
spell `<name>-<version>.tgz`, and `<name>-<tag>.tgz` for an OCI chart). A chart version is matched with or without its
leading `v`: NGC publishes `network-operator` as v<version> while a `helm package` of the tag is <version>
(../shared/reference/charts/SOURCES.md, "a leading `v` ignored"). `gpufleet charts fetch` fills the per-user cache
($XDG_CACHE_HOME/gpufleet/charts, default ~/.cache/gpufleet/charts, as the XDG Base Directory specification says).
"""

from __future__ import annotations

import io
import os
import re
import tarfile
from pathlib import Path
from typing import Any, Optional

import yaml

from gpufleet.base import limits
from gpufleet.base.versions import HelmChart, archive_file_names

CHARTS_DIR_ENV = "GPUFLEET_CHARTS_DIR"
HOW_TO_ENABLE = f"run `gpufleet charts fetch`, or set {CHARTS_DIR_ENV} to a directory of the pinned chart archives"


def cache_dir() -> Path:
    """The per-user cache `gpufleet charts fetch` fills. XDG_CACHE_HOME counts only when absolute (the XDG Base
    Directory specification: "If an implementation encounters a relative path ... it should consider the path
    invalid and ignore it")."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "gpufleet" / "charts"


def charts_dir() -> Path:
    """$GPUFLEET_CHARTS_DIR when set, else the per-user cache."""
    given = os.environ.get(CHARTS_DIR_ENV, "")
    return Path(given).expanduser() if given else cache_dir()


def find_archive(chart: HelmChart, directory: Path, suffix: str = ".tgz") -> Optional[Path]:
    """The chart's archive in `directory`, or None."""
    for name in archive_file_names(chart, suffix):
        if (directory / name).is_file():
            return directory / name
    return None


def _value(values: Any, path: str) -> Optional[Any]:
    node = values
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def crd_folders(chart: HelmChart, values: dict) -> tuple[str, ...]:
    """The archive folders of a release's CRDs (HelmChart.crd_dirs): each subchart's only when its condition is true
    in `values` (else its values.yaml default, CrdDir.default), as Helm decides."""
    out = []
    for d in chart.crd_dirs:
        on = _value(values, d.condition) if d.condition else True
        if (d.default if on is None else on) is True:
            out.append(f"{chart.name}/{d.path}")
    return tuple(out)


class ArchiveRefused(Exception):
    """A chart archive (or a file in it) over a limit of gpufleet.base.limits, or not what a chart holds."""


def read_texts(archive: str, wanted: Optional[dict[str, bool]] = None,
               dirs: tuple[str, ...] = ()) -> list[tuple[str, str, bool]]:
    """(member, text, is a Helm template) of the archive's CRD files, in archive order: the members named in `wanted`
    (member -> whether it is a Helm template, see crd_documents), or every `.yaml`/`.yml` file directly in one of the
    folders `dirs` (a chart's `crds/`: plain YAML, never templated, which Helm installs as is). A member stored twice
    (the published archive of the pinned AMD GPU Operator holds each subchart file twice) is read once, its later
    copy, as tar extracts it. Reading stops once every named member is found. Raises ArchiveRefused over a byte or
    entry limit of gpufleet.base.limits, or for a file that is not UTF-8 (the YAML limits are crd_documents')."""
    wanted = dict(wanted or {})
    out: list[tuple[str, str, bool]] = []
    entries = read = 0
    with tarfile.open(archive) as tar:
        while wanted or dirs:
            info = tar.next()  # skips the previous member's data: counted in `read` before it is decompressed
            if info is None:
                break
            entries += 1
            read += max(info.size, 0)
            if entries > limits.CHART_ARCHIVE_MAX_MEMBERS:
                raise ArchiveRefused(f"more than {limits.CHART_ARCHIVE_MAX_MEMBERS:,} entries")
            if read > limits.CHART_ARCHIVE_MAX_BYTES:
                raise ArchiveRefused(f"its files hold more than {limits.CHART_ARCHIVE_MAX_BYTES:,} bytes before "
                                     f"{info.name!r} is read")
            in_dir = info.name.rpartition("/")[0] in dirs and info.name.endswith((".yaml", ".yml"))
            if (info.name not in wanted and not in_dir) or not info.isfile():
                continue
            if info.size > limits.CHART_MEMBER_MAX_BYTES:
                raise ArchiveRefused(f"{info.name} is {info.size:,} bytes, more than the "
                                     f"{limits.CHART_MEMBER_MAX_BYTES:,} a CRD file may hold")
            data = tar.extractfile(info).read(limits.CHART_MEMBER_MAX_BYTES + 1)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ArchiveRefused(f"{info.name} is not UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                                     f"{exc.start})") from None
            if info.name in wanted:
                template = wanted.pop(info.name)
            else:
                template = next((t for name, _, t in out if name == info.name), False)
            out = [entry for entry in out if entry[0] != info.name]  # a name stored twice: the later copy, as tar does
            out.append((info.name, text, template))
    return out


def read_crds(archive: str, wanted: Optional[dict[str, bool]] = None,
              dirs: tuple[str, ...] = ()) -> list[tuple[str, dict]]:
    """(member, CRD) of the CRD files read_texts finds, in archive order. Raises ArchiveRefused over a limit of
    gpufleet.base.limits (the YAML ones included)."""
    out: list[tuple[str, dict]] = []
    for member, text, helm_template in read_texts(archive, wanted, dirs):
        try:
            crds = crd_documents(text, helm_template)
        except ArchiveRefused as exc:
            raise ArchiveRefused(f"{member}: {exc}") from None
        except yaml.YAMLError as exc:
            raise ArchiveRefused(f"{member} is not valid YAML: {one_line(exc)}") from None
        for crd in crds:
            if crd_key(crd) is None:
                raise ArchiveRefused(f"{member} holds a CustomResourceDefinition without spec.group and "
                                     "spec.names.kind strings")
            out.append((member, crd))
    return out


def crd_key(crd: dict) -> Optional[tuple[str, str]]:
    spec = crd.get("spec")
    names = spec.get("names") if isinstance(spec, dict) else None
    group, kind = (spec or {}).get("group"), names.get("kind") if isinstance(names, dict) else None
    return (group, kind) if isinstance(group, str) and isinstance(kind, str) else None


def one_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_yaml_limits(text: str) -> None:
    """Raise ArchiveRefused when the YAML stream nests deeper than CRD_YAML_MAX_DEPTH or holds more than
    CRD_YAML_MAX_VALUES values with its aliases expanded (an alias counts every value of the node it repeats; an
    alias inside the node it names is refused). Reads libyaml's events, which keep their own stack: no Python call
    nests per level, and nothing is composed yet."""
    values = 0
    weights: dict[str, int] = {}  # anchor -> values in its node, the node itself included
    open_nodes: list[list] = []  # [anchor or None, values inside it so far], innermost last
    for event in yaml.parse(io.StringIO(text), Loader=_Loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if len(open_nodes) >= limits.CRD_YAML_MAX_DEPTH:
                raise ArchiveRefused(f"maps and lists nest deeper than {limits.CRD_YAML_MAX_DEPTH} levels "
                                     f"(line {event.start_mark.line + 1})")
            open_nodes.append([event.anchor, 0])
            added = 1
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, inside = open_nodes.pop()
            if anchor is not None:
                weights[anchor] = inside + 1
            if open_nodes:
                open_nodes[-1][1] += inside + 1
            continue
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                weights[event.anchor] = 1
            added = 1
        elif isinstance(event, yaml.AliasEvent):
            added = weights.get(event.anchor, 0)
            if not added:  # its node is still open (or the anchor is unknown, which the composer refuses anyway)
                raise ArchiveRefused(f"the alias *{event.anchor} (line {event.start_mark.line + 1}) refers to a "
                                     "map or list that contains it")
        else:
            continue
        values += added
        if values > limits.CRD_YAML_MAX_VALUES:
            raise ArchiveRefused(f"holds more than {limits.CRD_YAML_MAX_VALUES:,} values once its aliases are "
                                 f"expanded (line {event.start_mark.line + 1})")
        if open_nodes and not isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            open_nodes[-1][1] += added


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader (libyaml's when PyYAML has it), reading a bare `=` (YAML 1.1's value key; prometheus-operator's
    matchType enums hold it) as the string it is, as the API server's YAML decoder does."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))

_COMMENT_OPEN = re.compile(r"\{\{-?\s*/\*")
_COMMENT_CLOSE = re.compile(r"\*/\s*-?\}\}")


def _drop_template_comments(text: str) -> str:
    """`text` without its Go template comments, `{{/* ... */}}` or `{{- /* ... */ -}}`, which may span lines
    (licence headers). A comment ends at its first `*/` (text/template's lexer: "comment ends before closing
    delimiter" otherwise). One pass: every search starts where the last one ended."""
    out, at = [], 0
    while True:
        opened = _COMMENT_OPEN.search(text, at)
        if opened is None:
            break
        end = text.find("*/", opened.end())
        closed = _COMMENT_CLOSE.match(text, end) if end >= 0 else None
        if closed is None:
            break  # an unclosed comment: Helm would refuse the template; its lines with `{{` are dropped below
        out.append(text[at:opened.start()])
        at = closed.end()
    out.append(text[at:])
    return "".join(out)


def crd_documents(text: str, helm_template: bool = False) -> list[dict]:
    """The CustomResourceDefinitions in a YAML stream. For a Helm template, its comments and every line with `{{`
    are dropped first: in the CRD templates gpufleet reads they only wrap the file (`if .Values.crds.enabled`) or
    fill metadata and the conversion webhook's service, never the schema. The stream must be within the limits of
    `check_yaml_limits` (ArchiveRefused otherwise)."""
    if helm_template:
        text = _drop_template_comments(text)
        text = "\n".join(line for line in text.splitlines() if "{{" not in line)
    check_yaml_limits(text)
    return [d for d in yaml.load_all(io.StringIO(text), Loader=_Loader)
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


def served_versions(crd: dict) -> tuple[str, ...]:
    """The versions a CRD serves (`served: true`, the default), in its order."""
    spec = crd.get("spec")
    vs = spec.get("versions") if isinstance(spec, dict) else None
    return tuple(v["name"] for v in vs if isinstance(v, dict) and isinstance(v.get("name"), str)
                 and v.get("served", True)) if isinstance(vs, list) else ()


def storage_version(crd: dict) -> Optional[str]:
    """The version a CRD stores its objects at (`storage: true`; the API server requires exactly one)."""
    spec = crd.get("spec")
    vs = spec.get("versions") if isinstance(spec, dict) else None
    for v in vs if isinstance(vs, list) else []:
        if isinstance(v, dict) and v.get("storage") and isinstance(v.get("name"), str):
            return v["name"]
    return None
