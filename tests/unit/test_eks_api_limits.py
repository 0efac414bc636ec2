"""Unit tests (layer 1): stack input that plans cleanly offline but that the EKS API (or Pulumi) rejects during
`pulumi up`. Access entries: one per principal, one resource name each. Pool labels, taints and exemption
reasons against the EKS managed node group limits
(EKS API Reference: UpdateLabelsPayload / CreateNodegroup labels 1-63 characters for keys and values, Taint
key 1-63 and value 0-63, tag values <= 256). Kubernetes accepts longer prefixed keys and empty label values,
so without these checks the stack plans cleanly and CreateNodegroup fails during `pulumi up`."""

import pytest

from gpufleet.base.spec import SpecError, load_spec
from tests.helpers import example_config, stack_file

P = "stack 'bad': gpufleet:nodePools[1]"
LONG_KEY = "example.com/" + "k" * 52  # 64 characters: a valid Kubernetes label key
LONG_REASON = "r" * 257


def _problems(cfg) -> list[str]:
    sf = stack_file(cfg, "bad")
    with pytest.raises(SpecError) as err:
        load_spec(sf.stack, sf.config, sf.secret_keys)
    return [str(p) for p in err.value.problems]


def _pool(cfg):
    return cfg["gpufleet:nodePools"][1]


CASES = {
    "label key over 63": (
        lambda c: _pool(c).update(labels={LONG_KEY: "x"}),
        [f"{P}.labels.{LONG_KEY}: EKS node groups take label keys of at most 63 characters, prefix included (64)"],
    ),
    "empty label value": (
        lambda c: _pool(c).update(labels={"example.com/team": ""}),
        [f"{P}.labels.example.com/team: EKS node groups take label values of 1 to 63 characters (got '')"],
    ),
    "taint key over 63": (
        lambda c: _pool(c).update(taints=[{"key": LONG_KEY, "value": "x"}]),
        [f"{P}.taints[0].key: EKS node groups take taint keys of at most 63 characters, prefix included (64) (got '{LONG_KEY}')"],
    ),
    "taint value over 63": (
        lambda c: _pool(c).update(taints=[{"key": "example.com/t", "value": "v" * 64}]),
        [f"{P}.taints[0].value: EKS node groups take taint values of at most 63 characters (64)"],
    ),
    "exemption reason over 256": (
        lambda c: _pool(c)["exemptions"].update({"gpu-pool-scale-to-zero": LONG_REASON}),
        [f"{P}.exemptions.gpu-pool-scale-to-zero: the reason is tagged on the node group: AWS tag values hold at most 256 characters (257)"],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_eks_node_group_limits_are_reported_exactly(case):
    mutate, expected = CASES[case]
    cfg = example_config("prod-eks")
    mutate(cfg)
    assert _problems(cfg) == expected


def test_limits_at_the_boundary_are_accepted():
    cfg = example_config("prod-eks")
    _pool(cfg).update(
        labels={LONG_KEY[:63]: "v" * 63},
        taints=[{"key": LONG_KEY[:63], "value": ""}],  # taint values may be empty on EKS
    )
    _pool(cfg)["exemptions"]["gpu-pool-scale-to-zero"] = "r" * 256
    sf = stack_file(cfg, "ok")
    load_spec(sf.stack, sf.config, sf.secret_keys)


def _eks(cfg):
    return cfg["gpufleet:cluster"]["eks"]


def test_one_access_entry_per_principal():
    """EKS rejects a second access entry for the same principal (User Guide, "Create access entries")."""
    cfg = example_config("prod-eks")
    _eks(cfg)["accessEntries"].append({"principalArn": "arn:aws:iam::123456789012:role/ml-engineers", "policy": "edit"})
    assert _problems(cfg) == [
        "stack 'bad': gpufleet:cluster.eks.accessEntries: arn:aws:iam::123456789012:role/ml-engineers: "
        "EKS allows one access entry per IAM principal; merge them"
    ]


def test_access_entries_with_one_name_would_share_a_resource_name():
    """Entries are named after the principal's last ARN segment: role/a/x and role/x would be one URN twice,
    which the offline mocks accept but `pulumi up` rejects as a duplicate resource URN."""
    cfg = example_config("prod-eks")
    _eks(cfg)["accessEntries"].append({"principalArn": "arn:aws:iam::123456789012:role/team-b/platform-admins", "policy": "view"})
    assert _problems(cfg) == [
        "stack 'bad': gpufleet:cluster.eks.accessEntries: arn:aws:iam::123456789012:role/platform-admins, "
        "arn:aws:iam::123456789012:role/team-b/platform-admins: principals named alike (platform-admins) would get "
        "the same resource name; give each access entry a principal with its own name"
    ]
