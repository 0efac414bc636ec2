"""Spec checks at their edges (issue 56): each limit exactly at it (taken) and one past it (refused, with the message
that tells the user what to fix), and each branch of the support-calendar warnings on small inputs."""

from __future__ import annotations

import copy
import datetime as dt
from types import SimpleNamespace

import pytest

from gpufleet.base.catalog.lifecycle import Support
from gpufleet.base.spec import SpecError
from gpufleet.base.spec.checks import lifecycle_checks as LC
from gpufleet.base.spec.checks.admission_checks import MPS_MAX_REPLICAS
from gpufleet.base.spec.features.observability import AMP_MIN_SCRAPE_SECONDS
from gpufleet.base.spec.platforms.gke import dws_run_ends
from tests.helpers import example_config, load_config

DAY = dt.date(2026, 12, 5)


def _problems(config) -> list[str]:
    try:
        load_config(config)
    except SpecError as exc:
        return [str(p) for p in exc.problems]
    return []


def _changed(stack: str, change) -> list[str]:
    config = copy.deepcopy(example_config(stack))
    change(config)
    return _problems(config)


def _mps(replicas: int):
    def change(config):
        config["gpufleet:nodePools"][0]["sharing"] = {"mode": "mps", "replicas": replicas}
    return change


def test_mps_replicas_at_the_limit_and_one_past():
    assert MPS_MAX_REPLICAS == 48  # NVIDIA MPS: at most 48 clients per GPU (docs cited in admission_checks.py)
    assert not [p for p in _changed("dev", _mps(MPS_MAX_REPLICAS)) if "sharing.replicas" in p]
    assert [p for p in _changed("dev", _mps(MPS_MAX_REPLICAS + 1)) if "sharing.replicas" in p] == [
        "stack 'test': gpufleet:nodePools[0].sharing.replicas: an MPS server takes at most 48 clients per GPU, so the "
        "device plugin's MPS control daemon refuses more replicas and pool 'l4' advertises no GPU (allowed: 2 to 48; "
        "time-slicing has no such limit) (got 49)"]


def _amp(interval: str):
    def change(config):
        config["gpufleet:observability"] = {"metrics": {"backend": "amp", "scrapeInterval": interval}}
    return change


def test_amp_scrape_interval_at_the_minimum_and_one_second_under():
    assert AMP_MIN_SCRAPE_SECONDS == 30
    assert not [p for p in _changed("prod-eks", _amp("30s")) if "scrapeInterval" in p]
    assert [p for p in _changed("prod-eks", _amp("29s")) if "scrapeInterval" in p] == [
        "stack 'test': gpufleet:observability.metrics.scrapeInterval: the AWS managed collector (amp) scrapes at most "
        "every 30s (allowed: 30s or longer) (got '29s')"]


def _scaling(**scaling):
    def change(config):
        model = config["gpufleet:serving"]["models"][0]
        model["scaling"] = {**(model.get("scaling") or {}), **scaling}
    return change


def test_kv_cache_target_is_a_fraction_up_to_one():
    stack = "inference-k3s"
    ok = [p for p in _changed(stack, _scaling(signal="kvCache", target=1)) if "scaling.target" in p]
    assert ok == []
    assert [p for p in _changed(stack, _scaling(signal="kvCache", target=1.01)) if "scaling.target" in p] == [
        "stack 'test': gpufleet:serving.models[0].scaling.target: kv-cache use is a fraction (0-1] (got 1.01)"]


def test_min_replicas_up_to_max_replicas():
    stack = "inference-k3s"
    assert [p for p in _changed(stack, _scaling(minReplicas=3, maxReplicas=3)) if "minReplicas" in p] == []
    assert [p for p in _changed(stack, _scaling(minReplicas=4, maxReplicas=3)) if "minReplicas" in p] == [
        "stack 'test': gpufleet:serving.models[0].scaling.minReplicas: above maxReplicas (3) (got 4)"]


# --- the support calendars (lifecycle_checks), on small inputs ---------------------------------------

def _support(status="supported", end=None) -> Support:
    return Support("GPU Operator v1", status, end, "the source")


@pytest.mark.parametrize("days,expected", [
    (LC.SUPPORT_WARNING_DAYS + 1, []),
    (LC.SUPPORT_WARNING_DAYS, ["GPU Operator v1 reaches the end of its support in 90 days (2027-03-05; the source); fix it"]),
    (1, ["GPU Operator v1 reaches the end of its support in 1 day (2026-12-06; the source); fix it"]),
    (0, ["GPU Operator v1 reaches the end of its support in 0 days (2026-12-05; the source); fix it"]),
    (-1, ["GPU Operator v1 reached the end of its support on 2026-12-04 (the source); fix it"]),
])
def test_support_warnings_at_the_window_s_edges(days, expected):
    support = _support(end=DAY + dt.timedelta(days=days))
    assert [p.message for p in LC.support_warnings("s", "at", support, DAY, "v1", "fix it")] == expected


@pytest.mark.parametrize("support,expected", [
    (_support(), []),  # no end date: nothing to warn of
    (_support("unknown"), "GPU Operator v1: no support calendar entry (the source), so the end of its support is not checked"),
    (_support("end_of_support"), "GPU Operator v1 is past the end of its support (the source); fix it"),
    (_support("deprecated"), "GPU Operator v1 is deprecated: critical bug and CVE fixes only until the next major is "
                             "released, then end of support (the source); fix it"),
])
def test_support_warnings_per_status(support, expected):
    got = [p.message for p in LC.support_warnings("s", "at", support, DAY, "v1", "fix it")]
    assert got == ([expected] if expected else [])


def _spec(version="1.33") -> SimpleNamespace:
    return SimpleNamespace(cluster=SimpleNamespace(kubernetes_version=version))


def _facts(status="standard", end_standard=None, end_extended=None, sources=("cal",)):
    return SimpleNamespace(status=status, end_of_standard_support=end_standard, end_of_extended_support=end_extended,
                           sources=list(sources))


def _calendar(facts, cost=" at $0.60/h") -> list[str]:
    def lookup(version, day):
        if facts is None:
            raise KeyError(version)
        assert (version, day) == ("1.33", DAY)
        return facts
    return [p.message for p in LC.calendar_warnings("s", _spec(), DAY, "EKS", lookup, cost)]


def test_calendar_warnings_per_branch_and_at_the_window_s_edge():
    assert _calendar(None) == ["EKS 1.33 is not in the catalog's support calendar (gpufleet/base/catalog/kubernetes.yaml): "
                               "its end of standard support is not checked"]
    assert _calendar(_facts()) == []  # standard support without an end date
    far = (DAY + dt.timedelta(days=LC.SUPPORT_WARNING_DAYS + 1)).isoformat()
    assert _calendar(_facts(end_standard=far)) == []
    near = (DAY + dt.timedelta(days=LC.SUPPORT_WARNING_DAYS)).isoformat()
    assert _calendar(_facts(end_standard=near)) == [
        f"EKS 1.33 leaves standard support in 90 days ({near}; cal) at $0.60/h: upgrade before then"]
    assert _calendar(_facts("extended", "2026-06-01", "2027-06-01")) == [
        "EKS 1.33 is past standard support since 2026-06-01 (extended support until 2027-06-01 at $0.60/h); upgrade to a "
        "version in standard support"]
    assert _calendar(_facts("unsupported"), cost="") == [
        "EKS 1.33 is past standard support and out of support: cal; upgrade to a version in standard support"]
    assert _calendar(_facts("unsupported", "2026-06-01", "2027-06-01"), cost="") == [
        "EKS 1.33 is past standard support since 2026-06-01 and out of support (since 2027-06-01): cal; upgrade to a "
        "version in standard support"]


def _lending(nominal: int, lending: int):
    def change(config):
        queue = config["gpufleet:addons"]["kueue"]["teams"][0]["queues"][0]
        queue.update(nominalQuota=nominal, lendingLimit=lending)
    return change


def test_a_queue_lends_at_most_its_nominal_quota():
    """Issue 56: `lendingLimit > nominalQuota` -> `!=` survived: lending exactly the quota, or less, is allowed."""
    for lending in (4, 3, 0):
        assert not [p for p in _changed("teams-eks", _lending(4, lending)) if "lendingLimit" in p], lending
    assert [p for p in _changed("teams-eks", _lending(4, 5)) if "lendingLimit" in p] == [
        "stack 'test': gpufleet:addons.kueue.teams[0].queues[0].lendingLimit: Kueue's ClusterQueue webhook refuses a "
        "lendingLimit above the queue's nominalQuota (4): a queue lends at most what it owns (allowed: 0 to 4) (got 5)"]


def _gateway(**gateway):
    def change(config):
        config["gpufleet:serving"]["gateway"] = gateway
    return change


def test_an_external_reason_belongs_to_an_external_gateway_only():
    """Issue 56: the `not external` test of the reason turned `not not` survived."""
    internal = [p for p in _changed("inference-k3s", _gateway(externalReason="public demo")) if "externalReason" in p]
    assert internal == ["stack 'test': gpufleet:serving.gateway.externalReason: a reason for an external endpoint, but "
                        "exposure is internal: set exposure: external or remove it (got 'public demo')"]
    external = _changed("inference-k3s", _gateway(exposure="external", externalReason="public demo",
                                                  tls={"certificateSecret": "serving-tls"}))
    assert not [p for p in external if "externalReason" in p]


def _rack(value: str):
    def change(config):
        config["gpufleet:nodePools"][0]["hosts"][0]["rack"] = value
    return change


def test_a_host_s_rack_is_a_label_value_of_at_most_63_characters():
    """The rack becomes the node label gpufleet.io/topology-rack: a Kubernetes label value, 63 characters at most
    (k8s.io/apimachinery validation IsValidLabelValue) (issue 56: 63 -> 64 survived)."""
    assert not [p for p in _changed("dev", _rack("r" * 63)) if ".rack" in p]
    assert [p for p in _changed("dev", _rack("r" * 64)) if ".rack" in p] == [
        "stack 'test': gpufleet:nodePools[0].hosts[0].rack: String should have at most 63 characters (got '" + "r" * 64 + "')"]


def test_aks_warns_within_the_window_before_community_support_ends():
    """Issue 56: the `status == "unsupported"` test turned `<=` survived (it silenced every standard-support warning)."""
    from gpufleet.base import catalog
    from gpufleet.base.spec.platforms import aks_checks

    spec = load_config(example_config("aks-train"))
    version = spec.cluster.kubernetes_version
    assert spec.cluster.aks.support_plan != "AKSLongTermSupport"
    end = dt.date.fromisoformat(catalog.aks_kubernetes_version(version, DAY, lts=False).end_of_standard_support)
    at_edge = end - dt.timedelta(days=LC.SUPPORT_WARNING_DAYS)
    assert catalog.aks_kubernetes_version(version, at_edge, lts=False).status == "standard"
    (warning,) = aks_checks.kubernetes_warnings("s", spec, at_edge)
    assert warning.message.startswith(f"AKS {version} leaves community support in 90 days ({end.isoformat()}; ")
    # Without long-term support the warning says what follows (issue 56: the plan's `== "AKSLongTermSupport"` ->
    # `is not` survived the startswith above); with it, that long-term support follows.
    assert warning.message.endswith("; without long-term support (Premium tier, supportPlan AKSLongTermSupport) AKS then "
                                    "gives it platform support only: upgrade before then")
    lts = spec.model_copy(update={"cluster": spec.cluster.model_copy(update={"aks": spec.cluster.aks.model_copy(
        update={"tier": "Premium", "support_plan": "AKSLongTermSupport"})})})
    (warning,) = aks_checks.kubernetes_warnings("s", lts, at_edge)
    assert warning.message.endswith("; long-term support follows (Premium tier): upgrade before then")
    assert aks_checks.kubernetes_warnings("s", spec, at_edge - dt.timedelta(days=1)) == []


def test_gke_refuses_every_sharing_mode_but_none_in_the_pool_spec():
    """Issue 56: `mode != "none"` -> `<` survived, which lets time-slicing (sorting after "none") through on GKE."""
    def sharing(mode: dict):
        def change(config):
            config["gpufleet:nodePools"][0]["sharing"] = mode
        return change

    for mode in ({"mode": "time-slicing", "replicas": 4}, {"mode": "mps", "replicas": 4}):
        assert [p for p in _changed("prod-gke", sharing(mode)) if "sharing.mode" in p] == [
            "stack 'test': gpufleet:nodePools[0].sharing.mode: on gke, share GPUs with gke.gpuSharing (time-sharing, mps) "
            f"and gke.gpuPartitionSize (MIG) (got '{mode['mode']}')"]


def test_the_aks_system_pool_scales_to_at_most_1000_nodes():
    """AKS: at most 1,000 nodes per node pool (AKS quotas and limits, "Maximum nodes per node pool") (issue 56: the
    bound 1000 -> 1001 survived)."""
    def system(max_nodes: int):
        def change(config):
            config["gpufleet:cluster"]["aks"]["systemPool"]["maxNodes"] = max_nodes
        return change

    assert not [p for p in _changed("aks-train", system(1000)) if "systemPool.maxNodes" in p]
    assert [p for p in _changed("aks-train", system(1001)) if "systemPool.maxNodes" in p] == [
        "stack 'test': gpufleet:cluster.aks.systemPool.maxNodes: Input should be less than or equal to 1000 (got 1001)"]


def test_capacity_source_names_the_reservation_of_a_reserved_pool_only():
    """Issue 56: `capacity == "reserved" and r is not None` -> `!=` survived (the review line lost the reservation)."""
    from gpufleet.base.spec.features.reservation import capacity_source

    spec = load_config(example_config("nvl72-eks"))
    reserved = next(p for p in spec.node_pools if p.capacity == "reserved")
    line = capacity_source(reserved)
    assert line.startswith(f"reserved ({reserved.reservation.type} ") and line != "reserved"
    # Every other capacity kind says itself (issue 56: `capacity == "queued"` -> `!=` survived: no test had one).
    lines = {p.capacity: capacity_source(p) for stack in ("dev", "dws-gke") for p in load_config(example_config(stack)).node_pools}
    assert lines["on-demand"] == "on-demand"
    assert lines["queued"] == "queued (GKE DWS queued provisioning via ProvisioningRequest)"


@pytest.mark.parametrize("provider", [
    "awskms://alias/gpufleet?region=us-east-1",
    "azurekeyvault://gpufleet-kv.vault.azure.net/keys/pulumi",
    "gcpkms://projects/my-project/locations/global/keyRings/gpufleet/cryptoKeys/pulumi",
    "hashivault://gpufleet",
])
def test_each_documented_kms_url_form_is_a_secrets_provider(provider):
    """The key's host and path are matched together (issue 56: `netloc + path` -> `netloc / path` survived: the spec
    layer's tests never set a secrets provider)."""
    from gpufleet.base.spec.checks.stack_keys import settings_problems

    assert settings_problems("s", {"secretsprovider": provider}) == []
    assert [str(p) for p in settings_problems("s", {"secretsprovider": provider + "#x"})] == [
        "stack 's': secretsprovider: must be `passphrase`, `default` or a KMS URL as `pulumi stack change-secrets-provider` documents it"]


def test_a_team_queueing_on_a_dra_pool_needs_its_namespace_among_the_dra_namespaces():
    """Issue 56: Kueue's `if not kueue.enabled` -> `if not not` survived: no test queued a team outside dra.namespaces."""
    def change(config):
        config["gpufleet:addons"]["kueue"]["teams"].append({"name": "vision", "queues": [{"pool": "gb200"}]})
    assert [p for p in _changed("nvl72-k3s", change) if "kueue" in p] == [
        "stack 'test': gpufleet:addons.kueue.teams[1].queues[0].pool: 'gb200' is a DRA pool, but the team's namespace "
        "vision gets no ResourceClaimTemplates to claim its GPUs with: add vision to gpufleet:dra.namespaces (now: "
        "research) (got 'gb200')"]


def test_shm_in_tebibytes_meets_the_tensor_parallel_floor():
    """`Ti` is 2**40 bytes, each unit its value (issue 56: `2**40` -> `2-40` and `1e9` -> `999999999.0` survived: no
    test wrote /dev/shm in Ti or G)."""
    from gpufleet.base.spec.features import serving_server_checks as S

    assert S._bytes("1Ti") == 2**40 and S._bytes("0.5Ti") == 2**39
    # Every suffix Kubernetes quantities take (apimachinery resource.Quantity: decimal SI and binary IEC), at its value.
    assert {q: S._bytes(q) for q in ("3", "1k", "1M", "2G", "1T", "1Ki", "1Mi", "1Gi", "500m")} == {
        "3": 3, "1k": 1e3, "1M": 1e6, "2G": 2e9, "1T": 1e12, "1Ki": 2**10, "1Mi": 2**20, "1Gi": 2**30, "500m": 0.5}
    config = copy.deepcopy(example_config("inference-k3s"))
    config["gpufleet:serving"]["models"][1]["shm"] = "1Ti"
    assert _problems(config) == []


def _associations(n: int):
    def change(config):
        shared = config["gpufleet:cluster"]["eks"]["storage"]["fsxLustre"]["shared"]
        shared["dataRepositoryAssociations"] = [{"s3Path": f"s3://ai-stack-fsx-data/{i}", "fileSystemPath": f"/data/{i}"}
                                                for i in range(n)]
    return change


def test_fsx_data_repository_associations_at_the_limit_and_one_past():
    """FSx for Lustre links at most 8 S3 prefixes per file system (issue 56: max_length 8 -> 9 survived)."""
    assert not [p for p in _changed("ai-on-eks", _associations(8)) if "dataRepositoryAssociations" in p]
    assert [p for p in _changed("ai-on-eks", _associations(9)) if "dataRepositoryAssociations" in p] == [
        "stack 'test': gpufleet:cluster.eks.storage.fsxLustre.shared.dataRepositoryAssociations: List should have at "
        "most 8 items after validation, not 9"]


def test_serving_scaled_on_amp_metrics_is_refused():
    """The AMP collector's configuration scrapes no model server, so KEDA would scale on nothing. The backend is built at
    run time, as YAML gives it; the `backend == "amp"` -> `is` mutant still passes (pydantic's Literal check returns the
    Literal's own string object): it is listed as equivalent in docs/testing.md."""
    def change(config):
        config["gpufleet:observability"]["metrics"] = {"backend": "".join(["a", "mp"])}
    assert [p for p in _changed("inference-eks", change) if "scaling" in p] == [
        "stack 'test': gpufleet:serving.models[0].scaling: the AMP scraper's configuration gpufleet writes does not scrape "
        "model servers yet (docs/inference.md): use kube-prometheus-stack for serving metrics",
        "stack 'test': gpufleet:serving.models[1].scaling: the AMP scraper's configuration gpufleet writes does not scrape "
        "model servers yet (docs/inference.md): use kube-prometheus-stack for serving metrics"]


def test_an_offering_the_catalog_lacks_is_refused_naming_the_providers_offerings():
    """Issue 56: the allowed list's `provider + '/' + o` -> `**` survived (it raises a TypeError: a traceback)."""
    def change(config):
        config["gpufleet:nodePools"][0]["existing"]["offering"] = "coreweave/h100-9x"
    assert _changed("existing-coreweave", change) == [
        "stack 'test': gpufleet:nodePools[0].existing.offering: 'coreweave/h100-9x': not an offering of coreweave in the "
        "catalog (allowed: coreweave/a100-8x, coreweave/b200-8x, coreweave/gb200-4x, coreweave/h100-8x, coreweave/h200-8x, "
        "coreweave/l40s-8x, coreweave/rtx-pro-6000-8x)"]


def test_min_nodes_at_zero_and_one_under():
    """Issue 56: minNodes' `ge=0` -> `ge=-1` survived."""
    def at(n):
        def change(config):
            config["gpufleet:nodePools"][0].update(minNodes=n)
        return change
    assert not [p for p in _changed("prod-eks", at(0)) if "minNodes" in p]
    assert _changed("prod-eks", at(-1)) == [
        "stack 'test': gpufleet:nodePools[0].minNodes: Input should be greater than or equal to 0 (got -1)"]


def test_an_ipv6_vpc_cidr_is_refused():
    """A VPC's primary CIDR block is IPv4 (issue 56: `cidr.version != 4` -> `< 4` survived)."""
    def change(config):
        config["gpufleet:cluster"]["eks"].setdefault("network", {})["vpcCidr"] = "fd00:10::/56"
    assert _changed("prod-eks", change) == [
        "stack 'test': gpufleet:cluster.eks.network.vpcCidr: a VPC's primary CIDR block is IPv4, e.g. 10.0.0.0/16 (got "
        "'fd00:10::/56')"]


def test_node_pools_at_the_limit_and_one_past():
    """Issue 56: `len(pools) > NODE_POOLS_MAX` -> `==` survived (tests/unit/test_pool_limit.py, which checks 101, is
    not in the spec tree's mutation command: it plans)."""
    from gpufleet.base import limits
    from gpufleet.base.spec.checks.depth_checks import too_many_pools

    assert limits.NODE_POOLS_MAX == 100
    assert too_many_pools("s", {"nodePools": [{}] * 100}) is None
    assert str(too_many_pools("s", {"nodePools": [{}] * 101})).startswith("stack 's': gpufleet:nodePools: 101 pools; at most 100 ")


@pytest.mark.parametrize("ip,which", [("10.0.0.0", "network"), ("10.0.0.1", "first"), ("10.0.0.10", None)])
def test_aks_dns_service_ip_names_which_reserved_address_it_took(ip, which):
    """Issue 56: `dns == network_address` -> `>=` survived, which calls the first address the network address."""
    def change(config):
        config["gpufleet:cluster"]["aks"].setdefault("network", {}).update(serviceCidr="10.0.0.0/16", dnsServiceIp=ip)
    assert _changed("aks-train", change) == ([] if which is None else [
        f"stack 'test': gpufleet:cluster.aks.network.dnsServiceIp: the {which} address of serviceCidr 10.0.0.0/16 is not "
        "free for the cluster DNS (the first goes to the kubernetes Service); use another, e.g. 10.0.0.10 "
        f"(got '{ip}')"])


def test_model_cache_namespace_at_63_characters_and_one_past():
    """A Kubernetes namespace is a DNS label, at most 63 characters (issue 56: max_length 63 -> 62 survived)."""
    def namespace(name):
        def change(config):
            config["gpufleet:modelCaches"][0]["namespace"] = name
        return change
    assert _changed("cold-start-k3s", namespace("a" * 63)) == []
    assert _changed("cold-start-k3s", namespace("a" * 64)) == [
        f"stack 'test': gpufleet:modelCaches[0].namespace: String should have at most 63 characters (got '{'a' * 64}')"]


@pytest.mark.parametrize("prefix,nodes", [(16, 65532), (20, 4092), (28, 12)])
def test_gpudirect_subnet_nodes_at_each_allowed_prefix_edge(prefix, nodes):
    """A /prefix subnet less the four addresses Compute Engine keeps, for gpuDirectSubnetPrefix 16 to 28 (issue 56:
    `32 - prefix` -> `32 % prefix` survived; they differ only at /16, the shortest prefix allowed)."""
    from gpufleet.base.spec.platforms.gke import gpudirect_subnet_nodes

    assert gpudirect_subnet_nodes(prefix) == nodes


def test_external_reason_at_200_characters_and_one_past():
    """The reason is recorded on the Gateway (a label-safe annotation; issue 56: max_length 200 -> 201 survived)."""
    def reason(n):
        def change(config):
            config["gpufleet:serving"].setdefault("gateway", {})["externalReason"] = "a" * n
        return change
    too_long = "String should have at most 200 characters"
    assert not [p for p in _changed("inference-k3s", reason(200)) if too_long in p]
    assert _changed("inference-k3s", reason(201)) == [
        f"stack 'test': gpufleet:serving.gateway.externalReason: {too_long} (got '{'a' * 201}')"]


@pytest.mark.parametrize("capacity,reservation,billed", [
    ("on-demand", None, "on-demand"), ("spot", None, "spot"),
    ("reserved", "targeted", "on-demand"),  # an On-Demand Capacity Reservation / GCE reservation: on-demand rates
    ("reserved", "capacity-block", None),  # a Capacity Block has prices of its own
    ("queued", None, None), ("flex-start", None, None),  # DWS: prices of their own
])
def test_each_capacity_is_billed_at_its_catalog_price_or_none(capacity, reservation, billed):
    """Issue 56: `capacity == "reserved" and not (...)` -> `or` survived, which bills Capacity Blocks and DWS pools at
    the on-demand rate."""
    from gpufleet.base.spec.features.reservation import billed_as

    pool = SimpleNamespace(capacity=capacity, reservation=reservation and SimpleNamespace(type=reservation))
    assert billed_as(pool) == billed


@pytest.mark.parametrize("key", ["namespace", "project"])
def test_argocd_names_at_63_characters_and_one_past(key):
    """Argo CD's namespace and AppProject are DNS labels (issue 56: the namespace's max_length 63 -> 62 survived)."""
    def name(n):
        def change(config):
            config["gpufleet:gitops"].setdefault("argocd", {})[key] = "a" * n
        return change
    assert _changed("gitops-k3s", name(63)) == []
    assert _changed("gitops-k3s", name(64)) == [
        f"stack 'test': gpufleet:gitops.argocd.{key}: String should have at most 63 characters (got '{'a' * 64}')"]


@pytest.mark.parametrize("pool,problems", [
    (0, []),  # flex-start: the spec takes a minimum (no check refuses it)
    (1, ["stack 'test': gpufleet:nodePools[1].minNodes: a queued-provisioning pool starts empty: its nodes come only "
         "through ProvisioningRequests (allowed with queued: 0) (got 1)"]),
])
def test_only_a_queued_pool_must_start_empty(pool, problems):
    """Issue 56: `cap == "queued"` -> `<=` survived, which refuses minNodes on flex-start pools ("flex-start" sorts first)."""
    def change(config):
        config["gpufleet:nodePools"][pool]["minNodes"] = 1
    assert _changed("dws-gke", change) == problems


@pytest.mark.parametrize("reservation,problems", [
    ({"type": "odcr", "id": "cr-0123456789abcdef0"},
     ["stack 'test': gpufleet:nodePools[1].reservation: an odcr reservation by id needs its zone (the availability zone "
      "it reserves in)"]),
    ({"type": "odcr", "id": "cr-0123456789abcdef0", "zone": "us-east-1b"}, []),
])
def test_an_odcr_by_id_needs_its_zone(reservation, problems):
    """Issue 56: `self.id is not None and ...` -> `not self.id is not None` survived (no test left the zone out)."""
    def change(config):
        config["gpufleet:nodePools"][1]["reservation"] = reservation
    assert _changed("karpenter-eks", change) == problems


def test_a_model_server_label_value_at_63_characters_and_one_past():
    """Kubernetes label values are at most 63 characters (issue 56: the Labels value's max_length 63 -> 64 survived)."""
    def value(n):
        def change(config):
            config["gpufleet:serving"]["models"][0]["labels"] = {"team": "a" * n}
        return change
    assert _changed("inference-k3s", value(63)) == []
    assert _changed("inference-k3s", value(64)) == [
        f"stack 'test': gpufleet:serving.models[0].labels.team: String should have at most 63 characters (got '{'a' * 64}')"]


def test_a_local_chart_archive_is_refused_whatever_way_its_digest_differs(tmp_path):
    """gpufleet:registry.charts: an archive whose sha256 is not its pin's is refused, whether its digest sorts before
    or after the pin's (issue 56: `got != pin.digest` -> `>=` survived: no spec test put a wrong archive there)."""
    import hashlib

    from gpufleet.base import versions
    from gpufleet.base.spec.features.registry_checks import _chart_file_checks

    pin = versions.KUBE_STATE_METRICS  # a pin with a recorded digest
    path = tmp_path / versions.archive_file_names(pin)[0]
    below = next(b for b in (str(i).encode() for i in range(100)) if hashlib.sha256(b).hexdigest() < pin.digest)
    above = next(b for b in (str(i).encode() for i in range(100)) if hashlib.sha256(b).hexdigest() > pin.digest)
    for content in (below, above):
        path.write_bytes(content)
        (problem,) = _chart_file_checks("s", str(tmp_path))
        assert problem.message.startswith(f"{path} has sha256 {hashlib.sha256(content).hexdigest()}, but chart "
                                          f"{pin.name} {pin.version} is pinned to {pin.digest}")
    assert _chart_file_checks("s", str(tmp_path / "empty")) == []


@pytest.mark.parametrize("value,problems", [
    (-10**9, []), (10**9, []),
    (-10**9 - 1, ["stack 'test': gpufleet:addons.priorityClasses.classes[0].value: Input should be greater than or equal "
                  "to -1000000000 (got -1000000001)"]),
    (10**9 + 1, ["stack 'test': gpufleet:addons.priorityClasses.classes[0].value: Input should be less than or equal to "
                 "1000000000 (got 1000000001)"]),
])
def test_priority_class_values_at_the_user_limits_and_one_past(value, problems):
    """The spec takes values from -1e9 to 1e9 (addons.py PriorityClassSpec; issue 56: `-(10**9)` -> `-(10*9)`
    survived)."""
    def change(config):
        config["gpufleet:addons"]["priorityClasses"] = {"enabled": True, "classes": [{"name": "low", "value": value}]}
    assert _changed("existing-coreweave", change) == problems


def test_a_hostname_of_253_characters_and_one_past():
    """A hostname of HOSTNAME_MAX (253) characters is taken, one more is not (issue 56: `<=` -> `<` survived)."""
    from gpufleet.base.spec.text import HOSTNAME_MAX, is_hostname

    label = "a" * 63
    name = ".".join([label, label, label, "a" * 61])
    assert HOSTNAME_MAX == len(name) == 253
    assert is_hostname(name)
    assert not is_hostname(name + "a")


def test_a_reservation_on_a_later_pool_that_is_not_reserved_is_refused():
    """Each pool is judged, also after a pool without a reservation (issue 56: that pool's `continue` -> `break`
    survived: the tests' misplaced reservations were all on the first pool)."""
    def change(config):
        config["gpufleet:nodePools"][1]["reservation"] = {"type": "odcr", "id": "cr-0123456789abcdef0", "zone": "us-east-1a"}
    assert _changed("prod-eks", change) == [
        "stack 'test': gpufleet:nodePools[1].reservation: only used with capacity reserved (this pool is on-demand)"]


def test_an_existing_clusters_overhead_at_zero_and_just_under():
    """Issue 56: overheadPerHour's `ge=0` -> `ge=-1` survived."""
    def overhead(value):
        def change(config):
            config["gpufleet:cluster"]["existing"]["overheadPerHour"] = value
        return change
    assert _changed("existing-coreweave", overhead(0)) == []
    assert _changed("existing-coreweave", overhead(-0.01)) == [
        "stack 'test': gpufleet:cluster.existing.overheadPerHour: Input should be greater than or equal to 0 (got -0.01)"]


def test_secondary_vpc_cidrs_at_four_and_one_past():
    """A VPC holds 5 IPv4 blocks by default, the primary and 4 secondary (eks.py; issue 56: `len(v) > 4` -> `>= 4`
    survived)."""
    def blocks(n):
        def change(config):
            config["gpufleet:cluster"]["eks"].setdefault("network", {})["secondaryCidrs"] = [f"100.{64 + i}.0.0/16" for i in range(n)]
        return change
    assert _changed("prod-eks", blocks(4)) == []
    assert _changed("prod-eks", blocks(5)) == [
        "stack 'test': gpufleet:cluster.eks.network.secondaryCidrs: at most 4 secondary CIDR blocks (a VPC holds 5 IPv4 "
        "blocks by default)"]


def test_data_and_pipeline_parallel_inside_one_pod_is_taken():
    """The data-parallel rule is about ranks across pods: one pod may mix pipeline and data parallelism (issue 56:
    `nodes_per_replica > 1` -> `> 0` survived)."""
    def change(config):
        config["gpufleet:serving"]["models"][1].update(nodesPerReplica=1, parallelism={"tensor": 1, "pipeline": 2, "data": 2})
    assert _changed("inference-k3s", change) == []


def test_more_pools_than_the_limit_stop_the_spec_with_that_one_problem():
    """Issue 56: the early refusal's `problems + [too_many]` -> `**` survived (a TypeError: a traceback)."""
    def change(config):
        config["gpufleet:nodePools"] = [copy.deepcopy(config["gpufleet:nodePools"][0]) for _ in range(101)]
    assert _changed("dev", change) == [
        "stack 'test': gpufleet:nodePools: 101 pools; at most 100 (AKS allows 100 node pools per cluster, EKS 30 managed "
        "node groups by default: gpufleet/base/limits.py NODE_POOLS_MAX); split the fleet into several stacks"]


def test_a_gpudirect_pool_name_too_long_names_its_last_rdma_network():
    """A4X's four RDMA subnets are rdma-0 to rdma-3: the message names the last (issue 56: `rdma_subnets - 1` -> `* 1`
    survived; the length is the same for fewer than ten subnets)."""
    def change(config):
        config["gpufleet:nodePools"][0].update(rdma=True, name="a" * 35)
        config["gpufleet:dra"]["computeDomains"][0]["pool"] = "a" * 35
    assert _changed("nvl72-gke", change) == [
        "stack 'test': gpufleet:nodePools[0].name: too long for a GPUDirect pool: its GKE Network objects <pool>-rdma-3 "
        f"must stay within 41 characters (at most 34 here) (got '{'a' * 35}')"]


@pytest.mark.parametrize("key,what", [
    ("encryptionsalt", "the passphrase provider's salt as `pulumi stack init` writes it"),
    ("encryptedkey", "the base64 data key a KMS secrets provider writes"),
])
def test_a_bad_salt_or_data_key_is_refused_naming_what_it_must_be(key, what):
    """Issue 56: `key == "encryptionsalt"` -> `!=` survived, which swaps the two messages."""
    from gpufleet.base.spec.checks.stack_keys import settings_problems

    assert [str(p) for p in settings_problems("s", {key: "not base64!"})] == [f"stack 's': {key}: must be {what}"]


def test_an_aks_pool_s_os_disk_defaults_to_256_gb():
    """AksPoolSpec.os_disk_size_gb: 256 GB unless the stack says (issue 56: the default 256 -> 255 survived)."""
    from gpufleet.base.spec.platforms.aks import AksPoolSpec

    assert AksPoolSpec().os_disk_size_gb == 256


@pytest.mark.parametrize("cidr,problems", [
    ("10.129.0.0/26", []),
    ("10.129.0.0/27", ["stack 'test': gpufleet:cluster.gke.network.proxyOnlyCidr: the regional load balancer's proxy-only "
                       "subnet needs at least 64 IPv4 addresses: a /26 or shorter prefix (default 10.129.0.0/23) (got "
                       "'10.129.0.0/27')"]),
])
def test_the_proxy_only_subnet_gpufleet_creates_at_26_and_27(cidr, problems):
    """Issue 56: `net.existing is None and ...` -> `is not None` survived: no test judged a proxy-only subnet gpufleet
    creates itself."""
    def change(config):
        config["gpufleet:cluster"]["gke"].setdefault("network", {})["proxyOnlyCidr"] = cidr
    assert _changed("inference-gke", change) == problems


def test_a_cluster_name_of_40_characters_and_one_past():
    """Issue 56: the cluster name's max_length 40 -> 41 survived."""
    def name(n):
        def change(config):
            config["gpufleet:cluster"]["name"] = "a" * n
        return change
    assert _changed("dev", name(40)) == []
    assert _changed("dev", name(41)) == [
        f"stack 'test': gpufleet:cluster.name: String should have at most 40 characters (got '{'a' * 41}')"]


@pytest.mark.parametrize("throughput,problems", [
    (500, ["stack 'test': gpufleet:cluster.eks.storage.fsxLustre: perUnitStorageThroughput applies to PERSISTENT_* "
           "deployment types only"]),
    (None, []),
])
def test_a_scratch_fsx_takes_no_throughput(throughput, problems):
    """Issue 56: the SCRATCH_2 test's `is not None` -> `is None` survived."""
    def change(config):
        fsx = config["gpufleet:cluster"]["eks"]["storage"]["fsxLustre"]
        fsx.pop("shared")
        fsx["deploymentType"] = "SCRATCH_2"
        if throughput is None:
            del fsx["perUnitStorageThroughput"]
    assert _changed("ai-on-eks", change) == problems


def test_the_aks_system_pool_os_disk_at_2048_gb_and_one_past():
    """Issue 56: the system pool's osDiskSizeGb `le=2048` -> `le=2047` survived."""
    def size(n):
        def change(config):
            config["gpufleet:cluster"]["aks"].setdefault("systemPool", {})["osDiskSizeGb"] = n
        return change
    assert _changed("aks-train", size(2048)) == []
    assert _changed("aks-train", size(2049)) == [
        "stack 'test': gpufleet:cluster.aks.systemPool.osDiskSizeGb: Input should be less than or equal to 2048 (got 2049)"]


@pytest.mark.parametrize("seconds, said", [(3600, "1 h"), (7200, "2 h"), (5400, "5400 s"), (172800, "2 days")])
def test_a_dws_run_end_says_its_maximum_run_duration_in_the_largest_whole_unit(seconds, said):
    """Issue 56: `seconds % 3600 == 0` -> `seconds - 3600 == 0` survived (only one day and seven were tested), so a
    two-hour run was said as 7200 s."""
    config = copy.deepcopy(example_config("dws-gke"))
    flex = config["gpufleet:nodePools"][0]
    assert flex["capacity"] == "flex-start"
    flex["gke"].update(runStartDate="2026-12-03", maxRunDurationSeconds=seconds)
    ends = [e for e in dws_run_ends(load_config(config)) if e.pool == 0]
    assert [e.what for e in ends] == [f"its flex-start nodes (started 2026-12-03, each for at most {said})"]


@pytest.mark.parametrize("threshold, problems", [
    (1, []),
    (0.01, []),
    (0, ["stack 'test': gpufleet:cluster.aks.scaleDown.utilizationThreshold: Input should be greater than 0 (got 0)"]),
    (1.01, ["stack 'test': gpufleet:cluster.aks.scaleDown.utilizationThreshold: Input should be less than or equal to "
            "1 (got 1.01)"]),
])
def test_the_aks_scale_down_utilization_threshold_is_a_fraction_above_zero(threshold, problems):
    """Issue 56: `gt=0` -> `gt=-1` survived (no test set the AKS profile's threshold at 0): the spec takes (0, 1]."""
    def change(config):
        config["gpufleet:cluster"]["aks"]["scaleDown"] = {"utilizationThreshold": threshold}
    assert _changed("aks-train", change) == problems


def test_aks_on_long_term_support_warns_with_the_days_left():
    """Issue 56: `(end - day).days` -> `(end | day)` survived: no test ran a cluster on AKS long-term support."""
    from gpufleet.base import catalog
    from gpufleet.base.spec.platforms import aks_checks

    spec = load_config(example_config("aks-train"))
    lts = spec.model_copy(update={"cluster": spec.cluster.model_copy(update={"aks": spec.cluster.aks.model_copy(
        update={"tier": "Premium", "support_plan": "AKSLongTermSupport"})})})
    version = spec.cluster.kubernetes_version
    facts = catalog.aks_kubernetes_version(version, DAY, lts=True)
    day = dt.date.fromisoformat(facts.end_of_standard_support) + dt.timedelta(days=1)
    facts = catalog.aks_kubernetes_version(version, day, lts=True)
    assert facts.status == "extended"
    end = dt.date.fromisoformat(facts.end_of_extended_support)
    assert [w.message for w in aks_checks.kubernetes_warnings("s", lts, day)] == [
        f"AKS {version} is past community support since {facts.end_of_standard_support} and runs on long-term support "
        f"until {end.isoformat()} (in {(end - day).days} days; {', '.join(facts.sources)}): the Premium tier's fee "
        "applies; upgrade before then"]
    # Its last day on long-term support is the day before the end (on the end day the catalog says unsupported).
    (last,) = aks_checks.kubernetes_warnings("s", lts, end - dt.timedelta(days=1))
    assert f"until {end.isoformat()} (in 1 day; " in last.message


def test_x86_and_a4x_rdma_pools_are_refused_at_the_second_of_them():
    """Issue 56: `list(first.values())[1]` -> `[0]` survived in the spec tree's command (test_nccl_gke, outside it,
    kills it): the problem names the second pool, the one to move, whichever installer it needs."""
    config = copy.deepcopy(example_config("nvl72-gke"))
    gb200 = config["gpufleet:nodePools"][0]
    assert gb200["machineType"] == "a4x-highgpu-4g"
    config["gpufleet:nodePools"] = [
        {"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2, "rdma": True, "capacity": "spot",
         "gke": {"zones": ["us-central1-b"]}},
        {**gb200, "rdma": True}]
    assert _problems(config) == [
        "stack 'test': gpufleet:nodePools[1].rdma: pools b200, gb200 need different RDMA NCCL plugin installers (x86 and "
        "A4X's arm64 one), and Google ships both as the DaemonSet kube-system/nccl-rdma-installer: one stack can apply "
        "only one; put the A4X pools in a stack of their own, or set rdma: false on one side (got True)"]


def test_an_ultraserver_pool_after_an_ordinary_one_must_still_come_from_a_capacity_block():
    """Issue 56: `continue` -> `break` at the first pool outside an NVLink domain survived (every test put the
    UltraServer pool first)."""
    config = copy.deepcopy(example_config("nvl72-eks"))
    gb200 = config["gpufleet:nodePools"][0]
    assert gb200["instanceType"] == "p6e-gb200.36xlarge"
    gb200["capacity"] = "on-demand"
    del gb200["reservation"]
    config["gpufleet:nodePools"].insert(0, {"name": "l4", "instanceType": "g6.xlarge", "maxNodes": 2})
    assert [p for p in _problems(config) if "Capacity Blocks for ML" in p] == [
        "stack 'test': gpufleet:nodePools[1].capacity: p6e-gb200.36xlarge is sold only inside UltraServers through EC2 "
        "Capacity Blocks for ML: set capacity: reserved with reservation {type: capacity-block, id: cr-..., "
        "instanceCount: a whole UltraServer} (got 'on-demand')"]


def test_a_gke_pool_s_boot_disk_defaults_to_200_gb():
    """GkePoolSpec.disk_size_gb: 200 GB unless the stack says (issue 56: the default 200 -> 199 survived)."""
    from gpufleet.base.spec.platforms.gke import GkePoolSpec

    assert GkePoolSpec().disk_size_gb == 200


def _gpus_per_node(n: int):
    def change(config):
        config["gpufleet:serving"]["models"][0]["gpusPerNode"] = n
    return change


def test_a_model_server_s_gpus_per_node_at_16_and_one_past():
    """Issue 56: `le=16` -> `le=17` survived (no test asked for more GPUs per pod than a node has)."""
    # At 16 the schema takes it, and the pool check judges it against the pool's nodes (one L4 each).
    assert [p for p in _changed("inference-k3s", _gpus_per_node(16)) if "gpusPerNode" in p] == [
        "stack 'test': gpufleet:serving.models[0].gpusPerNode: more GPUs per pod than a node of pool 'l4' offers (1 "
        "nvidia.com/gpu per node): the pods never schedule; at most 1 (got 16)"]
    assert [p for p in _changed("inference-k3s", _gpus_per_node(17)) if "gpusPerNode" in p] == [
        "stack 'test': gpufleet:serving.models[0].gpusPerNode: Input should be less than or equal to 16 (got 17)"]
