"""Unit tests (layer 1): the gpufleet:addons spec — defaults, bad input, quota warnings."""

import pytest

from gpufleet.base.spec import SpecError, json_schema, load_spec
from gpufleet.base.capacity import addons_warnings
from gpufleet.base.spec.features.addons import AddonsSpec
from tests.helpers import example_config

SECRET_KEYS = {"gpufleet:sshPrivateKey"}


def _load(addons: dict, stack: str = "t"):
    cfg = example_config("teams")
    cfg["gpufleet:addons"] = addons
    return load_spec(stack, cfg, SECRET_KEYS)


def _problems(addons: dict) -> list[str]:
    with pytest.raises(SpecError) as exc:
        _load(addons)
    return [str(p) for p in exc.value.problems]


def test_everything_is_off_by_default():
    spec = AddonsSpec()
    assert not any(getattr(spec, f).enabled for f in AddonsSpec.model_fields)
    assert [c.name for c in spec.priority_classes.classes] == ["production-inference", "training", "batch-preemptible"]
    values = [c.value for c in spec.priority_classes.classes]
    assert values == sorted(values, reverse=True)


def test_the_example_stack_loads():
    spec = load_spec("teams", example_config("teams"), SECRET_KEYS)
    assert [t.namespace_name for t in spec.addons.kueue.teams] == ["research", "vision-ml"]
    assert addons_warnings("teams", spec) == []


KUEUE = {"enabled": True}

BAD = [
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "a", "queues": [{"pool": "h100"}]}]}},
        "stack 't': gpufleet:addons.kueue.teams[0].queues[0].pool: no node pool of that name (allowed: a100-train, l4-infer) (got 'h100')",
        id="queue-on-unknown-pool",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "a", "queues": [{"pool": "l4-infer"}]}]},
         "volcano": {"enabled": True, "pools": ["l4-infer"]}},
        "stack 't': gpufleet:addons.volcano.pools[0]: pool is also claimed by Kueue (gpufleet:addons.kueue.teams[0].queues[0].pool): "
        "one scheduler per pool (allowed: remove it here or remove the Kueue queue) (got 'l4-infer')",
        id="volcano-and-kueue-on-one-pool",
    ),
    pytest.param(
        {"volcano": {"enabled": True, "pools": ["nope"]}},
        "stack 't': gpufleet:addons.volcano.pools[0]: no node pool of that name (allowed: a100-train, l4-infer) (got 'nope')",
        id="volcano-unknown-pool",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "a", "queues": [{"pool": "l4-infer"}]}, {"name": "a"}]}},
        "stack 't': gpufleet:addons.kueue.teams[1].name: duplicate team name (also teams[0]) (got 'a')",
        id="duplicate-team",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "a"}, {"name": "b", "namespace": "a"}]}},
        "stack 't': gpufleet:addons.kueue.teams[1].namespace: namespace already used by teams[0] (got 'a')",
        id="shared-namespace",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "a", "queues": [{"pool": "l4-infer"}, {"pool": "l4-infer"}]}]}},
        "stack 't': gpufleet:addons.kueue.teams[0].queues[1].pool: the team already has a queue on this pool "
        "(one queue per team and pool) (got 'l4-infer')",
        id="two-queues-one-pool",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "preemption": {"withinClusterQueue": "Always"}}},
        "stack 't': gpufleet:addons.kueue.preemption.withinClusterQueue: Input should be 'Never', 'LowerPriority' "
        "or 'LowerOrNewerEqualPriority' (got 'Always')",
        id="bad-preemption",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "a", "queues": [{"pool": "l4-infer", "nominalQuota": -1}]}]}},
        "stack 't': gpufleet:addons.kueue.teams[0].queues[0].nominalQuota: Input should be greater than or equal to 0 (got -1)",
        id="negative-quota",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "teams": [{"name": "Team_A"}]}},
        "stack 't': gpufleet:addons.kueue.teams[0].name: String should match pattern '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' (got 'Team_A')",
        id="team-not-dns-label",
    ),
    pytest.param(
        {"kueue": {**KUEUE, "queues": []}},
        "stack 't': gpufleet:addons.kueue.queues: unknown key (allowed: enabled, cohort, preemption, teams, topology)",
        id="unknown-key",
    ),
    pytest.param(
        {"priorityClasses": {"enabled": True, "classes": [{"name": "x", "value": 1}, {"name": "x", "value": 2}]}},
        "stack 't': gpufleet:addons.priorityClasses.classes: duplicate PriorityClass name 'x' (names must be unique)",
        id="duplicate-priority-class",
    ),
    pytest.param(
        {"keda": {"enabled": "sometimes"}},
        "stack 't': gpufleet:addons.keda.enabled: Input should be a valid boolean, unable to interpret input (got 'sometimes')",
        id="bad-bool",
    ),
]


@pytest.mark.parametrize("addons, message", BAD)
def test_bad_input_names_stack_path_value_and_allowed(addons, message):
    assert message in _problems(addons)


def test_settings_of_an_addon_that_is_off_are_refused_naming_both_keys():
    # Teams or pools of an add-on that is off deploy nothing: the author meant one of the two keys.
    with pytest.raises(SpecError) as exc:
        _load({"kueue": {"enabled": False, "teams": [{"name": "a", "queues": [{"pool": "h100"}]}]},
               "volcano": {"enabled": False, "pools": ["h100"]}})
    assert [p.path for p in exc.value.problems] == ["gpufleet:addons.kueue.teams", "gpufleet:addons.volcano.pools"]
    assert all("enabled is false" in p.message for p in exc.value.problems)


def test_quotas_above_the_pool_at_max_size_warn():
    spec = _load({"kueue": {**KUEUE, "teams": [
        {"name": "a", "queues": [{"pool": "a100-train", "nominalQuota": 12}]},
        {"name": "b", "queues": [{"pool": "a100-train", "nominalQuota": 8}, {"pool": "l4-infer", "nominalQuota": 2}]},
    ]}})
    (warning,) = addons_warnings("t", spec)
    assert warning.path == "gpufleet:addons.kueue.teams[1].queues[0].nominalQuota"
    assert str(warning) == (
        "stack 't': gpufleet:addons.kueue.teams[1].queues[0].nominalQuota: nominal quotas on pool 'a100-train' add up to "
        "20 nvidia.com/gpu, more than the pool can ever provide (16 = 8 per node x 2 nodes at max size); queues: "
        "gpufleet:addons.kueue.teams[0].queues[0].nominalQuota, gpufleet:addons.kueue.teams[1].queues[0].nominalQuota (got 20)"
    )


def test_schema_documents_the_addons():
    schema = json_schema()
    addons = schema["properties"]["config"]["properties"]["gpufleet:addons"]
    assert addons["$ref"].endswith("AddonsSpec")
    defs = schema["$defs"]
    assert set(defs["AddonsSpec"]["properties"]) == {"kueue", "jobset", "trainer", "volcano", "priorityClasses", "keda"}
    assert "everything the pool advertises at its maximum size" in defs["QueueSpec"]["properties"]["nominalQuota"]["description"]
