"""Unit tests (layer 1): the benchmark's synthetic Karpenter stack is a valid stack (bench/plan.py plans it)."""

import importlib.util

from gpufleet.base.spec import load_spec
from tests.helpers import ROOT, stack_file


def _bench():
    spec = importlib.util.spec_from_file_location("bench_plan", ROOT / "bench" / "plan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_synthetic_karpenter_stack_has_50_valid_nodepools():
    doc = _bench().synthetic_karpenter(50)
    sf = stack_file(doc["config"], "karpenter-50")
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert spec.cluster.eks.autoscaler.kind == "karpenter"
    assert len(spec.node_pools) == 50
    assert {p.capacity for p in spec.node_pools} == {"spot", "on-demand", "reserved"}
