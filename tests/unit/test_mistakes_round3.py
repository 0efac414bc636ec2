"""Issue 33's classes of realistic mistakes that planned clean: each is one line in a stack file, refused with its
exact message (stack, key path, value, what is allowed) and its upstream source beside the case. The second batch
(tests/unit/mistakes_round3_cases.py) adds the rules the operators' admission enforces (Kueue, Karpenter, the device
plugin's MPS daemon), cloud API limits and host addressing, regression cases of classes the first rounds did not
list, and valid stacks at the edge of each new rule, which must plan with exit 0."""

from __future__ import annotations

import copy

import pytest

from gpufleet.base.spec import SpecError
from tests.helpers import SECRET, example_config, load_config, plan_config, spec_problems
from tests.unit import mistakes_round3_cases as batch2


def _set(config: dict, path: str, value) -> None:
    node = config
    parts = path.split(".")
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    last = parts[-1]
    if last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value


def _lab_second_rdma_pool(c):
    pool = copy.deepcopy(c["gpufleet:nodePools"][2])
    pool["name"] = "a100-rdma-b"
    pool["hosts"] = [{"name": "a100-rdma-3", "address": "203.0.113.53"}]
    pool["rdmaNetwork"]["ipRange"] = "192.168.100.128/25"
    c["gpufleet:nodePools"].append(pool)


# prod-eks's pools, all on the AL2023 NVIDIA AMI (the default ami).
PROD_EKS_POOLS = [(i, p["name"]) for i, p in enumerate(example_config("prod-eks")["gpufleet:nodePools"])]

# (case, base stack, change, exact problems). Sources beside each.
CASES = [
    # Settings of a component the same stack turns off (gpufleet/base/spec/checks/disabled_checks.py).
    ("kueue-teams-with-kueue-off", "teams", lambda c: _set(c, "gpufleet:addons.kueue.enabled", False), [
        f"stack 'teams': gpufleet:addons.kueue.{key}: set while gpufleet:addons.kueue.enabled is false (Kueue is not "
        "installed, so it does nothing): remove it, or turn addons.kueue on" for key in ("cohort", "preemption", "teams", "topology")
    ]),
    ("volcano-pools-without-volcano", "dev", lambda c: _set(c, "gpufleet:addons", {"volcano": {"pools": ["l4"]}}), [
        "stack 'dev': gpufleet:addons.volcano.pools: set while gpufleet:addons.volcano.enabled is false (Volcano is not "
        "installed, so it does nothing): remove it, or turn addons.volcano on",
    ]),
    ("operator-version-with-operator-off", "dev", lambda c: c.update({"gpufleet:gpuOperator": {
        "enabled": False, "version": "v26.7.0"}}), [
        "stack 'dev': gpufleet:gpuOperator.version: set while gpufleet:gpuOperator.enabled is false (the GPU Operator "
        "is not installed, so it does nothing): remove it, or turn gpuOperator on",
    ] + [
        f"stack 'dev': gpufleet:nodePools[{i}]: nothing would advertise pool '{name}''s nvidia.com/gpu: "
        "gpufleet:gpuOperator.enabled is false and k3s hosts have no device plugin of their own; turn the operator on"
        for i, name in ((0, "l4"), (1, "a100"))
    ]),
    ("priority-classes-listed-but-off", "dev", lambda c: _set(c, "gpufleet:addons", {"priorityClasses": {
        "classes": [{"name": "urgent", "value": 5}]}}), [
        "stack 'dev': gpufleet:addons.priorityClasses.classes: set while gpufleet:addons.priorityClasses.enabled is "
        "false (no PriorityClass is created, so it does nothing): remove it, or turn addons.priorityClasses on",
    ]),
    ("etcd-snapshot-schedule-with-snapshots-off", "ha", lambda c: _set(c, "gpufleet:cluster.k3s.etcdSnapshots", {
        "enabled": False, "reason": "lab cluster, rebuilt weekly", "scheduleCron": "0 * * * *"}), [
        "stack 'ha': gpufleet:cluster.k3s.etcdSnapshots.scheduleCron: set while "
        "gpufleet:cluster.k3s.etcdSnapshots.enabled is false (no etcd snapshot is taken, so it does nothing): remove "
        "it, or turn cluster.k3s.etcdSnapshots on",
    ]),
    # Cloud credentials in stack config (Pulumi registry, aws/gcp installation-configuration): never echoed, and
    # never read from a stack file at all since issue 48 (stack_keys.py: they choose whose account the deploy uses).
    ("aws-secret-key-in-plain-text", "prod-eks", lambda c: c.update({"aws:secretKey": "wJalrXUtnFEMI/K7MDENG"}), [
        "stack 'prod-eks': aws:secretKey: a credential in the stack file: gpufleet reads no provider credentials from "
        "it; remove it and let the provider find credentials itself (environment, profile, workload identity)",
    ]),
    ("gcp-credentials-json-in-plain-text", "prod-gke", lambda c: c.update({"gcp:credentials": '{"type": "service_account"}'}), [
        "stack 'prod-gke': gcp:credentials: a credential in the stack file: gpufleet reads no provider credentials "
        "from it; remove it and let the provider find credentials itself (environment, profile, workload identity)",
    ]),
    # GKE maintenance exclusions (cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
    ("gke-exclusion-ends-before-it-starts", "prod-gke", lambda c: _set(c, "gpufleet:cluster.gke.maintenanceExclusions", [
        {"name": "launch", "startTime": "2027-01-10T00:00:00Z", "endTime": "2027-01-01T00:00:00Z"}]), [
        "stack 'prod-gke': gpufleet:cluster.gke.maintenanceExclusions[0].endTime: ends before it starts "
        "(2027-01-10T00:00:00Z): GKE refuses it (got '2027-01-01T00:00:00Z')",
    ]),
    ("gke-no-upgrades-exclusion-45-days", "prod-gke", lambda c: _set(c, "gpufleet:cluster.gke.maintenanceExclusions", [
        {"name": "freeze", "scope": "NO_UPGRADES", "startTime": "2027-01-01T00:00:00Z", "endTime": "2027-02-15T00:00:00Z"}]), [
        "stack 'prod-gke': gpufleet:cluster.gke.maintenanceExclusions[0].endTime: a NO_UPGRADES exclusion lasts at most "
        "30 days (GKE); this one lasts 45 days from 2027-01-01T00:00:00Z: shorten it, or use scope NO_MINOR_UPGRADES "
        "or NO_MINOR_OR_NODE_UPGRADES (got '2027-02-15T00:00:00Z')",
    ]),
    ("gke-two-exclusions-one-name", "prod-gke", lambda c: _set(c, "gpufleet:cluster.gke.maintenanceExclusions", [
        {"name": "run", "startTime": "2027-01-01T00:00:00Z", "endTime": "2027-01-05T00:00:00Z"},
        {"name": "run", "startTime": "2027-02-01T00:00:00Z", "endTime": "2027-02-05T00:00:00Z"}]), [
        "stack 'prod-gke': gpufleet:cluster.gke.maintenanceExclusions[1].name: duplicate exclusion name (also "
        "maintenanceExclusions[0]): GKE keys exclusions by name (got 'run')",
    ]),
    # Deletion protection off with no recorded reason (container.v1 Cluster deletionProtection).
    ("gke-deletion-protection-off-without-reason", "prod-gke",
     lambda c: _set(c, "gpufleet:cluster.gke.deletionProtection", False), [
        "stack 'prod-gke': gpufleet:cluster.gke.deletionProtection: turning GKE's deletion protection off needs a "
        "recorded reason: set gpufleet:cluster.protection to {enabled: false, reason: ...} (then deletionProtection "
        "follows it), or remove deletionProtection (got False)",
    ]),
    # Capacity Blocks are sold for P and Trainium families only (EC2 User Guide, capacity-blocks.html).
    ("capacity-block-on-g6e", "karpenter-eks", lambda c: (
        _set(c, "gpufleet:nodePools.1.instanceType", "g6e.48xlarge"),
        _set(c, "gpufleet:nodePools.1.reservation.instanceType", "g6e.48xlarge")), [
        "stack 'karpenter-eks': gpufleet:nodePools[1].reservation.instanceType: EC2 sells Capacity Blocks for ML only "
        "for P instances and Trainium (p4d, p4de, p5, p5e, p5en, p6, p6e, trn1, trn2): use type odcr for an On-Demand "
        "Capacity Reservation of this type (got 'g6e.48xlarge')",
    ]),
    # Prometheus's volume on a k3s cluster without a default StorageClass (Kubernetes docs, "Default StorageClass").
    ("prometheus-on-k3s-without-local-path", "dev", lambda c: c.update({
        "gpufleet:observability": {"metrics": {"backend": "kube-prometheus-stack"}},
        "gpufleet:storage": {"localPath": {"enabled": False}}}), [
        "stack 'dev': gpufleet:observability.metrics.backend: Prometheus keeps its samples on a volume of the default "
        "StorageClass, and this k3s cluster has none (gpufleet:storage.localPath.enabled is false): turn localPath "
        "on, or choose backend none (got 'kube-prometheus-stack')",
    ]),
    # GPUs nothing advertises (docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html).
    ("eks-al2023-pool-with-operator-off", "prod-eks", lambda c: c.update({"gpufleet:gpuOperator": {"enabled": False}}), [
        f"stack 'prod-eks': gpufleet:nodePools[{i}]: nothing would advertise pool '{name}''s nvidia.com/gpu: "
        "gpufleet:gpuOperator.enabled is false and EKS AL2023 NVIDIA AMIs ship no device plugin (Bottlerocket NVIDIA "
        "AMIs do: ami bottlerocket-nvidia); turn the operator on" for i, name in PROD_EKS_POOLS
    ]),
    ("k3s-pools-with-operator-off", "dev", lambda c: c.update({"gpufleet:gpuOperator": {"enabled": False}}), [
        f"stack 'dev': gpufleet:nodePools[{i}]: nothing would advertise pool '{name}''s nvidia.com/gpu: "
        "gpufleet:gpuOperator.enabled is false and k3s hosts have no device plugin of their own; turn the operator on"
        for i, name in ((0, "l4"), (1, "a100"))
    ]),
    # EKS secondary VPC CIDRs (Amazon VPC User Guide, vpc-cidr-blocks.html, "IPv4 CIDR block association restrictions").
    ("eks-secondary-cidr-from-another-rfc1918-range", "prod-eks",
     lambda c: c["gpufleet:cluster"]["eks"]["network"].update(secondaryCidrs=["192.168.0.0/16"]), [
        "stack 'prod-eks': gpufleet:cluster.eks.network.secondaryCidrs[0]: the VPC's primary block 10.0.0.0/16 is in "
        "the RFC 1918 range 10.0.0.0/8, so AWS refuses a secondary block from 192.168.0.0/16; use 100.64.0.0/10 "
        "(RFC 6598) or a block of the primary's own range (got '192.168.0.0/16')",
    ]),
    ("eks-secondary-cidr-overlaps-the-primary", "prod-eks",
     lambda c: c["gpufleet:cluster"]["eks"]["network"].update(secondaryCidrs=["10.0.128.0/17"]), [
        "stack 'prod-eks': gpufleet:cluster.eks.network.secondaryCidrs[0]: overlaps vpcCidr (10.0.0.0/16): a VPC's "
        "CIDR blocks must not overlap (got '10.0.128.0/17')",
    ]),
    ("eks-two-secondary-cidrs-overlap", "prod-eks",
     lambda c: c["gpufleet:cluster"]["eks"]["network"].update(secondaryCidrs=["100.64.0.0/16", "100.64.128.0/17"]), [
        "stack 'prod-eks': gpufleet:cluster.eks.network.secondaryCidrs[1]: overlaps secondaryCidrs[0] (100.64.0.0/16): "
        "a VPC's CIDR blocks must not overlap (got '100.64.128.0/17')",
    ]),
    ("eks-secondary-cidr-198-19", "prod-eks",
     lambda c: c["gpufleet:cluster"]["eks"]["network"].update(secondaryCidrs=["198.19.0.0/16"]), [
        "stack 'prod-eks': gpufleet:cluster.eks.network.secondaryCidrs[0]: AWS does not associate 198.19.0.0/16 with a "
        "VPC as a secondary block (got '198.19.0.0/16')",
    ]),
    # Two k3s pools' RDMA networks sharing addresses (the NVIDIA IPAM hands each pool's range out on its own).
    ("rdma-pools-share-a-range", "lab", _lab_second_rdma_pool, [
        "stack 'lab': gpufleet:nodePools[3].rdmaNetwork.ipRange: overlaps gpufleet:nodePools[2].rdmaNetwork.ipRange "
        "(192.168.100.0/24): each pool's RDMA network needs a range of its own (got '192.168.100.128/25')",
    ]),
]


ALL_CASES = CASES + batch2.CASES


def test_the_round_lists_60_mistakes_and_10_valid_stacks_with_distinct_ids():
    """Issue 33 asks for at least 60 new realistic mistakes and 10 unusual valid stacks in this round."""
    ids = [c[0] for c in ALL_CASES] + [v[0] for v in ALL_VALID]
    assert len(ALL_CASES) >= 60 and len(ALL_VALID) >= 10
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name, base, change, expected", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_each_mistake_is_refused_with_its_exact_message(name, base, change, expected):
    config = example_config(base)
    change(config)
    problems = spec_problems(config, base)
    assert problems == expected


def test_a_plaintext_credential_is_never_echoed():
    config = example_config("prod-eks")
    config["aws:secretKey"] = "wJalrXUtnFEMI-K7MDENG-example"
    assert not any("wJalrXUtnFEMI" in p for p in spec_problems(config, "prod-eks"))


def test_the_same_credentials_as_secrets_are_refused_too():
    """A `secure:` credential still decides whose account the deploy acts in (issue 48): refused, never echoed."""
    config = example_config("prod-gke")
    config["gcp:credentials"] = SECRET
    with pytest.raises(SpecError) as err:
        load_config(config, "prod-gke")
    assert [p.path for p in err.value.problems] == ["gcp:credentials"]
    assert SECRET["secure"] not in str(err.value)


VALID = [
    ("kueue-off-without-teams", "dev", lambda c: _set(c, "gpufleet:addons", {"kueue": {"enabled": False}})),
    ("gke-no-upgrades-exclusion-30-days", "prod-gke", lambda c: _set(c, "gpufleet:cluster.gke.maintenanceExclusions", [
        {"name": "freeze", "scope": "NO_UPGRADES", "startTime": "2027-01-01T00:00:00Z", "endTime": "2027-01-31T00:00:00Z"}])),
    ("gke-deletion-protection-off-with-a-reason", "prod-gke", lambda c: (
        _set(c, "gpufleet:cluster.gke.deletionProtection", False),
        _set(c, "gpufleet:cluster.protection", {"enabled": False, "reason": "preview cluster, rebuilt per release"}))),
    ("capacity-block-on-p4d", "karpenter-eks", lambda c: (
        _set(c, "gpufleet:nodePools.1.instanceType", "p4d.24xlarge"),
        _set(c, "gpufleet:nodePools.1.reservation.instanceType", "p4d.24xlarge"))),
    ("bottlerocket-pools-with-operator-off", "ai-on-eks", lambda c: c.update({"gpufleet:gpuOperator": {"enabled": False}})),
    ("preinstalled-550-with-operator-v25.10.1", "dev", lambda c: c.update({"gpufleet:gpuOperator": {
        "version": "v25.10.1", "driver": {"source": "preinstalled", "version": "550.163.01"}}})),
    ("eks-secondary-cidrs-from-rfc6598-and-the-primary-range", "prod-eks",
     lambda c: c["gpufleet:cluster"]["eks"]["network"].update(secondaryCidrs=["100.64.0.0/16", "10.1.0.0/16"])),
    ("rdma-pools-with-ranges-of-their-own", "lab", lambda c: (
        _lab_second_rdma_pool(c), _set(c, "gpufleet:nodePools.3.rdmaNetwork.ipRange", "192.168.101.0/24"))),
]


ALL_VALID = VALID + batch2.VALID


@pytest.mark.parametrize("name, base, change", ALL_VALID, ids=[v[0] for v in ALL_VALID])
def test_unusual_but_valid_settings_load(name, base, change):
    config = example_config(base)
    change(config)
    load_config(config, base)


@pytest.mark.parametrize("name, base, change", batch2.VALID, ids=[v[0] for v in batch2.VALID])
def test_unusual_valid_stacks_at_a_rules_edge_plan_with_exit_0(name, base, change):
    """Each sits at the edge of a rule of the second batch (a quota lent in full, exactly 100 labels, 48 MPS clients,
    40 CIDRs, ...): the whole plan runs, registers, and no mandatory policy objects (exit 0)."""
    config = example_config(base)
    change(config)
    plan = plan_config(config, base)
    assert plan.resources and [v.message for v in plan.violations if v.level == "mandatory"] == []


def test_a_host_driver_the_operator_release_does_not_list_is_a_plan_warning():
    """A driver on the host outside the GPU Operator release's supported branches (GPU Operator Component Matrix,
    catalog drivers.yaml) often works: the plan warns instead of refusing."""
    from tests.helpers import plan_config

    config = example_config("dev")
    config["gpufleet:gpuOperator"] = {"driver": {"source": "preinstalled", "version": "550.163.01"}}
    plan = plan_config(config, "dev", policies=False)
    on_path = [str(w) for w in plan.warnings if w.path == "gpufleet:gpuOperator.driver.version"]
    # R550 is also past NVIDIA's end of life (lifecycle.yaml, issue 32): a warning of its own on the same key.
    assert [w for w in on_path if "NVIDIA driver branch R550 is past the end of its support" in w] != []
    assert [w for w in on_path if "does not list as supported" in w] == [
        "stack 'dev': gpufleet:gpuOperator.driver.version: the hosts' preinstalled driver is 550.163.01 (branch 550), "
        "which GPU Operator v26.7.0 (gpufleet:gpuOperator.version) does not list as supported (supported branches: "
        "610, 595, 580, 535): pick a release that lists it, or move the hosts to a supported branch (got '550.163.01')"
    ]
    config["gpufleet:gpuOperator"]["version"] = "v25.10.1"  # lists 550
    plan = plan_config(config, "dev", policies=False)
    assert not [w for w in plan.warnings if w.path == "gpufleet:gpuOperator.driver.version" and "does not list" in str(w)]


def test_a_webhook_rule_fails_the_plan_with_exit_2_and_registers_nothing(tmp_path, capsys):
    """`gpufleet plan` on Kueue's lendingLimit rule: exit 2, the exact line on stderr, no plan on stdout."""
    import yaml

    from gpufleet.app import cli

    name, base, change, expected = next(c for c in batch2.CASES if c[0] == "kueue-lending-limit-above-nominal-quota")
    path = tmp_path / f"Pulumi.{base}.yaml"
    path.write_text(yaml.safe_dump({"config": change(example_config(base))}))
    assert cli.main(["plan", base, "--config", str(path), "--format", "json"]) == cli.EXIT_INVALID
    out, err = capsys.readouterr()
    # --format json: the error document, no plan (gpufleet/app/json_errors.py)
    assert out.startswith('{\n  "error": {\n    "exitCode": 2,') and '"resources"' not in out
    assert err.splitlines() == [f"gpufleet: invalid gpufleet config for stack '{base}' (1 problem):",
                                              *(f"  - {line}" for line in expected)]


@pytest.mark.parametrize("sharing, expected", [
    ({"mode": "mig", "layout": "all-foo"}, "gpufleet:nodePools[1].sharing.layout"),
    ({"mode": "mig", "profiles": {"9g.9gb": 1}}, "gpufleet:nodePools[1].sharing.profiles"),
    ({"mode": "mig"}, "gpufleet:nodePools[1].sharing"),
], ids=["unknown-layout", "unknown-profile", "no-layout"])
def test_a_lending_limit_on_a_pool_whose_mig_layout_is_refused_is_not_judged(sharing, expected):
    """Without nominalQuota the lending rule needs what the pool advertises; a MIG layout the pool's own checks refuse
    leaves that unknown, so only the pool's problem is reported (never a traceback, never a guess)."""
    config = example_config("lab")
    config["gpufleet:nodePools"][1]["sharing"] = sharing
    config["gpufleet:addons"] = {"kueue": {"enabled": True, "teams": [
        {"name": "a", "queues": [{"pool": "h100-mig", "lendingLimit": 500}]}]}}
    assert [p.split(": ", 2)[1] for p in spec_problems(config, "lab")] == [expected]


@pytest.mark.parametrize("key, refused", [
    ("karpenter.sh/capacity-type", False), ("karpenter.k8s.aws/instance-gpu-name", False), ("example.com/karpenter.sh", False),
    ("node.kubernetes.io/instance-type", False), ("team.karpenter.sh/owner", True), ("mykarpenter.sh/owner", True),
    ("karpenter.k8s.aws/owner", True), ("kubernetes.io/hostname", True),
])
def test_karpenter_label_rule_reads_keys_as_the_crds_cel_rules_do(key, refused):
    """karpenter.sh_nodepools.yaml: `!x.find("^([^/]+)").endsWith("karpenter.sh")` unless x is a key Karpenter knows."""
    from gpufleet.base.platforms.eks.scheduling import karpenter_refuses as _karpenter_refuses

    assert (_karpenter_refuses(key) is not None) == refused
