"""The issue-14 corpus: realistic one-line mistakes (from the EKS, GKE, Kubernetes and NVIDIA documentation)
that used to plan clean and would fail at `pulumi up` or deploy something broken, and unusual stacks that are
valid. Each mistake is (id, example stack it starts from, the change); tests/unit/test_cloud_mistakes.py holds
the exact messages."""

from __future__ import annotations

from typing import Callable

CLUSTER, POOLS, OPERATOR, STORAGE, ADDONS = (
    "gpufleet:cluster", "gpufleet:nodePools", "gpufleet:gpuOperator", "gpufleet:storage", "gpufleet:addons")
NO_CUDA = "gpufleet:workloads"  # driver-floor cases declare no CUDA version, so only the floor is judged


def eks(c: dict) -> dict:
    return c[CLUSTER]["eks"]


def gke(c: dict) -> dict:
    return c[CLUSTER]["gke"]


def pool(c: dict, i: int = 0) -> dict:
    return c[POOLS][i]


def setp(fn: Callable[[dict], None]) -> Callable[[dict], dict]:
    def apply(c: dict) -> dict:
        fn(c)
        return c
    return apply


def _one_machine(c: dict, **server) -> None:
    """dev: its server cp-1 is also the L4 pool's GPU host."""
    host = {"name": "cp-1", "address": "192.0.2.10", **server}
    pool(c)["hosts"] = [host]


MISTAKES: list[tuple[str, str, Callable[[dict], dict]]] = [
    # ---- EKS: region, zones, ARNs
    ("eks-one-zone-from-another-region", "prod-eks", setp(lambda c: eks(c)["network"].update(availabilityZones=["us-east-1a", "us-east-1b", "us-west-2c"]))),
    ("eks-region-changed-zones-not", "prod-eks", setp(lambda c: c.update({"aws:region": "eu-west-1"}))),
    ("eks-kms-key-in-another-region", "prod-eks", setp(lambda c: eks(c).update(kmsKeyArn="arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"))),
    ("eks-existing-subnet-zone-in-another-region", "prod-eks", setp(lambda c: eks(c).update(network={"vpcId": "vpc-0123456789abcdef0", "subnets": [
        {"id": "subnet-0123456789abcdef0", "availabilityZone": "us-east-1a"},
        {"id": "subnet-0123456789abcdef1", "availabilityZone": "us-east-2b"}]}))),
    # ---- EKS: address plan
    ("eks-vpc-cidr-too-small-for-public-subnets", "prod-eks", setp(lambda c: eks(c)["network"].update(vpcCidr="10.0.0.0/24"))),
    ("eks-vpc-cidr-too-large-for-aws", "prod-eks", setp(lambda c: eks(c)["network"].update(vpcCidr="10.0.0.0/12"))),
    ("eks-vpc-cidr-23", "prod-eks", setp(lambda c: eks(c)["network"].update(vpcCidr="10.1.0.0/23"))),
    # ---- EKS: values the APIs accept
    ("eks-log-retention-45-days", "prod-eks", setp(lambda c: eks(c).update(logRetentionDays=45))),
    ("eks-log-retention-100-days", "prod-eks", setp(lambda c: eks(c).update(logRetentionDays=100))),
    ("eks-log-retention-two-years-730", "prod-eks", setp(lambda c: eks(c).update(logRetentionDays=730))),
    ("eks-label-key-with-space", "prod-eks", setp(lambda c: pool(c, 1).update(labels={"team name": "ml"}))),
    ("eks-label-value-with-space", "prod-eks", setp(lambda c: pool(c, 1).update(labels={"example.com/owner": "ML Platform"}))),
    ("eks-label-node-role", "prod-eks", setp(lambda c: pool(c, 1).update(labels={"node-role.kubernetes.io/gpu": "true"}))),
    ("eks-label-k8s-io-prefix", "prod-eks", setp(lambda c: pool(c, 1).update(labels={"k8s.io/gpu-class": "inference"}))),
    ("eks-label-eks-reserved-prefix", "prod-eks", setp(lambda c: pool(c, 1).update(labels={"eks.amazonaws.com/team": "ml"}))),
    ("eks-taint-key-with-space", "prod-eks", setp(lambda c: pool(c, 1).update(taints=[{"key": "dedicated team", "value": "ml"}]))),
    ("eks-taint-value-with-colon", "prod-eks", setp(lambda c: pool(c, 1).update(taints=[{"key": "example.com/dedicated", "value": "ml:infer"}]))),
    ("eks-too-many-tags-for-the-autoscaler", "prod-eks", setp(lambda c: pool(c, 1).update(labels={f"example.com/k{i}": "v" for i in range(42)}))),
    ("eks-node-group-name-too-long", "prod-eks", setp(lambda c: (c[CLUSTER].update(name="gpu-platform-production-us-east-1"), pool(c, 1).update(name="l4-inference-realtime")))),
    ("eks-priority-class-system-prefix", "prod-eks", setp(lambda c: c.update({ADDONS: {"priorityClasses": {"enabled": True, "classes": [{"name": "system-gpu-critical", "value": 1000000}]}}}))),
    # ---- EKS: keys of other platforms
    ("eks-k3s-nfs-storage-block", "prod-eks", setp(lambda c: c.update({STORAGE: {"nfs": {"server": "10.0.5.10", "share": "/export/data"}}}))),
    ("eks-leftover-gke-block", "prod-eks", setp(lambda c: c[CLUSTER].update(gke={"region": "us-central1"}))),
    # ---- GKE: region and zones
    ("gke-zonal-cluster-zone-in-another-region", "prod-gke", setp(lambda c: gke(c).update(zone="us-east1-b"))),
    ("gke-node-zone-in-another-region", "prod-gke", setp(lambda c: gke(c).update(nodeZones=["us-central1-a", "us-east1-b"]))),
    ("gke-region-changed-pool-zone-not", "prod-gke", setp(lambda c: gke(c).update(region="europe-west4"))),
    ("gke-existing-subnetwork-in-another-region", "prod-gke", setp(lambda c: gke(c).update(network={"existing": {
        "network": "shared-vpc", "subnetwork": "projects/host/regions/us-east1/subnetworks/gke",
        "podsRangeName": "pods", "servicesRangeName": "svc"}}))),
    # ---- GKE: address plan
    ("gke-master-cidr-not-28", "prod-gke", setp(lambda c: gke(c).update(masterIpv4Cidr="172.16.0.0/24"))),
    ("gke-master-cidr-public", "prod-gke", setp(lambda c: gke(c).update(masterIpv4Cidr="34.118.0.0/28"))),
    ("gke-master-cidr-in-node-subnet", "prod-gke", setp(lambda c: gke(c).update(masterIpv4Cidr="10.0.0.16/28"))),
    ("gke-pods-overlap-nodes", "prod-gke", setp(lambda c: gke(c).update(network={"subnetCidr": "10.16.0.0/20"}))),
    ("gke-services-inside-pods", "prod-gke", setp(lambda c: gke(c).update(network={"servicesCidr": "10.17.0.0/20"}))),
    ("gke-gpudirect-overlaps-nodes", "prod-gke", setp(lambda c: gke(c).update(network={"gpuDirectCidr": "10.0.0.0/16"}))),
    ("gke-master-cidr-inside-gpudirect-range", "prod-gke", setp(lambda c: gke(c).update(masterIpv4Cidr="192.168.200.0/28"))),
    ("gke-pods-inside-gpudirect-range", "prod-gke", setp(lambda c: gke(c).update(network={"podsCidr": "192.168.0.0/18"}))),
    ("gke-too-many-authorized-networks", "prod-gke", setp(lambda c: gke(c).update(authorizedNetworks=[{"cidr": f"198.51.{i}.0/24"} for i in range(51)]))),
    # ---- GKE: values and names
    ("gke-pool-name-starts-with-digit", "prod-gke", setp(lambda c: pool(c, 1).update(name="4x-l4-infer"))),
    ("gke-label-value-with-space", "prod-gke", setp(lambda c: pool(c, 1).update(labels={"example.com/tier": "real time"}))),
    ("gke-label-node-role", "prod-gke", setp(lambda c: pool(c, 1).update(labels={"node-role.kubernetes.io/inference": ""}))),
    ("gke-label-key-uppercase-prefix", "prod-gke", setp(lambda c: pool(c, 1).update(labels={"Example.com/team": "ml"}))),
    ("gke-taint-value-with-slash", "prod-gke", setp(lambda c: pool(c, 1).update(taints=[{"key": "example.com/workload", "value": "llm/serving"}]))),
    ("gke-priority-class-system-prefix", "prod-gke", setp(lambda c: c.update({ADDONS: {"priorityClasses": {"enabled": True, "classes": [{"name": "system-inference", "value": 100000}]}}}))),
    # ---- GKE: machine <-> disk, driver floor
    ("gke-hyperdisk-default-on-e2-system-pool", "prod-gke", setp(lambda c: gke(c)["storage"].update(defaultDiskType="hyperdisk-balanced"))),
    ("gke-hyperdisk-default-on-n2-system-pool", "prod-gke", setp(lambda c: (gke(c)["storage"].update(defaultDiskType="hyperdisk-balanced"), gke(c)["systemPool"].update(machineType="n2-standard-4")))),
    ("gke-b200-under-operator-pinned-535", "prod-gke", setp(lambda c: (gke(c).update(gpuStack="operator"), c.update({OPERATOR: {"driver": {"source": "operator", "version": "535.261.03"}}, NO_CUDA: {"cudaVersions": []}}),
                                                                      c.update({POOLS: [{"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2}]})))),
    ("gke-h200-under-operator-pinned-535", "prod-gke", setp(lambda c: (gke(c).update(gpuStack="operator"), c.update({OPERATOR: {"driver": {"source": "operator", "version": "535.261.03"}}, NO_CUDA: {"cudaVersions": []}}),
                                                                      c.update({POOLS: [{"name": "h200", "machineType": "a3-ultragpu-8g", "maxNodes": 2}]})))),
    # ---- GKE: keys of other platforms
    ("gke-k3s-nfs-storage-block", "prod-gke", setp(lambda c: c.update({STORAGE: {"nfs": {"server": "10.0.5.10", "share": "/export/data"}}}))),
    ("gke-leftover-eks-block", "prod-gke", setp(lambda c: c[CLUSTER].update(eks={"network": {"availabilityZones": ["us-east-1a", "us-east-1b"]}}))),
    # ---- k3s: driver floor
    ("k3s-b200-under-operator-pinned-535", "dev", setp(lambda c: (pool(c, 1).update(gpu="B200"), c.update({OPERATOR: {"driver": {"source": "operator", "version": "535.261.03"}}, NO_CUDA: {"cudaVersions": []}})))),
    ("k3s-h100-on-preinstalled-520", "dev", setp(lambda c: (pool(c, 1).update(gpu="H100-80GB"), c.update({OPERATOR: {"driver": {"source": "preinstalled", "version": "520.61.05"}}}),
                                                        c.update({NO_CUDA: {"cudaVersions": []}})))),
    ("k3s-h200-under-operator-pinned-545", "dev", setp(lambda c: (pool(c, 1).update(gpu="H200"), c.update({OPERATOR: {"driver": {"source": "operator", "version": "545.29.06"}}}),
                                                              c.update({NO_CUDA: {"cudaVersions": []}})))),
    # ---- k3s: address plan
    ("k3s-rdma-range-inside-cluster-cidr", "lab", setp(lambda c: pool(c, 2)["rdmaNetwork"].update(ipRange="10.42.100.0/24"))),
    ("k3s-rdma-range-inside-service-cidr", "lab", setp(lambda c: pool(c, 2)["rdmaNetwork"].update(ipRange="10.43.0.0/24"))),
    ("k3s-rdma-range-covers-both", "lab", setp(lambda c: pool(c, 2)["rdmaNetwork"].update(ipRange="10.0.0.0/8"))),
    # ---- k3s: values
    ("k3s-label-value-with-space", "dev", setp(lambda c: pool(c).update(labels={"example.com/room": "rack 4"}))),
    ("k3s-label-name-too-long", "dev", setp(lambda c: pool(c).update(labels={"example.com/" + "x" * 64: "1"}))),
    ("k3s-label-prefix-with-underscore", "dev", setp(lambda c: pool(c).update(labels={"gpu_lab.example.com/owner": "ml"}))),
    ("k3s-taint-key-two-slashes", "dev", setp(lambda c: pool(c).update(taints=[{"key": "example.com/gpu/dedicated", "value": "true"}]))),
    ("k3s-taint-value-too-long", "dev", setp(lambda c: pool(c).update(taints=[{"key": "example.com/reserved-for", "value": "team-" + "a" * 60}]))),
    ("k3s-team-namespace-default", "teams", setp(lambda c: c[ADDONS]["kueue"]["teams"][1].update(namespace="default"))),
    ("k3s-team-namespace-kube-prefix", "teams", setp(lambda c: c[ADDONS]["kueue"]["teams"][0].update(name="kube-ml"))),
    ("k3s-priority-class-system-prefix", "teams", setp(lambda c: c[ADDONS].update(priorityClasses={"enabled": True, "classes": [{"name": "system-training", "value": 10000}]}))),
    # ---- k3s: keys of other platforms
    ("k3s-leftover-eks-block", "dev", setp(lambda c: c[CLUSTER].update(eks={"network": {"availabilityZones": ["us-east-1a", "us-east-1b"]}}))),
    # ---- k3s: one machine that is server and GPU node
    ("k3s-gpu-server-with-taint-servers", "dev", setp(lambda c: (_one_machine(c), c[CLUSTER]["k3s"].update(taintServers=True)))),
    ("k3s-gpu-server-pool-taint-noschedule", "dev", setp(lambda c: (_one_machine(c), pool(c).update(taints=[{"key": "example.com/dedicated", "value": "ml", "effect": "NoSchedule"}])))),
    ("k3s-gpu-server-listed-with-other-address", "dev", setp(lambda c: _one_machine(c, address="192.0.2.99"))),
    ("k3s-gpu-server-in-two-pools", "dev", setp(lambda c: (_one_machine(c), pool(c, 1).update(hosts=[{"name": "cp-1", "address": "192.0.2.10"}])))),
]


# Valid but unusual: each must plan with exit 0 and no mandatory violation.
def _always_on_gke(c: dict) -> None:
    pool(c, 1).update(minNodes=1, capacity="on-demand",
                      exemptions={"gpu-pool-scale-to-zero": "always-on-inference_one-warm-L4-keeps-p99-under-300ms"})
    pool(c, 1)["gke"].pop("reservation", None)


def _one_machine_k3s(c: dict) -> None:
    c[CLUSTER]["k3s"]["agents"] = []
    c[POOLS] = [{"name": "workstation", "gpu": "L4", "gpusPerNode": 1, "pricePerNodeHour": 0.0,
                 "hosts": [{"name": "cp-1", "address": "192.0.2.10"}]}]


def _gke_hyperdisk_a4(c: dict) -> None:
    gke(c)["storage"] = {"defaultDiskType": "hyperdisk-balanced"}
    gke(c)["systemPool"] = {"machineType": "c3-standard-4", "minNodes": 1, "maxNodes": 3}
    c[POOLS] = [{"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2}]


def _gke_zonal(c: dict) -> None:
    gke(c).update(zone="us-central1-a", nodeZones=["us-central1-a"])
    pool(c, 1)["gke"]["zones"] = ["us-central1-a"]


def _eks_tag_boundary(c: dict) -> None:
    # 5 labels of gpufleet's + 38 = 43 labels, 1 taint, 1 resource: 45 node-template tags; the node group carries
    # 2 discovery + 45 + 1 exemption = 48 tags, its Auto Scaling group 45 + 5 of EKS's = 50, AWS's limit.
    pool(c, 1)["labels"] = {f"example.com/k{i}": "v" for i in range(38)}


VALID: list[tuple[str, str, Callable[[dict], dict]]] = [
    ("gke-always-on-inference-pool-exempt", "prod-gke", setp(_always_on_gke)),
    ("k3s-one-machine-cluster", "dev", setp(_one_machine_k3s)),
    ("gke-hyperdisk-default-c3-system-a4-pool", "prod-gke", setp(_gke_hyperdisk_a4)),
    ("gke-zonal-cluster-in-region", "prod-gke", setp(_gke_zonal)),
    ("eks-smallest-vpc-22", "prod-eks", setp(lambda c: eks(c)["network"].update(vpcCidr="10.20.0.0/22"))),
    ("eks-kms-key-in-region", "prod-eks", setp(lambda c: eks(c).update(kmsKeyArn="arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"))),
    ("eks-log-retention-ten-years", "prod-eks", setp(lambda c: eks(c).update(logRetentionDays=3653))),
    ("eks-labels-at-the-tag-limit", "prod-eks", setp(_eks_tag_boundary)),
    ("k3s-rdma-range-beside-k3s-cidrs", "lab", setp(lambda c: pool(c, 2)["rdmaNetwork"].update(ipRange="10.44.0.0/16"))),
    ("k3s-b200-on-preinstalled-580", "dev", setp(lambda c: (pool(c, 1).update(gpu="B200"), c.update({OPERATOR: {"driver": {"source": "preinstalled", "version": "580.95.05"}}})))),
    ("gke-operator-h100-driver-580", "prod-gke", setp(lambda c: (gke(c).update(gpuStack="operator"), c.update({OPERATOR: {"driver": {"source": "operator", "version": "580.126.20"}}}),
                                                               c.update({POOLS: [{"name": "h100", "machineType": "a3-highgpu-8g", "maxNodes": 2}]})))),
    ("k3s-priority-class-systematic-not-system-dash", "teams", setp(lambda c: c[ADDONS].update(priorityClasses={"enabled": True, "classes": [{"name": "systematic-batch", "value": 500}]}))),
    # Issue 33: a sentence is a reason; the node label carries its label-safe form, the plan the sentence.
    ("gke-exemption-reason-is-a-sentence", "prod-gke", setp(lambda c: pool(c, 1).update(minNodes=1, exemptions={"gpu-pool-scale-to-zero": "always-on: keeps p99 latency low"}))),
    ("gke-label-empty-value-and-kubelet-allowed-key", "prod-gke", setp(lambda c: pool(c, 1).update(labels={"example.com/canary": "", "node.kubernetes.io/role-hint": "inference"}))),
]
