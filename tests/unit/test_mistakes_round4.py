"""Issue 49, "Mistakes still missed": each class of realistic mistake that planned clean (AKS limits Azure enforces,
serving shapes against their pool, paths that need egress, DRA under Karpenter, Grace facts, the DRA driver root,
existing-cluster pools that overlap, EKS API inputs) is refused with its exact message, the classes main already
caught stay refused, and a valid stack at the edge of each new rule loads. Cases and their sources:
tests/unit/mistakes_round4_cases.py."""

from __future__ import annotations

import json

import pytest

from gpufleet.base.spec.platforms import eks_endpoints
from tests.helpers import example_config, load_config, spec_problems
from tests.unit import mistakes_round4_cases as round4


def test_every_listed_class_has_new_refusals_and_valid_edges_with_distinct_ids():
    ids = [c[0] for c in round4.CASES] + [v[0] for v in round4.VALID]
    assert len(ids) == len(set(ids))
    assert set(round4.EXPECTED) == {c[0] for c in round4.CASES}
    prefixes = {name.split("-")[0] for name, *_ in round4.NEWLY_REFUSED}
    assert prefixes == {"aks", "serving", "dra", "gb200", "existing", "eks"}


@pytest.mark.parametrize("name, base, change, expected", round4.CASES, ids=[c[0] for c in round4.CASES])
def test_each_mistake_is_refused_with_its_exact_message(name, base, change, expected):
    config = example_config(base)
    change(config)
    assert spec_problems(config, base) == expected


@pytest.mark.parametrize("name, base, change", round4.VALID, ids=[v[0] for v in round4.VALID])
def test_each_valid_stack_at_a_rules_edge_loads(name, base, change):
    config = example_config(base)
    change(config)
    load_config(config, base)


def test_fsx_behind_vpc_endpoints_gets_the_fsx_endpoint():
    """The FSx CSI controller calls the FSx API: a VPC without NAT needs com.amazonaws.<region>.fsx (eks_endpoints.py),
    only when the stack asks for FSx."""
    config = example_config("airgap-eks")
    assert eks_endpoints.interface_services(load_config(config, "airgap-eks")) == ["ec2", "ecr.api", "ecr.dkr", "sts",
                                                                                    "autoscaling"]
    config["gpufleet:cluster"]["eks"]["storage"] = {"fsxLustre": {}}
    assert eks_endpoints.interface_services(load_config(config, "airgap-eks"))[-1] == "fsx"


@pytest.mark.parametrize("name", ["aks-cache-without-rwx-class", "serving-on-a-mig-pool", "dra-pool-under-karpenter"])
def test_gpufleet_plan_exits_2_with_the_lines_and_no_traceback(name, tmp_path, capsys):
    """The CLI on a stack file with the mistake (the issue's AKS model cache once raised a traceback here): exit 2, the
    exact lines on stderr, and under --format json the same lines as the JSON error document on stdout."""
    import yaml

    from gpufleet.app import cli

    _, base, change, expected = next(c for c in round4.CASES if c[0] == name)
    config = example_config(base)
    change(config)
    path = tmp_path / f"Pulumi.{base}.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    assert cli.main(["plan", base, "--config", str(path), "--format", "json"]) == cli.EXIT_INVALID
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    lines = [f"gpufleet: invalid gpufleet config for stack '{base}' ({len(expected)} "
             f"problem{'s' if len(expected) > 1 else ''}):", *(f"  - {line}" for line in expected)]
    assert err.splitlines() == lines
    assert json.loads(out)["error"]["exitCode"] == cli.EXIT_INVALID
