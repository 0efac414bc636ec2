"""The one way data enters a review comment: every name, value, reason and message from a plan, a preview or
an event log goes through `text`, `code` or `block`, and every table cell through `cell`.

What goes into a pull-request comment comes from files a pull request can change (stack files, the plans and
previews made from them), so none of it may act as Markdown or HTML there: no raw HTML (`<img onerror=...>`),
no links (`[x](javascript:...)`), no emphasis, headings or lists, no early end of the hidden marker (`-->`), no
extra table cells (`|`), no new lines, no @-mentions (they notify) and no `#123` issue references (they
cross-link). GitHub renders comments with cmark-gfm (CommonMark + the GFM extensions), then links mentions and
issue references in the resulting text; tests/cli/test_review_escaping.py checks what we write against
cmark-gfm itself (the `cmarkgfm` package).

- `text(v)`: prose. `&`, `<`, `>` (and `|`, for tables) become entities, so no tag, comment end or entity can
  form; the punctuation that opens inline Markdown (code, emphasis, links and images through `[`, GFM
  strikethrough, GitHub's `$` math) is backslash-escaped (CommonMark spec, "Backslash escapes": any ASCII
  punctuation may be escaped); a `-`, `+`, `=` or `1.` that would open a list leads no value; and a zero-width
  space follows every `@` and `#`, as Renovate does for the same reason (renovatebot/renovate
  lib/util/markdown.ts, `sanitizeMarkdown`). Quotes, `(`, `)` and `!` stay as they are: without `<` and `[`
  they mean nothing.
- `code(v)`: a code span. Nothing inside one is Markdown, HTML, a mention or a reference; the span is fenced
  with one more backtick than the longest run in the value (CommonMark spec, "Code spans"), so no value
  closes it early.
- `block(v)`: a fenced code block, fenced likewise.

All three flatten whitespace (a newline would end the table row, list item or blockquote) and replace control
and invisible format characters (NUL, escape sequences, bidirectional overrides) with U+FFFD, so what the
reader sees is what the value is. `limit` cuts the value itself, before escaping, so a cut never splits an
escape or leaves a span open.
"""

from __future__ import annotations

import re
import unicodedata

_REPLACEMENT = "\ufffd"
_ZWSP = "&#8203;"
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;"}
_BACKSLASHED = set("\\`*_[]~$")
"""What opens inline Markdown: code, emphasis, links and images (`[`), strikethrough, math (`$`, GitHub's)."""
_BLOCK_START = re.compile(r"[-+=]|\d{1,9}[.)](?= |$)")
"""What opens a list item, a setext underline or a thematic break at the start of a line (CommonMark spec,
"List items": at most 9 digits then `.` or `)` and a space; `#`, `>` and `*`/`_` are escaped everywhere)."""


def visible(s: str) -> str:
    """`s` with every control and invisible format character (newline and tab too) replaced by U+FFFD."""
    return "".join(_REPLACEMENT if unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs") else ch for ch in s)


def clean(value: object, limit: int | None = None) -> str:
    """One line of visible characters: whitespace runs become one space, control and format characters U+FFFD."""
    out = visible(" ".join(str(value).split()))
    if limit is not None and len(out) > limit:
        out = out[: limit - 1].rstrip() + "…"
    return out


def text(value: object, limit: int | None = None) -> str:
    """`value` as literal text in Markdown prose or a table cell."""
    s = clean(value, limit)
    out = []
    for ch in s:
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch in _BACKSLASHED:
            out.append("\\" + ch)
        elif ch in "@#":
            out.append(ch + _ZWSP)
        else:
            out.append(ch)
    escaped = "".join(out)
    m = _BLOCK_START.match(escaped)
    if m:  # `- x`, `+ x`, `1. x` at the start of a line would open a list
        escaped = escaped[: m.end() - 1] + "\\" + escaped[m.end() - 1:]
    return escaped


def _fence(s: str, minimum: int) -> str:
    longest = max((len(run) for run in re.findall(r"`+", s)), default=0)
    return "`" * max(minimum, longest + 1)


def code(value: object, limit: int | None = None) -> str:
    """`value` as an inline code span: shown verbatim, never parsed."""
    s = clean(value, limit)
    if not s:
        return "` `"
    fence = _fence(s, 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def block(value: object, limit: int | None = None) -> list[str]:
    """`value` (several lines) as a fenced code block: its lines, control characters replaced, verbatim."""
    raw = str(value)
    if limit is not None and len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    lines = [visible(line.expandtabs(4).rstrip()) for line in raw.splitlines()] or [""]
    fence = _fence("\n".join(lines), 3)
    return [fence, *lines, fence]


def cell(markdown: str) -> str:
    """An already escaped table cell: `|` (left only inside code spans) escaped for the GFM table parser.

    GFM spec, "Tables": a pipe inside a cell, code spans included, is written `\\|`."""
    return " ".join(markdown.split()).replace("|", "\\|")
