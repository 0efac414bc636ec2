"""`gpufleet init DIR`: a separate infrastructure repository pinned to this release that plans on the first try."""

import tomllib

import pytest
import yaml

from gpufleet.app import init
from gpufleet.app.cli import main
from gpufleet.app.plan.stackfile import read_stack_file
from gpufleet.base.spec import load_spec
from tests.helpers import ROOT

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_init_then_plan_on_the_first_try(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "gpu-infra"
    assert main(["init", str(repo)]) == 0
    out = capsys.readouterr().out
    assert sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()) == [
        ".github/workflows/deploy.yml", ".github/workflows/plan.yml", ".gitignore", "Pulumi.yaml", "__main__.py",
        "requirements.txt", "stacks/Pulumi.dev.yaml"]
    assert out.endswith(f"next: cd {repo} && python -m venv venv && venv/bin/pip install -r requirements.txt && "
                        "venv/bin/gpufleet plan dev\n")
    assert (repo / "requirements.txt").read_text().splitlines()[-1] == f"gpufleet[k3s]=={VERSION}"
    project = yaml.safe_load((repo / "Pulumi.yaml").read_text())
    assert (project["name"], project["stackConfigDir"], project["runtime"]["name"]) == ("gpu-infra", "stacks", "python")
    for workflow in ("plan", "deploy"):
        doc = yaml.safe_load((repo / ".github" / "workflows" / f"{workflow}.yml").read_text())
        steps = [s for job in doc["jobs"].values() for s in job["steps"]]
        assert all("@" in s["uses"] and len(s["uses"].split("@")[1].split()[0]) == 40 for s in steps if "uses" in s)
    monkeypatch.chdir(repo)
    assert main(["plan", "--format", "json"]) == 0  # the stack `dev`, from the new repository's stacks/
    assert '"stack": "dev"' in capsys.readouterr().out


@pytest.mark.parametrize("platform", init.starter_platforms())
def test_every_platforms_first_stack_is_valid(platform, tmp_path):
    assert init.starter_platforms() == ("eks", "gke", "aks", "k3s", "existing")  # every platform offers one
    init.init(tmp_path, platform, "dev", VERSION)
    stack = read_stack_file("dev", tmp_path / "stacks" / "Pulumi.dev.yaml")
    spec = load_spec("dev", stack.config, stack.secret_keys)
    assert spec.cluster.platform == platform and len(spec.node_pools) == 1


def test_init_overwrites_nothing(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\n")
    assert main(["init", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"gpufleet: {tmp_path}: {tmp_path / 'Pulumi.yaml'} already exists; gpufleet init writes a new repository and "
        "overwrites nothing (allowed: an empty or new folder)\n")
    assert (tmp_path / "Pulumi.yaml").read_text() == "name: mine\n" and not (tmp_path / "stacks").exists()
