"""components/workloads/kueue.py and pool_flavor.py on small flavors (issue 56): the Topology and ResourceFlavor of a
topology-aware pool, the quotas in GPUs and their companions (at, below and above a pool's size), DRA pools' quota
resources and device class mappings, the ClusterQueue per branch, and the LocalQueue's annotations, exactly."""

from __future__ import annotations

import yaml

from gpufleet.base import labels as L
from gpufleet.base.spec.features.addons import KueueSpec, QueueSpec, TeamSpec
from gpufleet.components.workloads import kueue as K
from gpufleet.components.workloads.pool_flavor import PoolFlavor, toleration

EFA = "vpc.amazonaws.com/efa"
TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def _text(value: str) -> str:
    """`value` built at run time, as a caller's values are (the component is usable without a stack): an `is` in
    place of `==` fails on it."""
    return "".join(list(value))


def _flavor(pool="h100", per_node=None, max_nodes=2, **more) -> PoolFlavor:
    more = {k: _text(v) if k in ("capacity", "allocation") else v for k, v in more.items()}
    per_node = {_text(r): n for r, n in (per_node or {L.GPU_RESOURCE: 8, EFA: 32}).items()}
    return PoolFlavor(pool=pool, node_labels={L.POOL_LABEL: pool}, tolerations=[toleration(TAINT)],
                      per_node=per_node, max_nodes=max_nodes, **more)


def _queue(**more) -> QueueSpec:
    return QueueSpec.model_validate({"pool": "h100", **more})


def test_a_topology_aware_flavor_names_its_topology_and_the_topology_its_levels():
    levels = ("cloud.google.com/gce-topology-block", "kubernetes.io/hostname")
    tas = _flavor(topology_levels=levels)
    assert K.topology(tas) == {"levels": [{"nodeLabel": "cloud.google.com/gce-topology-block"},
                                          {"nodeLabel": "kubernetes.io/hostname"}]}
    assert K.resource_flavor(tas) == {"nodeLabels": {L.POOL_LABEL: "h100"}, "topologyName": "h100", "tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]}
    assert "topologyName" not in K.resource_flavor(_flavor())


def test_local_queue_annotations_only_for_the_levels_given():
    assert K.local_queue_annotations(_queue()) == {}
    both = _queue(topology={"required": "a/rack", "preferred": "kubernetes.io/hostname"})
    assert K.local_queue_annotations(both) == {f"{L.QUEUE_TOPOLOGY_ANNOTATION_PREFIX}required-topology": "a/rack",
                                               f"{L.QUEUE_TOPOLOGY_ANNOTATION_PREFIX}preferred-topology": "kubernetes.io/hostname"}
    assert K.local_queue_annotations(_queue(topology={"preferred": "a/rack"})) == {
        f"{L.QUEUE_TOPOLOGY_ANNOTATION_PREFIX}preferred-topology": "a/rack"}


def test_quotas_in_gpus_give_companions_their_share_rounded_up():
    f = _flavor()  # 2 nodes of 8 GPUs and 32 EFA interfaces: 16 GPUs, 64 interfaces
    assert f.at_max_size == {L.GPU_RESOURCE: 16, EFA: 64}
    assert K.in_units(f, 16) == {L.GPU_RESOURCE: 16, EFA: 64}
    assert K.in_units(f, 1) == {L.GPU_RESOURCE: 1, EFA: 4}
    assert K.in_units(f, 3) == {L.GPU_RESOURCE: 3, EFA: 12}
    assert K.in_units(f, 5) == {L.GPU_RESOURCE: 5, EFA: 20}
    assert K.in_units(f, 32) == {L.GPU_RESOURCE: 32, EFA: 64}  # companions never above the pool's
    odd = _flavor(per_node={L.GPU_RESOURCE: 3, EFA: 2}, max_nodes=1)
    assert K.in_units(odd, 1) == {L.GPU_RESOURCE: 1, EFA: 1}  # 2/3 rounds up
    cpu_only = _flavor(per_node={EFA: 4}, max_nodes=1)
    assert K.in_units(cpu_only, 2) == {EFA: 2}


def test_nominal_and_most_admitted_at_and_around_the_pool_s_size():
    f = _flavor()
    assert K.nominal(_queue(), f) == {L.GPU_RESOURCE: 16, EFA: 64}
    assert K.nominal(_queue(nominalQuota=8), f) == {L.GPU_RESOURCE: 8, EFA: 32}
    assert K.most_admitted(_queue(nominalQuota=8), f) == {L.GPU_RESOURCE: 16, EFA: 64}  # no borrowing limit: the pool
    assert K.most_admitted(_queue(nominalQuota=8, borrowingLimit=4), f) == {L.GPU_RESOURCE: 12, EFA: 48}
    assert K.most_admitted(_queue(nominalQuota=8, borrowingLimit=8), f) == {L.GPU_RESOURCE: 16, EFA: 64}
    assert K.most_admitted(_queue(nominalQuota=8, borrowingLimit=9), f) == {L.GPU_RESOURCE: 16, EFA: 64}


def _team(**more) -> TeamSpec:
    return TeamSpec.model_validate({"name": "research", **more})


def test_team_quota_and_per_container_limits_leave_dra_pools_to_kueue():
    pools = {"h100": _flavor(), "b200": _flavor("b200", allocation="dra")}
    team = _team(queues=[{"pool": "h100", "nominalQuota": 8, "borrowingLimit": 4}, {"pool": "b200"}])
    assert K.team_quota(team, pools) == {L.GPU_RESOURCE: 12, EFA: 48}
    assert K.team_quota(_team(queues=team.queues, gpuQuota=10), pools) == {L.GPU_RESOURCE: 10, EFA: 48}
    assert K.team_quota(_team(), pools) == {L.GPU_RESOURCE: 0}
    assert K.max_per_container(team, pools) == {L.GPU_RESOURCE: 8, EFA: 32}
    assert K.max_per_container(_team(queues=[{"pool": "b200"}]), pools) == {}


def test_dra_pools_charge_dra_resources_and_map_their_device_classes():
    mig = f"{L.MIG_RESOURCE_PREFIX}1g.10gb"
    dra = _flavor("b200", per_node={L.GPU_RESOURCE: 8, mig: 7}, allocation="dra")
    assert K.dra_resource(_text(L.GPU_RESOURCE)) == L.DRA_GPU_RESOURCE
    assert K.dra_resource(mig) == f"{L.DRA_MIG_RESOURCE_PREFIX}1g.10gb"
    assert K.dra_resource(EFA) == EFA
    assert K.quota_of(dra, {L.GPU_RESOURCE: 2, mig: 3}) == {L.DRA_GPU_RESOURCE: 2, f"{L.DRA_MIG_RESOURCE_PREFIX}1g.10gb": 3}
    assert K.quota_of(_flavor(), {L.GPU_RESOURCE: 2}) == {L.GPU_RESOURCE: 2}
    mappings = K.device_class_mappings({"b200": dra, "h100": _flavor()}, compute_domains=True)
    assert mappings == [{"name": L.DRA_GPU_RESOURCE, "deviceClassNames": [K.GPU_CLASS]},
                        {"name": f"{L.DRA_MIG_RESOURCE_PREFIX}1g.10gb", "deviceClassNames": ["mig-1g-10gb.gpufleet.io"]},
                        {"name": L.DRA_CHANNEL_RESOURCE, "deviceClassNames": [K.CHANNEL_CLASS]}]
    assert K.device_class_mappings({"b200": dra}, compute_domains=False)[-1]["name"] != L.DRA_CHANNEL_RESOURCE
    # No DRA pool: channels only where device-plugin pools run ComputeDomains.
    assert K.device_class_mappings({"h100": _flavor()}, True, ("h100",)) == [
        {"name": L.DRA_CHANNEL_RESOURCE, "deviceClassNames": [K.CHANNEL_CLASS]}]
    assert K.device_class_mappings({"h100": _flavor()}, True) == []
    assert K.device_class_mappings({"h100": _flavor()}, False, ("h100",)) == []


def test_chart_values_per_metrics_and_mappings():
    assert K.chart_values(False, []) == {}
    assert K.chart_values(True, []) == {"enablePrometheus": True}
    mappings = [{"name": L.DRA_GPU_RESOURCE, "deviceClassNames": [K.GPU_CLASS]}]
    config = yaml.safe_load(K.chart_values(False, mappings)["managerConfig"]["controllerManagerConfigYaml"])
    assert config["resources"] == {"deviceClassMappings": mappings}
    assert config["apiVersion"] == K.DEFAULT_MANAGER_CONFIG["apiVersion"]


def test_cluster_queue_per_branch():
    spec = KueueSpec.model_validate({"enabled": True, "cohort": "lab"})
    team = _team()
    cq = K.cluster_queue(spec, team, _queue(nominalQuota=8, borrowingLimit=4, lendingLimit=2), _flavor())
    assert "admissionChecksStrategy" not in cq
    assert cq["cohortName"] == "lab" and cq["queueingStrategy"] == "BestEffortFIFO"
    assert cq["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": team.namespace_name}}
    assert cq["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
    (group,) = cq["resourceGroups"]
    (flavor,) = group["flavors"]
    assert flavor["name"] == "h100"
    assert flavor["resources"] == [{"name": "cpu", "nominalQuota": K.UNGATED["cpu"]},
                                   {"name": "memory", "nominalQuota": K.UNGATED["memory"]},
                                   {"name": L.GPU_RESOURCE, "nominalQuota": 8, "borrowingLimit": 4, "lendingLimit": 2},
                                   {"name": EFA, "nominalQuota": 32, "borrowingLimit": 16, "lendingLimit": 8}]
    assert group["coveredResources"] == ["cpu", "memory", L.GPU_RESOURCE, EFA]
    for capacity in ("spot", "reserved", "on-demand"):  # sorting before or after "queued": no admission check
        assert "admissionChecksStrategy" not in K.cluster_queue(spec, team, _queue(), _flavor(capacity=capacity))
    queued = K.cluster_queue(spec, team, _queue(), _flavor(capacity="queued"))
    assert queued["admissionChecksStrategy"] == {"admissionChecks": [{"name": "h100-dws", "onFlavors": ["h100"]}]}
    assert all("borrowingLimit" not in r for r in queued["resourceGroups"][0]["flavors"][0]["resources"])
    dra = K.cluster_queue(spec, team, _queue(pool="b200"), _flavor("b200", per_node={L.GPU_RESOURCE: 4}, allocation="dra"),
                          compute_domains=True)
    assert [r["name"] for r in dra["resourceGroups"][0]["flavors"][0]["resources"]] == [
        "cpu", "memory", L.DRA_CHANNEL_RESOURCE, L.DRA_GPU_RESOURCE]
    channel = K.cluster_queue(spec, team, _queue(), _flavor(), compute_domains=True, channel_pools=("h100",))
    assert L.DRA_CHANNEL_RESOURCE in channel["resourceGroups"][0]["coveredResources"]
    assert L.DRA_CHANNEL_RESOURCE not in K.cluster_queue(spec, team, _queue(), _flavor(), compute_domains=True)[
        "resourceGroups"][0]["coveredResources"]
    assert K.admission_check("h100") == {"controllerName": K.PROVISIONING_CONTROLLER, "parameters": {
        "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "h100-dws"}}
    assert K.provisioning_request_config() == {"provisioningClassName": L.GKE_QUEUED_PROVISIONING_CLASS,
                                               "managedResources": [L.GPU_RESOURCE]}


def test_the_args_are_frozen_values():
    assert K.KueueArgs.__dataclass_params__.frozen and PoolFlavor.__dataclass_params__.frozen


def test_a_cluster_queue_covers_channels_only_when_asked():
    spec, dra = KueueSpec.model_validate({"enabled": True}), _flavor("b200", per_node={L.GPU_RESOURCE: 4}, allocation="dra")
    covered = K.cluster_queue(spec, _team(), _queue(pool="b200"), dra)["resourceGroups"][0]["coveredResources"]
    assert covered == ["cpu", "memory", L.DRA_GPU_RESOURCE]  # compute_domains defaults to off


def test_team_quota_adds_every_device_plugin_queue_after_a_dra_one():
    """Issue 56: `continue` -> `break` after a DRA queue, and `+` -> `^` when two queues charge one resource, survived."""
    pools = {"b200": _flavor("b200", allocation="dra"), "h100": _flavor(), "a100": _flavor("a100")}
    team = _team(queues=[{"pool": "b200"}, {"pool": "h100", "nominalQuota": 8, "borrowingLimit": 0},
                         {"pool": "a100", "nominalQuota": 8, "borrowingLimit": 0}])
    assert K.team_quota(team, pools) == {L.GPU_RESOURCE: 16, EFA: 64}
    assert K.max_per_container(team, pools) == {L.GPU_RESOURCE: 8, EFA: 32}


def test_the_kueue_component_checks_admission_on_queued_pools_only():
    import pulumi
    import pulumi_kubernetes as k8s

    from gpufleet.components.cluster_access import ClusterAccess
    from gpufleet.testing import run as run_under_mocks

    pools = {"h100": _flavor(capacity="queued"), "l4": _flavor("l4", per_node={L.GPU_RESOURCE: 1}, topology_levels=("kubernetes.io/hostname",)),
             "a100": _flavor("a100", capacity="reserved"), "t4": _flavor("t4", capacity="spot")}
    spec = KueueSpec.model_validate({"enabled": True, "teams": [{"name": "research", "queues": [
        {"pool": "h100"}, {"pool": "l4"}, {"pool": "a100"}, {"pool": "t4"}]}]})

    def program():
        provider = k8s.Provider("k8s", kubeconfig="apiVersion: v1\nkind: Config\n")
        access = ClusterAccess(name="c", platform="gke", kubernetes_version="1.34", kubeconfig=pulumi.Output.from_input(""),
                               provider=provider)
        K.Kueue("kq", K.KueueArgs(spec, pools), access)

    got = {r.name: r for r in run_under_mocks(program).registrations if r.name.startswith("kq-")}
    assert {"kq-provreq-h100", "kq-topology-l4", "kq-flavor-h100", "kq-flavor-l4"} <= set(got)
    assert [n for n in got if "provreq" in n] == ["kq-provreq-h100"]  # not on-demand, reserved or spot pools
    assert got["kq-topology-l4"].urn in got["kq-flavor-l4"].dependencies
    assert "kq-topology-h100" not in got


def test_quota_of_sums_what_maps_to_one_dra_resource_and_args_default_off():
    dra = _flavor("b200", allocation="dra")
    assert K.quota_of(dra, {L.GPU_RESOURCE: 3, L.DRA_GPU_RESOURCE: 5}) == {L.DRA_GPU_RESOURCE: 8}
    args = K.KueueArgs(KueueSpec(), {})
    assert (args.metrics, args.compute_domains, args.channel_pools, args.namespace) == (False, False, (), "kueue-system")
