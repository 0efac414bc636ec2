"""Hostile stack names and values in `gpufleet diff` / `gpufleet report` comments (issue 31, pull-request review).

A pull request controls the stack files, so the names and values the review writes into a comment are
attacker-chosen. The comments are checked by what GitHub would make of them: rendered with cmark-gfm
(`cmarkgfm`, GitHub's own Markdown engine) and read back as HTML. A stack name outside `[A-Za-z0-9._-]` or
a reserved one never becomes a file or a marker; every value renders as the literal text it is: no tag, no
link, no extra table cell, no new block, no second HTML comment, no live @-mention or #-reference.
"""

from __future__ import annotations

import copy
import html
import json
from html.parser import HTMLParser

import pytest

from gpufleet.app.cli import EXIT_INVALID, main
from tests.review_plans import eks_plan

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm (GitHub's cmark-gfm) is in the dev extra: pip install -e '.[dev]'")
from cmarkgfm.cmark import Options  # noqa: E402

HOSTILE = [
    "-->",
    "<img src=x onerror=alert(1)>",
    "@someone",
    "`tick` ``two``",
    "a|b|c",
    "line one\nline two\n- item\n# heading",
    "[link](javascript:alert(1))",
    "<!-- gpufleet-review:dev -->",
    "#1 and owner/repo#2",
    "**bold** _em_ ~~strike~~ $x^2$",
    "tab\there\x00nul\x1b[31mred\u202eevil",
    "1. ordered",
    "=====",
    "&amp; &lt;b&gt;",
    "back\\slash\\",
]
ALL = " ".join(HOSTILE)  # one value with everything at once
ALLOWED_TAGS = {"h3", "h4", "p", "br", "strong", "code", "pre", "ul", "li", "blockquote", "details", "summary",
                "table", "thead", "tbody", "tr", "th", "td"}


class Html(HTMLParser):
    """What a rendered comment holds: tags (with attributes), comments, table rows, and where text sits."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.comments: list[str] = []
        self.rows: list[list[int]] = []  # per table: cells per row
        self.text_outside_code: list[str] = []
        self._code = 0
        self._cells = 0
        self.feed(source)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        if tag in ("code", "pre"):
            self._code += 1
        elif tag == "table":
            self.rows.append([])
        elif tag == "tr":
            self._cells = 0
        elif tag in ("td", "th"):
            self._cells += 1

    def handle_endtag(self, tag):
        if tag in ("code", "pre"):
            self._code -= 1
        elif tag == "tr":
            self.rows[-1].append(self._cells)

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        if not self._code:
            self.text_outside_code.append(data)


def render_github(markdown: str) -> Html:
    # UNSAFE keeps raw HTML in the output, so any that got through is seen (GitHub's sanitizer would only hide it).
    return Html(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))


def assert_inert(markdown: str, marker: str) -> Html:
    """The comment renders to the allowed structure only, with `marker` as its one hidden line."""
    assert markdown.split("\n", 1)[0] == marker
    doc = render_github(markdown)
    assert doc.comments == [marker[len("<!--"):-len("-->")]], doc.comments
    assert {t for t, _ in doc.tags} <= ALLOWED_TAGS, {t for t, _ in doc.tags} - ALLOWED_TAGS
    assert all(not attrs for _, attrs in doc.tags), [t for t in doc.tags if t[1]]  # no href, src, onerror, ...
    for rows in doc.rows:
        assert len(set(rows)) == 1, f"a table row has another number of cells than its header: {rows}"
    outside = "".join(doc.text_outside_code)
    for word in ("@someone", "#1", "repo#2"):  # GitHub links these in text, never in code
        assert word not in outside, f"{word!r} would notify or cross-reference"
    return doc


# -- the helpers, one hostile value at a time --------------------------------------------------------------------

@pytest.fixture
def escape():
    from gpufleet.app import escape

    return escape


@pytest.mark.parametrize("value", HOSTILE + [ALL], ids=range(len(HOSTILE) + 1))
def test_text_renders_as_the_literal_value_in_one_paragraph(escape, value):
    out = escape.text(value)
    assert "\n" not in out
    rendered = cmarkgfm.github_flavored_markdown_to_html("x " + out, options=Options.CMARK_OPT_UNSAFE)
    doc = Html(rendered)
    assert [t for t, _ in doc.tags] == ["p"] and not doc.comments
    shown = html.unescape(rendered.strip()[len("<p>"):-len("</p>")]).replace("\u200b", "")
    assert shown == "x " + escape.clean(value)


@pytest.mark.parametrize("value", HOSTILE + [ALL], ids=range(len(HOSTILE) + 1))
def test_code_renders_as_one_code_span_holding_the_value(escape, value):
    rendered = cmarkgfm.github_flavored_markdown_to_html(escape.code(value), options=Options.CMARK_OPT_UNSAFE)
    assert [t for t, _ in Html(rendered).tags] == ["p", "code"]
    inner = rendered.strip()[len("<p><code>"):-len("</code></p>")]
    assert html.unescape(inner) == escape.clean(value)


@pytest.mark.parametrize("value", HOSTILE + [ALL], ids=range(len(HOSTILE) + 1))
def test_values_in_a_table_cell_stay_in_their_cell(escape, value):
    from gpufleet.app.review.markdown import table

    md = "\n".join(table(["a", "b", "c"], [[escape.text(value), escape.code(value), "end"]]))
    doc = render_github(md)
    assert doc.rows == [[3, 3]] and {t for t, _ in doc.tags} <= ALLOWED_TAGS


def test_a_block_is_never_closed_by_its_content(escape):
    lines = escape.block("```\n<img src=x>\n````\nend")
    md = "\n".join(lines)
    doc = render_github(md)
    assert [t for t, _ in doc.tags] == ["pre", "code"]


def test_control_and_invisible_characters_are_replaced_and_values_cut_before_escaping(escape):
    assert escape.clean("a\x00b\x1b[1mc\u202ed\u200be") == "a\ufffdb\ufffd[1mc\ufffdd\ufffde"
    cut = escape.code("`" * 5 + "x" * 50, limit=10)
    assert cut.startswith("``````") and cut.endswith("``````")  # the fence is still longer than the run


# -- stack names ---------------------------------------------------------------------------------------------------

BAD_NAMES = ["fleet", "Fleet", "FLEET", ".", "..", "dev:preview", "x-->", "@someone", "<img src=x onerror=alert(1)>",
             "a/b", "../etc", "line\nbreak", "tick`", "pipe|name", "", "x" * 101, "dev preview", "é"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=range(len(BAD_NAMES)))
def test_names_that_cannot_be_a_file_or_marker_are_refused(name):
    from gpufleet.app.review.summary import stack_name_problem

    assert stack_name_problem(name)


@pytest.mark.parametrize("name", ["dev", "prod-eks", "a.b_c-1", "x" * 100, "fleet2", "my-fleet", "..a"])
def test_pulumi_stack_names_are_accepted(name):
    from gpufleet.app.review.summary import stack_name_problem

    assert stack_name_problem(name) is None


def _fleet(stacks: dict) -> dict:
    return {"fleet": {"summary": []}, "stacks": stacks}


def _named(plan: dict, name: str) -> dict:
    out = copy.deepcopy(plan)
    out["stack"] = name
    return out


def test_a_fleet_with_hostile_stack_names_writes_no_file_or_marker_for_them(tmp_path, capsys):
    base = _fleet({"prod": eks_plan(), "old<b>@gone": _named(eks_plan(), "old<b>@gone")})
    head = _fleet({"prod": eks_plan(capacity_type="SPOT"), **{n: _named(eks_plan(), n) for n in BAD_NAMES}})
    head["stacks"]["dev:preview"] = {"stack": "dev:preview", "status": "invalid", "error": "bad\n```\n<img src=x>"}
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    code = main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--output-dir", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == EXIT_INVALID and "Traceback" not in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["fleet.md", "prod.md"]  # nothing else, nowhere else
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json", "head.json", "out"]
    summary = (tmp_path / "out" / "fleet.md").read_text()
    doc = assert_inert(summary, "<!-- gpufleet-review:fleet -->")
    assert doc.rows == [[5] * (2 + len(BAD_NAMES))]  # header + prod + one row per bad name
    assert summary.count(":x: invalid name") == len(BAD_NAMES)
    assert "#### Invalid stacks" in summary and "Pulumi's stack name rule" in summary and "reserved" in summary
    assert "old" in summary and "pulumi destroy -s old" not in summary  # a removed bad name: named, no command
    assert_inert((tmp_path / "out" / "prod.md").read_text(), "<!-- gpufleet-review:prod -->")
    # stdout (no --output-dir) holds the same, and no per-stack part for a bad name
    main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json")])
    whole = capsys.readouterr().out
    assert whole.count("<!--") == 2 and "<!-- gpufleet-review:prod -->" in whole


def test_a_stack_the_head_cannot_plan_shows_its_message_in_a_block_it_cannot_close(tmp_path, capsys):
    head = _fleet({"prod": {"stack": "prod", "status": "invalid", "error": "bad value\n```\n<img src=x> @someone\n````"}})
    (tmp_path / "base.json").write_text(json.dumps(_fleet({})))
    (tmp_path / "head.json").write_text(json.dumps(head))
    assert main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--output-dir", str(tmp_path)]) == 2
    capsys.readouterr()
    body = (tmp_path / "prod.md").read_text()
    doc = assert_inert(body, "<!-- gpufleet-review:prod -->")
    assert [t for t, _ in doc.tags if t == "pre"] == ["pre"]
    assert_inert((tmp_path / "fleet.md").read_text(), "<!-- gpufleet-review:fleet -->")


@pytest.mark.parametrize("name", ["fleet", "dev:preview", "x-->", "@someone", "a/b"])
def test_diff_of_two_stack_plans_refuses_a_bad_head_stack_name(tmp_path, capsys, name):
    (tmp_path / "base.json").write_text(json.dumps(eks_plan()))
    (tmp_path / "head.json").write_text(json.dumps(_named(eks_plan(), name)))
    code = main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json")])
    out, err = capsys.readouterr()
    assert (code, out) == (EXIT_INVALID, "")
    assert err.startswith(f"gpufleet: head plan: stack {name!r}: ") and "Traceback" not in err


@pytest.mark.parametrize("name", ["fleet", "dev:preview", "x-->", "@someone", "a b"])
def test_report_refuses_a_bad_stack_name(tmp_path, capsys, name):
    preview = tmp_path / "preview.json"
    preview.write_text(json.dumps({"steps": []}))
    code = main(["report", "--preview-json", str(preview), "--stack", name])
    out, err = capsys.readouterr()
    assert (code, out) == (EXIT_INVALID, "")
    assert err.startswith(f"gpufleet: --stack {name!r}: ")


def test_report_refuses_a_bad_stack_name_read_from_the_urns(tmp_path, capsys):
    urn = "urn:pulumi:x-->::gpufleet::kubernetes:core/v1:Namespace::ns"
    preview = tmp_path / "preview.json"
    preview.write_text(json.dumps({"steps": [{"op": "create", "urn": urn, "newState": {"type": "kubernetes:core/v1:Namespace", "inputs": {}}}]}))
    assert main(["report", "--preview-json", str(preview)]) == EXIT_INVALID
    assert "the stack in its URNs, 'x-->'" in capsys.readouterr().err


# -- hostile values from a stack file, in every section of a comment -------------------------------------------

def _hostile_plans() -> tuple[dict, dict]:
    """Base and head plans of stack `prod` whose names, pools, reasons, messages and values are all ALL."""
    base, head = eks_plan(), eks_plan(capacity_type="SPOT", max_nodes=8)
    base["stack"] = ALL  # only the head's name becomes a marker: the base's shows up in a note
    for plan in (base, head):
        plan["capacity"][0]["pool"] = ALL
        plan["capacity"][0]["gpu"] = ALL
        plan["capacity"][0]["advertisedPerNode"] = {ALL: 8}
        plan["cost"]["currency"] = ALL
        plan["cost"]["items"] = [{"key": "k", "name": ALL, "kind": ALL, "count": 1, "unitHourly": 1.0,
                                  "hourlyMin": 1.0, "hourlyMax": 2.0, "source": ALL}]
        plan["cost"]["teams"] = [{"team": ALL, "pool": ALL, "hourlyNominal": 1.0, "hourlyMax": 2.0}]
        for r in plan["resources"]:
            if r["type"] == "kubernetes:helm.sh/v3:Release":
                r["inputs"]["version"] = ALL if plan is head else "v1"
                r["inputs"]["chart"] = ALL
    pvc = {"urn": "urn:pulumi:prod::gpufleet::kubernetes:core/v1:PersistentVolumeClaim::" + ALL,
           "type": "kubernetes:core/v1:PersistentVolumeClaim", "name": ALL, "parent": None,
           "inputs": {"metadata": {"name": ALL}, "spec": {"storageClassName": ALL}}}
    base["resources"].append(pvc)
    changed = copy.deepcopy(pvc)
    changed["inputs"]["metadata"]["name"] = ALL + " renamed"  # replaces it: possible data loss, with a reason
    head["resources"].append(changed)
    node_group = next(r for r in head["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup")
    node_group["inputs"]["labels"] = {"gpufleet.io/pool": ALL}
    head["violations"] = [{"policy": ALL, "level": "mandatory", "urn": node_group["urn"] + ALL, "message": ALL + "\n" + ALL},
                          {"policy": "gpu-operator-version-support", "level": "advisory", "urn": ALL, "message": ALL}]
    base["violations"] = [{"policy": ALL, "level": ALL, "urn": ALL, "message": "resolved " + ALL}]
    return base, head


def test_every_value_in_a_diff_comment_is_inert(tmp_path, capsys):
    base, head = _hostile_plans()
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    code = main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json")])
    md, err = capsys.readouterr()
    assert code == 1 and err == ""  # the mandatory finding blocks; nothing crashed
    doc = assert_inert(md, "<!-- gpufleet-review:prod -->")
    for section in ("Disruptive changes", "Policy verdicts", "GPU capacity", "Cost", "Versions", "Changes by component"):
        assert f"#### {section}" in md or f"#### :warning: {section}" in md or f"#### {section} (" in md
    shown = "".join(doc.text_outside_code).replace("\u200b", "")
    assert "<img src=x onerror=alert(1)>" in shown  # shown to the reader as text, in prose and cells
    assert len(doc.rows) >= 5


def test_every_value_in_a_report_comment_is_inert(tmp_path, capsys):
    urn = "urn:pulumi:prod::gpufleet::gpufleet:index:GpuCluster$kubernetes:core/v1:PersistentVolumeClaim::" + ALL
    preview = {"steps": [{"op": "replace", "urn": urn, "replaceReasons": [ALL], "detailedDiff": {ALL: {"kind": "update-replace"}},
                          "oldState": {"type": "kubernetes:core/v1:PersistentVolumeClaim", "protect": True,
                                       "inputs": {"metadata": {"name": ALL}}},
                          "newState": {"type": "kubernetes:core/v1:PersistentVolumeClaim", "inputs": {"metadata": {"name": "x"}}}}],
               "diagnostics": [{"severity": "error", "urn": urn, "message": ALL}]}
    events = {"policyEvent": {"resourceUrn": urn, "message": ALL + "\n" + ALL, "policyName": ALL,
                              "policyPackName": ALL, "enforcementLevel": "mandatory"}}
    (tmp_path / "preview.json").write_text(json.dumps(preview))
    (tmp_path / "events.jsonl").write_text(json.dumps(events) + "\n")
    code = main(["report", "--preview-json", str(tmp_path / "preview.json"), "--event-log", str(tmp_path / "events.jsonl"),
                 "--stack", "prod"])
    md, err = capsys.readouterr()
    assert code == 1 and err == ""
    assert_inert(md, "<!-- gpufleet-review:prod:preview -->")


def test_the_text_format_carries_no_control_characters(tmp_path, capsys):
    base, head = _hostile_plans()
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--format", "text"])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x00" not in out and "\u202e" not in out


def test_the_plans_own_markdown_keeps_stack_values_inert():
    """`gpufleet plan --format markdown` (and the fleet's) is pasted into issues and comments by hand: the stack name
    (free under --config), exemption and protection reasons and every value reach it escaped."""
    from gpufleet.app.plan.fleet import StackResult, to_markdown as fleet_markdown
    from gpufleet.app.plan.render import to_json, to_markdown
    from tests.helpers import example_config, plan_config

    printable = " ".join(v for v in HOSTILE if "\n" not in v and "\x00" not in v)
    config = example_config("prod-eks")
    config["gpufleet:nodePools"][0]["exemptions"] = {"gpu-pool-scale-to-zero": printable[:190]}
    config["gpufleet:cluster"]["protection"] = {"enabled": False, "reason": printable[:190]}
    plan = plan_config(config, stack="x--><img src=x onerror=alert(1)>@someone")
    markdown = to_markdown(plan)
    assert "onerror" in markdown  # the hostile values are there, as text
    fleet = fleet_markdown([
        StackResult(plan.stack, "ok", to_json(plan), rendered=markdown),
        StackResult(f"{plan.stack}-2", "error", message=f"```\n{printable}\n```"),
    ])
    assert fleet.count("onerror") >= 3
    for text in (markdown, fleet):
        doc = render_github(text)
        assert not doc.comments, doc.comments
        assert {t for t, _ in doc.tags} <= ALLOWED_TAGS, {t for t, _ in doc.tags} - ALLOWED_TAGS
        assert all(not attrs for _, attrs in doc.tags), [t for t in doc.tags if t[1]]
        for rows in doc.rows:
            assert len(set(rows)) == 1, rows
        outside = "".join(doc.text_outside_code)
        assert "@someone" not in outside and "#1" not in outside


COMMANDS = "::error title=owned::pwned ##[warning]legacy"


def test_the_text_format_carries_no_workflow_command(tmp_path, capsys):
    """A CI log runs a line as a GitHub workflow command when, after leading whitespace, it starts with `::`, or when it
    holds `##[` anywhere (actions/runner ActionCommand.cs). Values that start a text line (a pool name, an input path)
    or sit inside one (a policy message) are written inert (issue 48)."""
    base, head = _hostile_plans()
    for plan in (base, head):
        plan["capacity"][0]["pool"] = COMMANDS
    head["violations"][0]["message"] = "\n" + COMMANDS
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    main(["diff", str(tmp_path / "base.json"), str(tmp_path / "head.json"), "--format", "text"])
    out = capsys.readouterr().out
    assert "  \\::error title=owned::pwned #\\#[warning]legacy" in out  # the pool's line, still readable
    assert [line for line in out.splitlines() if line.lstrip().startswith("::") or "##[" in line] == []
