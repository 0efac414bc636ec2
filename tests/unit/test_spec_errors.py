"""Unit tests (layer 1): bad stack files give every problem at once, with the exact text users see."""

import pytest

from gpufleet.base import catalog, versions

from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import SECRET, example_config

SERVER = {"name": "cp-1", "address": "192.0.2.10"}
POOL = {"name": "l4", "gpu": "L4", "gpusPerNode": 1, "hosts": [{"name": "gpu-1", "address": "192.0.2.31"}]}


def k3s(**cluster):
    cluster = {"platform": "k3s", "k3s": {"servers": [SERVER]}, **cluster}
    return {"gpufleet:cluster": cluster, "gpufleet:sshPrivateKey": SECRET}


def problems(config, stack="dev"):
    secrets = [k for k, v in config.items() if v == SECRET]
    with pytest.raises(SpecError) as info:
        load_spec(stack, config, secrets)
    return [str(p) for p in info.value.problems]


CASES = {
    "unknown platform": (
        {"gpufleet:cluster": {"platform": "openstack"}},
        ["stack 'dev': gpufleet:cluster.platform: Input should be 'eks', 'gke', 'aks', 'k3s' or 'existing' (got 'openstack')"],
    ),
    "min above max": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "minNodes": 3, "maxNodes": 1}]},
        [
            "stack 'dev': gpufleet:nodePools[0].maxNodes: maxNodes (1) must be >= minNodes (3)",
        ],
    ),
    "negative count": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "gpusPerNode": -2}]},
        ["stack 'dev': gpufleet:nodePools[0].gpusPerNode: Input should be greater than or equal to 1 (got -2)"],
    ),
    "unknown GPU": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "gpu": "X100"}]},
        [
            "stack 'dev': gpufleet:nodePools[0].gpu: unknown GPU model 'X100' (allowed: T4, A10G, A10, L4, L40S, "
            "A100-40GB, A100-80GB, H100-80GB, H100-NVL, H200, B200, L4-3Q, L4-6Q, L4-12Q, RTX-PRO-4500, RTX-PRO-6000, B300, GB200, GB300, MI210, MI250X, MI300X, MI325X, MI355X)"
        ],
    ),
    "host without address": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "hosts": [{"name": "gpu-1"}]}]},
        ["stack 'dev': gpufleet:nodePools[0].hosts[0].address: required key missing"],
    ),
    "typo in a key": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "hosts": [{"name": "gpu-1", "adress": "192.0.2.31"}]}]},
        [
            "stack 'dev': gpufleet:nodePools[0].hosts[0].address: required key missing",
            "stack 'dev': gpufleet:nodePools[0].hosts[0].adress: unknown key (allowed: name, address, user, port, rack, block, pricePerHour; "
            "did you mean 'address'?)",
        ],
    ),
    "typo in a top-level key": (
        {**k3s(), "gpufleet:nodepools": []},
        [
            "stack 'dev': gpufleet:nodepools: unknown key (allowed: cluster, nodePools, gpuOperator, amdGpuOperator, workloads, "
            "storage, addons, observability, dra, modelCaches, images, registry, serving, gitops, dependsOn, sshPrivateKey, etcdS3AccessKey, etcdS3SecretKey, registryPassword, kubeconfig; did you mean 'nodePools'?)"
        ],
    ),
    "bad address": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "hosts": [{"name": "gpu-1", "address": "300.1.1.1"}]}]},
        ["stack 'dev': gpufleet:nodePools[0].hosts[0].address: '300.1.1.1' is not an IP address or a DNS hostname"],
    ),
    "even number of servers": (
        k3s(k3s={"servers": [SERVER, {"name": "cp-2", "address": "192.0.2.11"}]}),
        ["stack 'dev': gpufleet:cluster.k3s.servers: 2 servers cannot keep etcd quorum; use 1, or an odd number >= 3 for HA"],
    ),
    "k3s version without a pinned release": (
        k3s(kubernetesVersion="1.20"),
        [f"stack 'dev': gpufleet:cluster.kubernetesVersion: '1.20' has no pinned k3s release (allowed: {', '.join(versions.K3S_RELEASES)})"],
    ),
    "plain-text SSH key": (
        {**k3s(), "gpufleet:sshPrivateKey": "-----BEGIN OPENSSH PRIVATE KEY-----"},
        ["stack 'dev': gpufleet:sshPrivateKey: must be a secret, not plain text: set it with `pulumi config set --secret`"],
    ),
    "k3s pool sized by min/max, spot on bare metal": (
        {**k3s(), "gpufleet:nodePools": [{**POOL, "maxNodes": 3, "capacity": "spot"}]},
        [
            "stack 'dev': gpufleet:nodePools[0].maxNodes: not used on k3s: a pool's size is its number of hosts; remove it",
            "stack 'dev': gpufleet:nodePools[0].capacity: spot capacity needs a cloud platform (allowed on k3s: on-demand) (got 'spot')",
        ],
    ),
    "unknown operator release and CUDA version": (
        {**k3s(), "gpufleet:gpuOperator": {"version": "v1.0.0"}, "gpufleet:workloads": {"cudaVersions": ["99.0"]}},
        [
            "stack 'dev': gpufleet:gpuOperator.version: unknown GPU Operator release 'v1.0.0' "
            f"(allowed: {', '.join(catalog.operator_releases())})",
            f"stack 'dev': gpufleet:workloads.cudaVersions: unknown CUDA version '99.0' (allowed: {', '.join(catalog.cuda_versions())})",
        ],
    ),
    "duplicate hosts across pools": (
        {**k3s(), "gpufleet:nodePools": [POOL, {**POOL, "name": "l4-b"}]},
        [
            "stack 'dev': gpufleet:nodePools[1].hosts[0].name: duplicate host name (also gpufleet:nodePools[0].hosts[0]) (got 'gpu-1')",
            "stack 'dev': gpufleet:nodePools[1].hosts[0].address: duplicate host address (also gpufleet:nodePools[0].hosts[0]) (got '192.0.2.31')",
        ],
    ),
    "no cluster at all": (
        {"gpufleet:nodePools": []},
        ["stack 'dev': gpufleet:cluster: required key missing (it names the platform and control plane)"],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_stack_file_exact_errors(case):
    config, expected = CASES[case]
    assert problems(config) == expected


def test_every_problem_is_listed_at_once():
    config = {
        **k3s(),
        "gpufleet:nodePools": [
            {**POOL, "gpu": "X100"},
            {**POOL, "name": "b", "gpusPerNode": 0, "hosts": [{"name": "gpu-2"}]},
        ],
        "gpufleet:gpuOperator": {"drivr": {}},
    }
    found = problems(config)
    assert [p.split(": ")[1] for p in found] == [
        "gpufleet:nodePools[0].gpu",
        "gpufleet:nodePools[1].gpusPerNode",
        "gpufleet:nodePools[1].hosts[0].address",
        "gpufleet:gpuOperator.drivr",
    ]


def test_error_message_lists_the_stack_and_count():
    with pytest.raises(SpecError) as info:
        load_spec("prod", {"gpufleet:cluster": {"platform": "k3s"}})
    assert str(info.value).splitlines() == [
        "invalid gpufleet config for stack 'prod' (2 problems):",
        "  - stack 'prod': gpufleet:cluster.k3s: platform k3s needs a `k3s:` block with at least one server",
        "  - stack 'prod': gpufleet:sshPrivateKey: required for k3s: set it with `pulumi config set --secret gpufleet:sshPrivateKey < ~/.ssh/id_ed25519`",
    ]


def test_example_stacks_are_valid():
    from tests.helpers import STACKS

    for stack in STACKS:
        config = example_config(stack)
        secrets = [k for k, v in config.items() if isinstance(v, dict) and "secure" in v]
        load_spec(stack, config, secrets)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("labels", {"gpufleet.io/capacity-type": "on-demand", "team": "a"},
         "gpufleet.io/capacity-type: gpufleet sets gpufleet.io/* labels itself (pool, GPU model, capacity type); use your own prefix"),
        ("taints", [{"key": "nvidia.com/gpu", "value": "x"}],
         "nvidia.com/gpu: gpufleet adds this taint itself (GPU pools, spot pools)"),
    ],
)
def test_gpufleet_label_and_taint_keys_are_reserved(field, value, message):
    config = {**k3s(), "gpufleet:nodePools": [{**POOL, field: value}]}
    assert problems(config) == [f"stack 'dev': gpufleet:nodePools[0].{field}: {message}"]


def test_dns_subdomain_accepts_names_and_refuses_the_rest():
    """Survivor of the mutation sample (docs/testing.md): k8s_syntax.dns_subdomain's length bound was untested."""
    from gpufleet.base.spec.k8s_syntax import SUBDOMAIN_MAX, dns_subdomain

    for ok in ("fsx-lustre", "a", "example.com", "a" * SUBDOMAIN_MAX):
        assert dns_subdomain(ok) is None, ok
    for bad in ("a" * (SUBDOMAIN_MAX + 1), "Fsx", "-x", "x-", "a..b", "a_b", ""):
        assert dns_subdomain(bad) == (
            f"must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most {SUBDOMAIN_MAX} characters"), bad


def test_depends_on_takes_stack_names():
    ok = load_spec("dev", {**k3s(), "gpufleet:dependsOn": ["prod-eks", "net.shared"]}, ["gpufleet:sshPrivateKey"])
    assert ok.depends_on == ["prod-eks", "net.shared"]
    assert problems({**k3s(), "gpufleet:dependsOn": ["a b"]}) == [
        "stack 'dev': gpufleet:dependsOn[0]: String should match pattern '^[A-Za-z0-9._-]{1,100}$' (got 'a b')"]
