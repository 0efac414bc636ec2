"""The pack's fast servicer (policies/servicer.py) gives exactly pulumi_policy's own servicer's verdicts.

It converts each resource once and lazily, shares the values between rules and indexes the stack, and
it reads the plan's plain inputs as well as the engine's protobuf requests; none of that may change a
verdict: compared diagnostic by diagnostic on every example stack, the broken-stack corpus, the
benchmark's synthetic plan, preview-time unknowns, secrets and policy config.
"""

from __future__ import annotations

import sys

import pytest
from pulumi.runtime.proto import analyzer_pb2

from gpufleet.app.plan.policy_runner import analyze_request, configure_request, plain_resource, stack_request
from gpufleet.policies.pack import servicer, upstream_servicer
from gpufleet.policies.servicer import FastAnalyzerServicer
from tests.helpers import ROOT, plan_config, planned
from tests.policy import fixtures as F

sys.path.insert(0, str(ROOT))
from bench.policy import synthetic  # noqa: E402

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SECRET_SIG = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


def diagnostics(analyzer, resources, config=None, plain: bool = False) -> list[tuple]:
    """Every diagnostic and not-applicable entry, in order, of Analyze on each resource and one AnalyzeStack:
    from the protobuf requests the engine sends, or (`plain`) from the plain inputs `gpufleet plan` hands over."""
    analyzer.Configure(configure_request(config), None)
    out = []
    given = [plain_resource(r) for r in resources] if plain else resources
    for r, original in zip(given, resources):
        response = analyzer.analyze_plain(r) if plain else analyzer.Analyze(analyze_request(r), None)
        out += [("analyze", original.urn, d.policyName, d.enforcementLevel, d.message, d.urn) for d in response.diagnostics]
        out += [("n/a", original.urn, n.policy_name, n.reason) for n in response.not_applicable]
    response = analyzer.analyze_stack_plain(given) if plain else analyzer.AnalyzeStack(stack_request(resources), None)
    out += [("stack", d.policyName, d.enforcementLevel, d.message, d.urn) for d in response.diagnostics]
    return out


def same(resources, config=None) -> list[tuple]:
    """upstream's servicer == the fast one on the engine's requests == the fast one on plain inputs."""
    fast, slow = diagnostics(servicer(), resources, config), diagnostics(upstream_servicer(), resources, config)
    assert fast == slow
    assert diagnostics(servicer(), resources, config, plain=True) == fast
    return fast


def test_the_pack_serves_the_fast_servicer():
    assert isinstance(servicer(), FastAnalyzerServicer)


@pytest.mark.parametrize("stack", sorted(p.name[7:-5] for p in (ROOT / "stacks").glob("Pulumi.*.yaml")))
def test_same_verdicts_on_every_example_stack(stack):
    plan = planned(stack)
    same(plan.resources)


BROKEN = sorted((ROOT / "tests" / "fixtures" / "broken_stacks").glob("*.yaml"))


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_same_verdicts_on_the_broken_stack_corpus(path):
    import yaml

    config = yaml.safe_load(path.read_text())["config"]
    plan = plan_config(config, stack=path.stem, policies=False)
    found = same(plan.resources)
    assert any(d[0] in ("analyze", "stack") and d[-3 if d[0] == "analyze" else 2] == analyzer_pb2.MANDATORY
               for d in found), "every corpus stack has a mandatory finding"


def test_same_verdicts_on_the_benchmark_plan():
    found = same(synthetic(300))
    assert len([d for d in found if d[0] != "n/a"]) > 100


def test_same_verdicts_with_unknowns_secrets_and_config():
    pool = dict(F.NODE_GROUP_IN, scalingConfig={"minSize": UNKNOWN, "maxSize": 4.0, "desiredSize": 0.0},
                taints=UNKNOWN, labels={"team": {**SECRET_SIG, "value": "ml"}})
    spot = dict(F.SPOT_NODE_GROUP_IN, instanceTypes=[UNKNOWN])
    lt = dict(F.LAUNCH_TEMPLATE_IN, networkInterfaces=[{"interfaceType": UNKNOWN}, *F.LAUNCH_TEMPLATE_IN.get("networkInterfaces", [])])
    resources = [
        F.res("aws:eks/nodeGroup:NodeGroup", "unknown-min", pool),
        F.res("aws:eks/nodeGroup:NodeGroup", "unknown-types", spot),
        F.res("aws:ec2/launchTemplate:LaunchTemplate", "unknown-nic", lt),
        F.res("kubernetes:core/v1:ConfigMap", "secret-data", {"data": {**SECRET_SIG, "value": {"x": "y"}}}),
        # Unknown where exemptions are read: upstream cannot tell whether the resource is exempt.
        F.res("aws:eks/nodeGroup:NodeGroup", "unknown-tags", dict(F.NODE_GROUP_IN, tags=UNKNOWN)),
        F.res("aws:ec2/launchTemplate:LaunchTemplate", "unknown-labels", dict(F.LAUNCH_TEMPLATE_IN, tags={"team": UNKNOWN})),
        F.res("aws:eks/cluster:Cluster", "c", F.EKS_CLUSTER_IN),
        F.res("kubernetes:helm.sh/v3:Release", "op", F.OPERATOR_IN),
    ]
    found = same(resources)
    assert any("can't be known during preview" in d[4] for d in found if d[0] == "analyze")
    exempt = {"gpu-pool-scale-to-zero": {"exemptions": {"unknown-min": "reason"}}, "secure-defaults": {"enforcementLevel": "disabled"}}
    same(resources, exempt)


def test_lazy_arguments_have_upstreams_attributes():
    """The servicer builds rule arguments without running upstream's __init__ (policies/servicer.py
    _LazyProps.of): once their deferred parts are read they hold exactly the attributes upstream sets."""
    from pulumi_policy.policy import PolicyResource, ResourceValidationArgs

    from gpufleet.policies.servicer import Converted, LazyPolicyResource, LazyResourceArgs, _Later

    props = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "ng", F.NODE_GROUP_IN)).properties
    pending = {"props": Converted(props), "opts": _Later(lambda _: "opts", None), "provider": _Later(lambda _: None, None)}
    args = LazyResourceArgs.of(LazyResourceArgs.attributes("t", "urn", "n", None, None), dict(pending))
    upstream = ResourceValidationArgs("t", {}, "urn", "n", "opts", None)
    assert (args.props["instanceTypes"][0], args.opts, args.provider) == ("p5.48xlarge", "opts", None)
    assert set(vars(args)) - {"_pending"} == set(vars(upstream))
    assert args.get_config() == upstream.get_config() == {} and args.stack_tags == {}
    resource = LazyPolicyResource.of(LazyPolicyResource.attributes("t", "urn", "n"), dict(pending))
    (resource.props, resource.opts, resource.provider)
    assert set(vars(resource)) - {"_pending"} == set(vars(PolicyResource("t", {}, "urn", "n", "opts", None, None, [], {})))


def remediations(analyzer, resources, config=None) -> list[bytes]:
    analyzer.Configure(configure_request(config), None)
    return [analyzer.Remediate(analyze_request(r), None).SerializeToString(deterministic=True) for r in resources]


def test_same_remediate_answers_without_and_with_a_remediate_level():
    """The engine calls Remediate on every resource before Analyze; the fast servicer answers without
    converting when no policy is at the remediate level, and must answer exactly as upstream does."""
    resources = synthetic(60)
    fast, slow = remediations(servicer(), resources), remediations(upstream_servicer(), resources)
    assert fast == slow and set(fast) == {b""}  # nothing to remediate: an empty response for every resource
    config = {"gpu-pool-taint": {"enforcementLevel": "remediate"}}
    fast, slow = remediations(servicer(), resources, config), remediations(upstream_servicer(), resources, config)
    assert fast == slow
    answer = analyzer_pb2.RemediateResponse.FromString(fast[0])
    assert [(n.policy_name, n.reason) for n in answer.not_applicable] == [("gpu-pool-taint", "Policy does not implement remediate")]


def test_list_elements_read_as_element_by_element():
    """_StructList.elements() (inputs.items' one pass) gives what reading each index gives, and an unknown
    element raises with the same path."""
    from pulumi_policy.proxy import UnknownValueError

    from gpufleet.policies import inputs as I
    from gpufleet.policies.values import struct_props as _props

    def props(inputs):
        struct = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "ng", inputs)).properties
        return _props(struct, struct.SerializeToString(deterministic=True))

    mixed = {"taints": [{"key": "a"}, "x", 2.0, None, [1.0], True]}
    one, other = props(mixed)["taints"], props(mixed)["taints"]
    by_index = [one[i] for i in range(len(one))]

    def plain(value):
        if I.mapping(value):
            return {k: plain(v) for k, v in I.mapping(value).items()}
        return [plain(v) for v in I.items(value)] if isinstance(value, (list, I.Sequence)) and not isinstance(value, str) else value

    assert plain(I.items(other)) == plain(by_index) == [{"key": "a"}, "x", 2.0, None, [1.0], True]
    assert [type(e) for e in I.items(other)] == [type(e) for e in by_index]

    def error(read) -> list:
        with pytest.raises(UnknownValueError) as caught:
            read(props({"taints": [{"key": "a"}, UNKNOWN]})["taints"])
        return caught.value.props

    assert error(I.items) == error(lambda values: [values[i] for i in range(len(values))]) == ["taints", "1"]


def test_stack_index_helpers_keep_stack_order_and_share_facts():
    from gpufleet.policies import inputs as I
    from gpufleet.policies.servicer import IndexedResources

    class R:
        def __init__(self, resource_type):
            self.resource_type = resource_type

    stack = [R("kubernetes:core/v1:ConfigMap"), R("aws:eks/nodeGroup:NodeGroup"), R("kubernetes:core/v1:Namespace"),
             R("kubernetes:core/v1:ConfigMap")]
    kubernetes = lambda t: t.startswith("kubernetes:")  # noqa: E731
    assert I.of_types_where(IndexedResources(stack), kubernetes) == I.of_types_where(stack, kubernetes) == [stack[0], stack[2], stack[3]]
    assert I.of_types_where(IndexedResources(stack), lambda t: t.startswith("gcp:")) == []
    indexed, calls = IndexedResources(stack), []
    assert I.shared(indexed, "k", lambda: calls.append(1) or len(calls)) == I.shared(indexed, "k", lambda: calls.append(1) or len(calls)) == 1
    assert I.shared(stack, "k", lambda: calls.append(1) or len(calls)) == 2  # no index: computed each time


class _AfterReply:
    """What policies/transport.py's context offers: work to run once the answer has gone."""

    def __init__(self):
        self.later = []

    def after_reply(self, work, *args):
        self.later.append((work, args))

    def run(self):
        for work, args in self.later:
            work(*args)


def test_analyze_after_remediate_is_prepared_once_and_only_used_for_the_same_request(monkeypatch):
    """Remediate (nothing at the remediate level) schedules the Analyze of its resource after its answer;
    Analyze answers from that only for an equal request (here also one without Remediate's internal `__`
    keys) and works anything else out afresh; a Configure in between drops it."""
    s = servicer()
    s.Configure(configure_request(), None)
    worked = []
    real = FastAnalyzerServicer._analyze
    monkeypatch.setattr(FastAnalyzerServicer, "_analyze", lambda self, request: worked.append(request.name) or real(self, request))
    untainted = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "h100", F.with_(F.NODE_GROUP_IN, "taints", [])))
    other = analyze_request(F.res("aws:eks/nodeGroup:NodeGroup", "a100", F.NODE_GROUP_IN))
    with_internal = analyzer_pb2.AnalyzeRequest()
    with_internal.CopyFrom(untainted)
    with_internal.properties.fields["__defaults"].list_value.SetInParent()
    upstream = upstream_servicer()
    upstream.Configure(configure_request(), None)

    for remediated, analyzed, fresh in [(untainted, untainted, False), (with_internal, untainted, False), (untainted, other, True)]:
        worked.clear()
        context = _AfterReply()
        assert s.Remediate(remediated, context) == analyzer_pb2.RemediateResponse()
        assert worked == []  # nothing before the answer has gone
        context.run()
        assert worked == [remediated.name]
        assert s.Analyze(analyzed, None) == upstream.Analyze(analyzed, None)
        assert worked == [remediated.name, analyzed.name] if fresh else worked == [remediated.name]

    context = _AfterReply()
    s.Remediate(untainted, context)
    context.run()
    s.Configure(configure_request({"gpu-pool-taint": {"enforcementLevel": "advisory"}}), None)
    worked.clear()
    lowered = upstream_servicer()
    lowered.Configure(configure_request({"gpu-pool-taint": {"enforcementLevel": "advisory"}}), None)
    answer = s.Analyze(untainted, None)
    assert worked == ["h100"] and answer == lowered.Analyze(untainted, None)
    assert {d.enforcementLevel for d in answer.diagnostics if d.policyName == "gpu-pool-taint"} == {analyzer_pb2.ADVISORY}
    assert s.Analyze(untainted, None) == answer  # used once: the next Analyze works it out again
