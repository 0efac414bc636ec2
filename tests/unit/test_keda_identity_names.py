"""Unit tests (layer 1): the Google service account gpufleet names for KEDA's operator on GKE
(components/gke/keda_identity.py) is a valid account id for every valid GKE cluster name, and distinct per cluster."""

import re

from hypothesis import given, strategies as st

from gpufleet.components.gke.keda_identity import account_id, workload_identity_member

# gcp.serviceaccount.Account account_id: 6-30 characters, RFC1035 (pulumi-gcp 10.2.0 docstring).
ACCOUNT_ID = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$")
# GKE cluster names as gpufleet/base/spec/platforms/gke.py accepts them: at most 40 characters.
CLUSTER_NAMES = st.from_regex(r"\A[a-z]([-a-z0-9]{0,38}[a-z0-9])?\Z")


def test_short_and_long_names():
    assert account_id("dws-gke") == "keda-dws-gke"
    assert account_id("a") == "keda-a"
    long = "inference-cluster-production-us-east"
    assert len(long) > 25 and ACCOUNT_ID.match(account_id(long)) and len(account_id(long)) <= 30
    assert account_id(long).startswith("keda-inference-cluste")
    assert workload_identity_member("p-1", "keda", "keda-operator") == "serviceAccount:p-1.svc.id.goog[keda/keda-operator]"


@given(CLUSTER_NAMES)
def test_every_cluster_name_gives_a_valid_account_id(name):
    assert ACCOUNT_ID.match(account_id(name)), account_id(name)


@given(CLUSTER_NAMES, CLUSTER_NAMES)
def test_two_clusters_never_share_an_account(a, b):
    if a != b:
        assert account_id(a) != account_id(b)
