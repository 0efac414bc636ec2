"""Upstream-format tests (layer 3): the ClusterTrainingRuntimes gpufleet creates are the upstream ones.

Compared with kubeflow/trainer v2.3.0 manifests/base/runtimes/*.yaml (../shared/reference/trainer/runtimes-v2.3.0/)
after applying what manifests/overlays/runtimes/kustomization.yaml does (image tags, the webhook-validation
label), and validated strictly against the trainer's ClusterTrainingRuntime CRD (../shared/reference/crds/trainer/).
"""

from __future__ import annotations

import pytest
import yaml

from gpufleet.base import versions
from gpufleet.components.workloads import trainer_runtimes
from tests.crd_validate import validate_cr

FILES = {
    "torch-distributed": "torch_distributed.yaml",
    "deepspeed-distributed": "deepspeed_distributed.yaml",
    "mlx-distributed": "mlx_distributed.yaml",
    "jax-distributed": "jax_distributed.yaml",
    "xgboost-distributed": "xgboost_distributed.yaml",
}


def _overlay(reference) -> tuple[dict, dict]:
    """(image name -> tag, labels) of the runtimes overlay."""
    doc = yaml.safe_load((reference / "trainer" / "overlays-runtimes-kustomization-v2.3.0.yaml").read_text())
    tags = {i["name"]: i["newTag"] for i in doc["images"]}
    labels = {k: v for entry in doc["labels"] for k, v in entry["pairs"].items()}
    return tags, labels


def _apply_overlay(obj, tags: dict):
    """kustomize `images:`: an untagged image named in the overlay gets its newTag."""
    if isinstance(obj, dict):
        return {k: (f"{v}:{tags[v]}" if k == "image" and v in tags else _apply_overlay(v, tags)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_apply_overlay(v, tags) for v in obj]
    return obj


def test_the_reference_is_the_pinned_release(reference):
    assert (reference / "trainer" / f"runtimes-{versions.KUBEFLOW_TRAINER.app_version}").is_dir()
    base = yaml.safe_load((reference / "trainer" / "runtimes-v2.3.0" / "kustomization.yaml").read_text())
    # Every base runtime file is one gpufleet creates (torchtune, a directory of LLM recipes, is left out on purpose).
    assert {r for r in base["resources"] if r.endswith(".yaml")} == set(FILES.values())


@pytest.mark.parametrize("name", sorted(FILES))
def test_runtime_equals_upstream_with_the_overlay(reference, name):
    tags, labels = _overlay(reference)
    upstream = yaml.safe_load((reference / "trainer" / "runtimes-v2.3.0" / FILES[name]).read_text())
    upstream = _apply_overlay(upstream, tags)
    upstream["metadata"]["labels"] = {**upstream["metadata"].get("labels", {}), **labels}
    assert trainer_runtimes.runtime(name) == upstream


@pytest.mark.parametrize("name", sorted(FILES))
def test_runtime_validates_against_the_trainer_crd(reference, name):
    assert validate_cr(trainer_runtimes.runtime(name)) == []


@pytest.mark.parametrize("name", sorted(FILES))
def test_protected_runtime_pods_keep_their_nodes_and_still_validate(reference, name):
    """Issue 51: gpufleet's runtimes (TrainerArgs.protect_pods, on by default) are upstream's plus the annotations
    that keep a running job's node from Karpenter's consolidation and drift and the Cluster Autoscaler's scale-down."""
    protected = trainer_runtimes.runtime(name, protect_pods=True)
    jobs = protected["spec"]["template"]["spec"]["replicatedJobs"]
    assert [j["template"]["spec"]["template"]["metadata"]["annotations"] for j in jobs] == [
        {"karpenter.sh/do-not-disrupt": "true", "cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}] * len(jobs)
    for j in jobs:
        del j["template"]["spec"]["template"]["metadata"]["annotations"]
        if not j["template"]["spec"]["template"]["metadata"]:
            del j["template"]["spec"]["template"]["metadata"]
    assert protected == trainer_runtimes.runtime(name)
    assert validate_cr(trainer_runtimes.runtime(name, protect_pods=True)) == []
