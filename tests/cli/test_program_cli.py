"""`gpufleet plan --program DIR [STACK]`: a Pulumi program folder that is not a gpufleet stack file, planned offline
(gpufleet.testing.plan_directory). Small programs on the Kubernetes provider only, so no cloud SDK loads."""

import json

from gpufleet.app.cli import main

PROGRAM = '''
import pulumi
import pulumi_kubernetes as k8s

config = pulumi.Config()
ns = k8s.core.v1.Namespace("team", metadata={"name": config.require("namespace")})
pulumi.export("namespace", ns.metadata["name"])
'''


def project(tmp_path, program: str = PROGRAM, stacks=("dev",)):
    (tmp_path / "Pulumi.yaml").write_text("name: my-infra\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(program)
    for stack in stacks:
        (tmp_path / f"Pulumi.{stack}.yaml").write_text("config:\n  namespace: research\n")
    return tmp_path


def test_a_program_folder_plans_with_its_project_stack_and_config(tmp_path, capsys):
    code = main(["plan", "--program", str(project(tmp_path)), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["stack"] == "dev"  # the folder's only stack file
    assert [(r["urn"], r["inputs"]["metadata"]["name"]) for r in out["resources"]] == [
        ("urn:pulumi:dev::my-infra::kubernetes:core/v1:Namespace::team", "research")]
    assert out["outputs"] == {"namespace": "research"}
    assert out["cost"]["atLeast"] is True and out["cost"]["unpriced"] == ["the program's cloud resources"]


def test_a_folder_without_pulumi_yaml_is_refused_in_one_line(tmp_path, capsys):
    assert main(["plan", "--program", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"gpufleet: {tmp_path}: no Pulumi.yaml (a Pulumi program's folder has one; `pulumi new python` writes one)\n"


def test_a_missing_stack_names_the_stacks_there(tmp_path, capsys):
    assert main(["plan", "--program", str(project(tmp_path, stacks=("dev", "prod"))), "staging"]) == 2
    assert capsys.readouterr().err == (f"gpufleet: {tmp_path}: no stack file Pulumi.staging.yaml for stack 'staging' "
                                       "(stacks here: dev, prod)\n")


def test_a_failing_program_is_one_line_at_its_own_file_not_a_traceback(tmp_path, capsys):
    folder = project(tmp_path, PROGRAM + "\nraise ValueError('no quota for team')\n")
    assert main(["plan", "--program", str(folder), "dev"]) == 2
    err = capsys.readouterr().err
    line = len(PROGRAM.splitlines()) + 2
    assert err == (f"gpufleet: program {folder} stack 'dev' failed: ValueError: no quota for team at "
                   f"{(folder / '__main__.py').resolve()}:{line}\n")
