"""`gpufleet images <stack>` (issue 37): exit codes, the JSON a mirroring tool reads, the text form, and
`gpufleet charts fetch --stack` refusing a bad stack like the other commands."""

from __future__ import annotations

import json

import pytest

from gpufleet.app import cli
from gpufleet.app import images as listing
from tests.helpers import planned

AIRGAP = ("airgap-k3s", "airgap-eks", "airgap-gke")


@pytest.mark.parametrize("stack", AIRGAP)
def test_json_lists_every_image_and_chart_of_the_plan(stack, capsys):
    assert cli.main(["images", stack, "--format", "json"]) == cli.EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"stack", "mirror", "images", "downloads", "unlisted"}
    expected = listing.image_list(planned(stack))
    assert out["images"] == [vars(i) for i in expected.images] and out["unlisted"] == []
    mirror = out["mirror"]
    assert all(i["pull"] == f"{mirror}/{i['source']}" for i in out["images"])
    releases = [r for r in planned(stack).resources if r.type == listing.RELEASE]
    assert len([d for d in out["downloads"] if d["kind"] == "chart"]) == len(releases)


def test_text_has_one_line_per_image_and_download(capsys):
    assert cli.main(["images", "airgap-k3s"]) == cli.EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    found = listing.image_list(planned("airgap-k3s"))
    body = [ln for ln in lines if not ln.startswith("#")]
    assert len(body) == len(found.images) + len(found.downloads)
    assert all(ln.split()[1].startswith(found.mirror + "/") for ln in body[:len(found.images)])


def test_manifests_applied_as_published_are_named_not_hidden(capsys):
    """prod-gke applies Google's GPUDirect manifests: each is a download, and its images are reported unlisted."""
    assert cli.main(["images", "prod-gke", "--format", "json"]) == cli.EXIT_OK
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    manifests = [d for d in out["downloads"] if d["kind"] == "manifest"]
    assert manifests and len(out["unlisted"]) == len(manifests)
    assert "not listed: images of manifest" in captured.err


@pytest.mark.parametrize("command", [["images", "no-such-stack"], ["charts", "fetch", "--stack", "no-such-stack"]])
def test_an_unknown_stack_exits_2(command, capsys, tmp_path):
    extra = ["--dir", str(tmp_path)] if command[0] == "charts" else []
    assert cli.main([*command, *extra]) == cli.EXIT_INVALID
    assert "no-such-stack" in capsys.readouterr().err
