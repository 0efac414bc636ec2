"""Property tests (layer 1, hypothesis): random valid k3s stacks plan cleanly; random breakages exit 2
with a message naming the stack and no traceback."""

import contextlib
import io

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpufleet.app import cli
from gpufleet.base import catalog
from tests.helpers import SECRET, plan_config


@st.composite
def k3s_configs(draw):
    addresses = iter(f"192.0.2.{i}" for i in range(1, 255))
    names = iter(f"node-{i}" for i in range(1000))

    def hosts(n):
        return [{"name": next(names), "address": next(addresses)} for _ in range(n)]

    pools = []
    for i in range(draw(st.integers(0, 3))):
        gpu = draw(st.sampled_from(sorted(catalog.gpu_models())))
        # A superchip's node is one tray with a fixed GPU count (gpus.yaml host.gpus_per_node): any other is refused.
        fixed = catalog.gpu_models()[gpu].host_gpus
        pools.append({
            "name": f"pool-{i}",
            "gpu": gpu,
            "gpusPerNode": fixed or draw(st.integers(1, 8)),
            "hosts": hosts(draw(st.integers(1, 3))),
        })
    return {
        "gpufleet:cluster": {
            "platform": "k3s",
            "kubernetesVersion": draw(st.sampled_from(["1.33", "1.34"])),
            "k3s": {"servers": hosts(draw(st.sampled_from([1, 3]))), "agents": hosts(draw(st.integers(0, 2)))},
        },
        "gpufleet:nodePools": pools,
        "gpufleet:gpuOperator": {"driver": {"source": draw(st.sampled_from(["operator", "preinstalled"]))}},
        "gpufleet:sshPrivateKey": SECRET,
    }


BREAKAGES = {
    "negative GPUs": lambda c: c["gpufleet:nodePools"].append({"name": "bad", "gpu": "L4", "gpusPerNode": -1, "hosts": [{"name": "x", "address": "198.51.100.1"}]}),
    "unknown GPU": lambda c: c["gpufleet:nodePools"].append({"name": "bad", "gpu": "Z9", "gpusPerNode": 1, "hosts": [{"name": "x", "address": "198.51.100.1"}]}),
    "typo": lambda c: c["gpufleet:cluster"].update({"kubernetesVersoin": "1.34"}),
    "no address": lambda c: c["gpufleet:cluster"]["k3s"]["servers"][0].pop("address"),
    "even servers": lambda c: c["gpufleet:cluster"]["k3s"].update({"servers": [{"name": "a", "address": "198.51.100.2"}, {"name": "b", "address": "198.51.100.3"}]}),
    "unknown platform": lambda c: c["gpufleet:cluster"].update({"platform": "nomad"}),
    "plain ssh key": lambda c: c.update({"gpufleet:sshPrivateKey": "plain"}),
}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k3s_configs())
def test_random_valid_specs_plan_cleanly(config):
    p = plan_config(config, policies=True)
    hosts = sum(len(pool["hosts"]) for pool in config["gpufleet:nodePools"])
    agents = [r for r in p.resources if r.type == "command:remote:Command" and "-agent-" in r.name]
    assert len(agents) == hosts + len(config["gpufleet:cluster"]["k3s"]["agents"])
    assert not p.has_mandatory_violation


def _run_cli(config, tmp_path_factory):
    path = tmp_path_factory.mktemp("stack") / "Pulumi.prop.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = cli.main(["plan", "prop", "--config", str(path), "--format", "json"])
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(config=k3s_configs(), breakage=st.sampled_from(sorted(BREAKAGES)))
def test_random_invalid_specs_exit_2_without_traceback(config, breakage, tmp_path_factory):
    BREAKAGES[breakage](config)
    code, out, err = _run_cli(config, tmp_path_factory)
    assert code == 2
    # --format json: the error document, no plan (gpufleet/app/json_errors.py)
    assert out.startswith('{\n  "error": {\n    "exitCode": 2,') and '"resources"' not in out
    assert "Traceback" not in err
    assert err.startswith("gpufleet: invalid gpufleet config for stack 'prop'")
