"""Paths that need the internet, on networks without it (issue 49). Which networks have no path out, and what their
nodes still reach, is each platform's `node_egress` trait (EKS `egress: endpoints`, GKE private nodes without Cloud
NAT, k3s `airgap`). Model caches are judged in cold_start.py; here the model servers.

A model server runs `vllm serve <model>` (components/serving/model_server.py serve_command): vLLM takes the model as
"Name or path of the huggingface model to use" and downloads a name from the Hugging Face Hub at start (vLLM engine
arguments, `--model`; docs.vllm.ai/en/stable/configuration/engine_args.html), and `serving.models[].model` takes a Hub
id (it cannot start with '/', so no local path). Behind no egress the download fails and the pod never gets ready.
"""

from __future__ import annotations

from typing import Any

from gpufleet.base import platforms
from gpufleet.base.spec.errors import Problem

NS = "gpufleet"


def check(stack: str, spec: Any) -> list[Problem]:
    if not spec.serving.enabled or not spec.serving.models:
        return []
    egress = platforms.of(spec).addons.node_egress(spec)
    if egress is None:
        return []
    return [Problem(stack, f"{NS}:serving.models[{i}].model", f"{egress[0]}, and vLLM downloads this model from the "
                    "Hugging Face Hub (huggingface.co) when the server starts: give the nodes a path to the internet, "
                    "or serve outside this network", m.model)
            for i, m in enumerate(spec.serving.models)]
