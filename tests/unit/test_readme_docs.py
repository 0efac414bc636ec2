"""The README is the way in (issue 54): it starts with the two commands, stays short, and its lists match the code
(every policy rule, every example stack); every page in docs/ is on its map and links back to it."""

import re

from gpufleet.policies.pack import POLICIES
from tests.helpers import ROOT, STACKS

README = (ROOT / "README.md").read_text()
DOCS = sorted((ROOT / "docs").glob("*.md"))


def between(text: str, marker: str) -> str:
    return text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]


def test_it_starts_with_the_two_commands_and_stays_short():
    lines = README.splitlines()
    assert lines[:4] == ["# gpufleet", "", "```sh", "make plan    # set up .venv with the default stack's platform "
                         "(dev: k3s), then plan that stack offline"]
    assert lines[4].startswith("make test    # ") and "(what .ci/run runs)" in lines[4]
    assert 100 <= len(lines) <= 150
    assert max(len(line) for line in lines if not line.startswith("|")) <= 120


def test_the_rule_list_is_the_packs():
    assert re.findall(r"`([a-z0-9-]+)`", between(README, "rules")) == [p.name for p in POLICIES]
    table = (ROOT / "docs" / "policies.md").read_text()
    assert re.findall(r"^\| `([a-z0-9-]+)` \| (mandatory|advisory) \|", table, re.M) == [
        (p.name, p.enforcement_level.value) for p in POLICIES]


def test_the_stack_list_is_every_example_stack():
    listed = re.findall(r"`([a-z0-9-]+)`", between(README, "stacks"))
    assert sorted(listed) == STACKS and len(listed) == len(set(listed))
    examples = (ROOT / "docs" / "examples.md").read_text()
    assert sorted(re.findall(r"^\| `stacks/Pulumi\.([a-z0-9-]+)\.yaml`", examples, re.M)) == STACKS


def test_every_docs_page_is_on_the_map_and_links_back():
    documentation = README.split("## Documentation", 1)[1]
    assert sorted(set(re.findall(r"\(docs/([a-z0-9-]+\.md)\)", documentation))) == [p.name for p in DOCS]
    for page in DOCS:
        head = page.read_text().splitlines()[:4]
        assert head[0].startswith("# ") and not re.search(r"\(issue \d+\)", head[0]), page.name
        assert head[2].startswith("[Docs map](../README.md#documentation) · See also: "), page.name


def test_no_tracker_numbers_in_headings():
    found = [f"{p.name}: {line}" for p in DOCS for line in p.read_text().splitlines()
             if line.startswith("#") and re.search(r"\(issue \d+\)", line)]
    assert found == []


def test_relative_links_in_docs_resolve():
    broken = []
    for page in [ROOT / "README.md", *DOCS]:
        for target in re.findall(r"\]\(([^)#:\s]+)(?:#[^)]*)?\)", page.read_text()):
            if not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []
