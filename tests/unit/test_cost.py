"""The cost breakdown of every example stack, item by item, hand-checked once against the public price pages.

Prices used below (read 2026-12-02; the same figures and sources are in gpufleet/base/catalog/charges.yaml):
- EKS control plane $0.10/cluster-hour in standard support, $0.60 in extended support
  (aws.amazon.com/eks/pricing; AWS Containers blog "Amazon EKS extended support for Kubernetes versions pricing");
  EKS 1.34 standard support ends 2026-12-02, 1.33 ended 2026-07-29 (EKS release calendar, kubernetes.yaml); extended
  billing starts at the beginning of that day, so on the catalog's date (2026-12-02) 1.34 costs $0.60 (corrected
  2026-12-03: the cost used to count that day as standard while the plan's own warning said extended).
- NAT gateway $0.045/hour in us-east-1 (aws.amazon.com/vpc/pricing, secondary reading); public IPv4 $0.005/hour
  (AWS blog "Identify and optimize public IPv4 address usage on AWS"); KMS key $1/month (aws.amazon.com/kms/pricing).
- EBS gp3 $0.08/GB-month in us-east-1 (aws.amazon.com/ebs/pricing, secondary reading); EC2 m7i.xlarge $0.2016/h,
  g6.xlarge $0.8048/h, p5.48xlarge spot estimate $30/h (gpufleet/base/catalog/aws_instances.yaml).
- GKE cluster management fee $0.10/cluster-hour, free tier $74.40/month for zonal/Autopilot clusters only
  (cloud.google.com/kubernetes-engine/pricing); Cloud NAT $0.0014 per VM-hour up to 32 VMs plus $0.005/hour per
  NAT IP (cloud.google.com/nat/pricing); pd-balanced $0.10/GiB-month in Iowa (Google pricing calculator);
  a3-highgpu-8g $88.49/h, g2-standard-8 spot $0.34/h (gpufleet/base/catalog/gcp_machines.yaml).
- e2-standard-4 (the GKE system pool) $0.134012/h in us-central1 (charges.yaml gce_e2_pricing: a secondary reading of
  cloud.google.com/compute/vm-instance-pricing, added 2026-12-03). FSx PERSISTENT_2 at 500 MB/s/TiB and Filestore in
  us-central1 were not found: unpriced.

The four stacks of issues 15 and 20, hand-checked 2026-12-03 from the same catalog figures:
- EKS 1.32 (ai-on-eks's own version) is in extended support since 2026-03-23: $0.60/cluster-hour (eks_pricing, EKS
  version lifecycle); since issue 32 every example stack runs 1.35, in standard support ($0.10) until 2027-03-27. EC2 on-demand (aws_instances.yaml, ec2_pricing): m6i.xlarge $0.192, g5.2xlarge $1.212, g6.2xlarge
  $0.9776, p4d.24xlarge $21.96, p5.48xlarge $55.04; spot estimate g6.xlarge $0.35. A pool listing several instance
  types is priced by the first (managed node groups launch on-demand nodes in the listed order; Karpenter pools
  the same way).
- A reservation a pool draws on bills all its instances whether used or not (EC2 User Guide, "Capacity Reservation
  pricing and billing"; Compute Engine, "Reservations of Compute Engine zonal resources"): a committed item; an EC2
  Capacity Block has its own upfront price (aws.amazon.com/ec2/capacityblocks/pricing; the catalog holds P6e-GB200's
  only, not p5's) and DWS flex-start/queued theirs (cloud.google.com/products/dws/pricing): so unpriced here. g2-standard-8 on-demand
  $0.85 (gcp_machines.yaml, gce_pricing).
"""

from __future__ import annotations

import datetime

import pytest

from gpufleet.base.catalog import charges
from tests.helpers import STACKS, example_config, plan_config, planned

H = 730  # hours per month, as the price pages convert
NAT, IP, KMS = 0.045, 0.005, 1.0 / H
GP3 = 0.08 / H  # per GB-hour
EKS_135 = 0.10  # EKS 1.35 (every example stack since issue 32): standard support until 2027-03-27 (kubernetes.yaml)
PD_BALANCED = 0.10 / H  # per GiB-hour
E2_STANDARD_4 = 0.134012  # us-central1 on-demand (charges.yaml gce_e2_pricing, secondary reading)
ALERT_CONDITION = 1.50 / H  # one Cloud Monitoring alert condition a month (charges.yaml monitoring_alerting)


def breakdown(stack: str) -> dict[str, tuple]:
    """key -> (count at minimum, count at maximum, $/h at minimum, $/h at maximum), money rounded to 4 places."""
    return {i["key"]: (i["countMin"], i["count"], i["hourlyMin"], i["hourlyMax"]) for i in planned(stack).cost.to_json()["items"]}


def r(x: float) -> float:
    return round(x, 4)


HAND_CHECKED = {"dev", "ha", "lab", "teams", "prod-eks", "prod-gke", "teams-eks", "ai-on-eks", "p5-efa", "karpenter-eks",
                "dws-gke", "amd-lab", "airgap-k3s", "airgap-eks", "nvl72-k3s", "nvl72-gke", "nvl72-eks",
                "cold-start-k3s", "cold-start-eks", "cold-start-gke", "existing-coreweave", "airgap-gke", "inference-eks",
                "inference-gke", "inference-k3s", "aks-train", "gitops-k3s"}
# Stacks whose serving Gateway gets a load balancer from its controller at run time (unpriced, listed).
GATEWAY_STACKS = {"inference-eks", "inference-gke"}


def test_model_caches_are_priced_as_the_claims_they_are():
    """A model cache is billed as its claim on the file storage: FSx for Lustre PERSISTENT_2 at 125 MB/s/TiB
    (~$0.145/GB-month, charges.yaml fsx_pricing) for 1200 GiB; Filestore in us-central1 is unpriced (the catalog has
    only Oregon's Basic HDD rate) and says so; NFS on your own hosts costs nothing by the hour."""
    eks = breakdown("cold-start-eks")["storage:claim:cold-eks-model-cache-default-llama-3-1-70b-pvc"]
    assert eks == (1, 1, r(1200 * 0.145 / 730), r(1200 * 0.145 / 730))
    gke = breakdown("cold-start-gke")["storage:claim:cold-gke-model-cache-default-gemma-2-9b-pvc"]
    assert gke[2:] == (None, None)
    k3s = breakdown("cold-start-k3s")["storage:claim:cold-k3s-model-cache-default-llama-3-1-8b-pvc"]
    assert k3s[2:] == (0.0, 0.0)


def test_every_example_stack_is_covered_below():
    assert set(STACKS) == HAND_CHECKED


@pytest.mark.parametrize("stack", sorted(HAND_CHECKED))
def test_every_item_is_sourced_and_totals_add_up(stack):
    cost = planned(stack).cost.to_json()
    items = cost["items"]
    assert items
    assert all(i["source"] for i in items), "every item says where its price (or its missing price) comes from"
    counted = [i for i in items if i["kind"] != "per-claim" and i["count"] > 0]
    assert cost["atLeast"] == any(i["hourlyMax"] is None for i in counted)
    # items are shown to 4 places, totals are summed before rounding
    slack = 1e-4 * len(counted)
    assert cost["hourlyMin"] == pytest.approx(sum(i["hourlyMin"] or 0 for i in counted), abs=slack)
    assert cost["hourlyMax"] == pytest.approx(sum(i["hourlyMax"] or 0 for i in counted), abs=slack)


def test_ai_on_eks_breakdown():
    vol = lambda gib, n: r(gib * GP3 * n)  # noqa: E731
    assert breakdown("ai-on-eks") == {
        "control-plane:ai-stack-eks-cluster": (1, 1, EKS_135, EKS_135),  # EKS 1.35 (ai-on-eks deploys 1.32: see stack)
        "nodes:system": (2, 8, r(2 * 0.192), r(8 * 0.192)),
        "storage:system:/dev/xvda": (2, 8, vol(50, 2), vol(50, 8)),
        # Bottlerocket: the launch template maps the 200 GiB data volume, the AMI its OS volume; from zero to 8 nodes
        "gpu-nodes:g6-inference": (0, 8, 0.0, r(8 * 0.9776)),
        "storage:g6-inference:/dev/xvdb": (0, 8, 0.0, vol(200, 8)),
        "storage:g6-inference:/dev/xvda": (0, 8, None, None),  # the OS volume: its size is the AMI's, unknown
        "gpu-nodes:g5-inference": (0, 8, 0.0, r(8 * 1.212)),
        "storage:g5-inference:/dev/xvdb": (0, 8, 0.0, vol(200, 8)),
        "storage:g5-inference:/dev/xvda": (0, 8, None, None),
        "network:ai-stack-network-nat-us-east-1a": (1, 1, NAT, NAT),  # singleNatGateway
        "network:ip:ai-stack-network-nat-us-east-1a": (1, 1, IP, IP),
        "key:ai-stack-eks-secrets-key": (1, 1, r(KMS), r(KMS)),
        # PERSISTENT_2 at 500 MB/s/TiB: no sourced price (charges.yaml fsx_pricing), so unpriced, never 0
        "storage:ai-stack-fsx-shared": (1, 1, None, None),
        "per-claim:fsx-lustre": (0, 0, 0.0, 0.0),
        # gpufleet:observability kube-prometheus-stack (issue 16): Prometheus's 50 GiB claim on the default gp3 class.
        "storage:claim:ai-stack-observability-release": (1, 1, vol(50, 1), vol(50, 1)),
    }
    cost = planned("ai-on-eks").cost.to_json()
    floor = EKS_135 + 2 * 0.192 + 50 * GP3 * 2 + 50 * GP3 + NAT + IP + KMS
    top = EKS_135 + 8 * 0.192 + 8 * 0.9776 + 8 * 1.212 + (50 * 8 + 200 * 16 + 50) * GP3 + NAT + IP + KMS
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"]) == (r(floor), r(top), True)
    assert cost["unpriced"] == ["g5-inference /dev/xvda (Bottlerocket OS volume)", "g6-inference /dev/xvda (Bottlerocket OS volume)",
                                "FSx for Lustre ai-stack-fsx-shared (PERSISTENT_2, 2400 GiB)"]
    assert (cost["monthlyMin"], cost["monthlyMax"]) == (round(r(floor) * H, 2), round(r(top) * H, 2))


def test_p5_efa_breakdown():
    vol = lambda gib, n: r(gib * GP3 * n)  # noqa: E731
    assert breakdown("p5-efa") == {
        "control-plane:p5-efa-eks-cluster": (1, 1, EKS_135, EKS_135),
        "nodes:system": (2, 4, r(2 * 0.2016), r(4 * 0.2016)),  # the default system pool: 2-4 m7i.xlarge
        "storage:system:/dev/xvda": (2, 4, vol(50, 2), vol(50, 4)),
        "gpu-nodes:p5": (2, 10, r(2 * 55.04), r(10 * 55.04)),  # minNodes 2 (exempted): warm at the floor
        "storage:p5:/dev/xvda": (2, 10, vol(200, 2), vol(200, 10)),
        "gpu-nodes:p4d": (0, 1, 0.0, 21.9576),
        "storage:p4d:/dev/xvda": (0, 1, 0.0, vol(200, 1)),
        **{f"network:p5-efa-network-nat-us-east-1{z}": (1, 1, NAT, NAT) for z in "abc"},
        **{f"network:ip:p5-efa-network-nat-us-east-1{z}": (1, 1, IP, IP) for z in "abc"},
        "key:p5-efa-eks-secrets-key": (1, 1, r(KMS), r(KMS)),
    }
    cost = planned("p5-efa").cost.to_json()
    floor = EKS_135 + 2 * 0.2016 + 2 * 55.04 + (50 * 2 + 200 * 2) * GP3 + 3 * NAT + 3 * IP + KMS
    top = EKS_135 + 4 * 0.2016 + 10 * 55.04 + 21.957642 + (50 * 4 + 200 * 11) * GP3 + 3 * NAT + 3 * IP + KMS
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"]) == (r(floor), r(top), False)


def test_karpenter_eks_breakdown_counts_the_capacity_block_as_committed_and_unpriced():
    vol = lambda gib, n: r(gib * GP3 * n)  # noqa: E731
    assert breakdown("karpenter-eks") == {
        "control-plane:karpenter-gpu-eks-cluster": (1, 1, EKS_135, EKS_135),
        "nodes:system": (2, 4, r(2 * 0.2016), r(4 * 0.2016)),  # first type m7i.xlarge
        "storage:system:/dev/xvda": (2, 4, vol(50, 2), vol(50, 4)),
        # Karpenter pools (NodePool + EC2NodeClass): none at the floor, maxNodes at most; the root volume per node
        "gpu-nodes:l4-spot": (0, 8, 0.0, r(8 * 0.35)),
        "storage:l4-spot:/dev/xvda": (0, 8, 0.0, vol(200, 8)),
        # the Capacity Block's 2 p5.48xlarge are paid whether used or not, at a price the catalog lacks; the pool's
        # maxNodes (2) never goes beyond it
        "reservation:h100-block": (2, 2, None, None),
        "gpu-nodes:h100-block": (0, 0, None, None),
        "storage:h100-block:/dev/xvda": (0, 2, 0.0, vol(500, 2)),
        # the Bottlerocket pool on a data-volume snapshot (cold start): on-demand g6.2xlarge, its data volume per node
        "gpu-nodes:l4-burst": (0, 4, 0.0, r(4 * 0.9776)),
        "storage:l4-burst:/dev/xvdb": (0, 4, 0.0, vol(100, 4)),
        **{f"network:karpenter-gpu-network-nat-us-east-1{z}": (1, 1, NAT, NAT) for z in "abc"},
        **{f"network:ip:karpenter-gpu-network-nat-us-east-1{z}": (1, 1, IP, IP) for z in "abc"},
        "key:karpenter-gpu-eks-secrets-key": (1, 1, r(KMS), r(KMS)),
    }
    cost = planned("karpenter-eks").cost.to_json()
    block = next(i for i in cost["items"] if i["key"] == "reservation:h100-block")
    assert block["committed"] and "capacityblocks/pricing" in block["source"] and "declare pricePerNodeHour" in block["source"]
    assert cost["unpriced"] == ["reservation capacity-block cr-0123456789abcdef0 of pool h100-block (2 x p5.48xlarge)"]
    floor = EKS_135 + 2 * 0.2016 + 50 * GP3 * 2 + 3 * NAT + 3 * IP + KMS
    top = (EKS_135 + 4 * 0.2016 + 8 * 0.35 + 4 * 0.9776 + (50 * 4 + 200 * 8 + 500 * 2 + 100 * 4) * GP3 + 3 * NAT
           + 3 * IP + KMS)
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"]) == (r(floor), r(top), True)


def test_dws_gke_breakdown_counts_the_reservation_at_the_floor():
    disk = lambda gib, n: r(gib * PD_BALANCED * n)  # noqa: E731
    assert breakdown("dws-gke") == {
        "control-plane:dws-gke-gke-cluster": (1, 1, 0.1, 0.1),
        "nodes:system": (1, 3, r(E2_STANDARD_4), r(3 * E2_STANDARD_4)),
        "storage:system:boot": (1, 3, disk(100, 1), disk(100, 3)),
        "gpu-nodes:h100-flex": (0, 4, None, None),  # DWS flex-start: its own prices, not in the catalog
        "storage:h100-flex:boot": (0, 4, 0.0, disk(200, 4)),
        "gpu-nodes:a3mega-queued": (0, 4, None, None),  # DWS queued provisioning
        "storage:a3mega-queued:boot": (0, 4, 0.0, disk(200, 4)),
        # the specific reservation holds 4 g2-standard-8 billed at on-demand rates whether used or not
        "reservation:l4-reserved": (4, 4, r(4 * 0.85), r(4 * 0.85)),
        "gpu-nodes:l4-reserved": (0, 0, 0.0, 0.0),
        "storage:l4-reserved:boot": (0, 4, 0.0, disk(200, 4)),
        # the A3 Ultra reservation of the topology-aware pool (docs/topology.md): 4 a3-ultragpu-8g at on-demand rates
        "reservation:h200-train": (4, 4, r(4 * 86.8), r(4 * 86.8)),
        "gpu-nodes:h200-train": (0, 0, 0.0, 0.0),
        "storage:h200-train:boot": (0, 4, None, None),  # hyperdisk-balanced: no catalog price
        # private nodes use Cloud NAT: 1 VM at the floor, 3 + 4 + 4 + 4 + 4 at maximum; one NAT IP
        "network:dws-gke-network-nat": (1, 1, r(0.0014 * 1 + IP), r(0.0014 * 19 + IP)),
        # the gke-managed backend's idle-GPU alert: one Cloud Monitoring condition at $1.50 a month
        "monitoring:dws-gke-observability-gpu-allocated-idle": (1, 1, r(ALERT_CONDITION), r(ALERT_CONDITION)),
    }
    cost = planned("dws-gke").cost.to_json()
    assert cost["atLeast"] and cost["unpriced"] == ["GPU pool a3mega-queued (a3-megagpu-8g)", "GPU pool h100-flex (a3-highgpu-8g)",
                                                    "h200-train boot disks (hyperdisk-balanced, 200 GiB each)"]
    # the research team's queues sit on the two DWS pools: its quota (4 nodes x 8 GPUs each) has no price, never 0
    assert {(t["pool"], t["nominalQuota"], t["hourlyNominal"], t["hourlyMax"]) for t in cost["teams"]} == {
        ("a3mega-queued", 32, None, None), ("h100-flex", 32, None, None), ("h200-train", 32, r(4 * 86.8), r(4 * 86.8))}
    l4 = next(c for c in planned("dws-gke").capacity if c.pool == "l4-reserved")
    assert (l4.reserved_nodes, l4.hourly_min, l4.hourly_max) == (4, 4 * 0.85, 4 * 0.85)  # the capacity table agrees
    floor = 0.1 + E2_STANDARD_4 + 100 * PD_BALANCED + 4 * 0.85 + 4 * 86.8 + 0.0014 + IP + ALERT_CONDITION
    top = 0.1 + 3 * E2_STANDARD_4 + (100 * 3 + 200 * 12) * PD_BALANCED + 4 * 0.85 + 4 * 86.8 + 0.0014 * 19 + IP + ALERT_CONDITION
    assert (cost["hourlyMin"], cost["hourlyMax"]) == (r(floor), r(top))


def test_prod_eks_breakdown():
    vol = lambda gib, n: r(gib * GP3 * n)  # noqa: E731
    assert breakdown("prod-eks") == {
        "control-plane:prod-gpu-eks-cluster": (1, 1, EKS_135, EKS_135),
        "nodes:system": (2, 4, r(2 * 0.2016), r(4 * 0.2016)),
        "storage:system:/dev/xvda": (2, 4, vol(50, 2), vol(50, 4)),
        "gpu-nodes:h100-train": (0, 4, 0.0, 120.0),
        "storage:h100-train:/dev/xvda": (0, 4, 0.0, vol(500, 4)),
        "gpu-nodes:l4-infer": (1, 8, 0.8048, r(8 * 0.8048)),
        "storage:l4-infer:/dev/xvda": (1, 8, vol(200, 1), vol(200, 8)),
        **{f"network:prod-gpu-network-nat-us-east-1{z}": (1, 1, NAT, NAT) for z in "abc"},
        **{f"network:ip:prod-gpu-network-nat-us-east-1{z}": (1, 1, IP, IP) for z in "abc"},
        "key:prod-gpu-eks-secrets-key": (1, 1, r(KMS), r(KMS)),
        "per-claim:fsx-lustre": (0, 0, 0.0, 0.0),
    }
    cost = planned("prod-eks").cost.to_json()
    floor = EKS_135 + 2 * 0.2016 + 0.8048 + 50 * GP3 * 2 + 200 * GP3 + 3 * NAT + 3 * IP + KMS
    top = EKS_135 + 4 * 0.2016 + 8 * 0.8048 + 4 * 30.0 + (50 * 4 + 500 * 4 + 200 * 8) * GP3 + 3 * NAT + 3 * IP + KMS
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"]) == (r(floor), r(top), False)
    assert (cost["monthlyMin"], cost["monthlyMax"]) == (round(r(floor) * H, 2), round(r(top) * H, 2))
    fsx = next(i for i in cost["items"] if i["kind"] == "per-claim")
    assert fsx["unitHourly"] is None and "PERSISTENT_2 at 500 MB/s/TiB" in fsx["source"]
    assert any(n.startswith("EKS 1.35 leaves standard support on 2027-03-27: from then the control plane costs the "
                            "extended-support rate") for n in cost["notes"])


def test_teams_eks_breakdown_and_team_quotas():
    b = breakdown("teams-eks")
    assert b["gpu-nodes:h100-train"] == (0, 2, 0.0, 60.0)
    assert b["gpu-nodes:l4-infer"] == (1, 6, 0.8048, r(6 * 0.8048))
    assert b["control-plane:teams-eks-eks-cluster"] == (1, 1, EKS_135, EKS_135)
    assert "per-claim:fsx-lustre" not in b  # no FSx in this stack
    teams = {(t["team"], t["pool"]): t for t in planned("teams-eks").cost.to_json()["teams"]}
    # research: no nominalQuota, so the whole pool at max size (2 x 8 GPUs) at 30 $/h per 8-GPU node
    assert (teams["research", "h100-train"]["nominalQuota"], teams["research", "h100-train"]["hourlyNominal"],
            teams["research", "h100-train"]["hourlyMax"]) == (16, 60.0, 60.0)
    # serving: 6 L4s (one per g6.xlarge node), no borrowing beyond the pool's 6 nodes
    assert (teams["serving", "l4-infer"]["nominalQuota"], teams["serving", "l4-infer"]["hourlyNominal"],
            teams["serving", "l4-infer"]["maxWithBorrowing"]) == (6, r(6 * 0.8048), 6)


def test_aks_train_breakdown():
    """AKS: the Standard tier's fee (charges.yaml aks.tiers) and the GPU pools in eastus from the undated Retail Prices
    snapshot (azure_vms.yaml `prices:`); CPU VM, disk and load balancer prices were not read, so those items are
    unpriced, never 0, and the totals are "at least"."""
    assert breakdown("aks-train") == {
        "control-plane:aks-train-aks-cluster": (1, 1, 0.1, 0.1),
        "nodes:system": (1, 3, None, None),
        "storage:system:boot": (1, 3, None, None),
        "load-balancer:aks-train-aks-cluster:lb": (1, 1, None, None),
        "gpu-nodes:a100spot": (0, 8, 0.0, r(8 * 0.444433)),
        "storage:a100spot:boot": (0, 8, None, None),
        "gpu-nodes:h100ib": (0, 4, 0.0, r(4 * 98.32)),
        "storage:h100ib:boot": (0, 4, None, None),
        "storage:claim:aks-train-observability-release": (1, 1, None, None),
    }
    cost = planned("aks-train").cost.to_json()
    assert cost["atLeast"] and (cost["hourlyMin"], cost["hourlyMax"]) == (0.1, r(0.1 + 8 * 0.444433 + 4 * 98.32))
    fee = next(i for i in cost["items"] if i["kind"] == "control-plane")
    assert "Uptime SLA" in fee["source"]
    gpu = next(i for i in cost["items"] if i["key"] == "gpu-nodes:h100ib")
    assert (gpu["unitHourly"], gpu["priceAsOf"], gpu["priceOrigin"]) == (98.32, "", "snapshot")


def test_prod_gke_breakdown():
    disk = lambda gib, n: r(gib * PD_BALANCED * n)  # noqa: E731
    assert breakdown("prod-gke") == {
        "control-plane:prod-gke-gke-cluster": (1, 1, 0.1, 0.1),
        "nodes:system": (1, 3, r(E2_STANDARD_4), r(3 * E2_STANDARD_4)),
        "storage:system:boot": (1, 3, disk(100, 1), disk(100, 3)),
        "gpu-nodes:h100-train": (0, 4, 0.0, r(4 * 88.49)),
        "storage:h100-train:boot": (0, 4, 0.0, disk(200, 4)),
        "gpu-nodes:l4-infer": (0, 8, 0.0, r(8 * 0.34)),
        "storage:l4-infer:boot": (0, 8, 0.0, disk(200, 8)),
        # every node is private, so every node uses Cloud NAT: 1 VM at the floor, 3 + 4 + 8 at maximum; one NAT IP
        "network:prod-gke-network-nat": (1, 1, r(0.0014 * 1 + IP), r(0.0014 * 15 + IP)),
        # Filestore in us-central1 has no sourced price: what each claim would cost is unknown (never counted)
        "per-claim:gpufleet-rwx": (0, 0, 0.0, 0.0),
        "monitoring:prod-gke-observability-gpu-allocated-idle": (1, 1, r(ALERT_CONDITION), r(ALERT_CONDITION)),
    }
    cost = planned("prod-gke").cost.to_json()
    assert not cost["atLeast"] and cost["unpriced"] == []
    floor = 0.1 + E2_STANDARD_4 + 100 * PD_BALANCED + 0.0014 + IP + ALERT_CONDITION
    top = 0.1 + 3 * E2_STANDARD_4 + 4 * 88.49 + 8 * 0.34 + (100 * 3 + 200 * 12) * PD_BALANCED + 0.0014 * 15 + IP + ALERT_CONDITION
    assert (cost["hourlyMin"], cost["hourlyMax"]) == (r(floor), r(top))
    rwx = next(i for i in cost["items"] if i["key"] == "per-claim:gpufleet-rwx")
    assert rwx["unitHourly"] is None and "Filestore BASIC_HDD" in rwx["source"]
    assert any("not for this regional cluster" in n and "74.40" in n for n in cost["notes"])


def test_airgap_gke_has_no_nat_line():
    """Private nodes without Cloud NAT (Private Google Access): the control plane, the system pool and its disks, the
    L4 pool at 0-4 g2-standard-8 and its disks, one alert condition; no Cloud NAT gateway or address."""
    assert breakdown("airgap-gke") == {
        "control-plane:airgap-gke-gke-cluster": (1, 1, 0.1, 0.1),
        "nodes:system": (1, 3, r(E2_STANDARD_4), r(3 * E2_STANDARD_4)),
        "storage:system:boot": (1, 3, r(100 * PD_BALANCED), r(300 * PD_BALANCED)),
        "gpu-nodes:l4": (0, 4, 0.0, 3.4),
        "storage:l4:boot": (0, 4, 0.0, r(800 * PD_BALANCED)),
        "monitoring:airgap-gke-observability-gpu-allocated-idle": (1, 1, r(ALERT_CONDITION), r(ALERT_CONDITION)),
    }


@pytest.mark.parametrize("stack,gpu", [
    ("dev", {"gpu-nodes:l4": (1, 1, 0.85, 0.85), "gpu-nodes:a100": (1, 1, 14.5, 14.5)}),
    # Prometheus's claim (kube-prometheus-stack) on the hosts' own storage costs nothing by the hour.
    ("airgap-k3s", {"gpu-nodes:l4": (1, 1, 0.85, 0.85), "gpu-nodes:a100": (1, 1, 14.5, 14.5),
                    "storage:claim:airgap-k3s-observability-release": (1, 1, 0.0, 0.0)}),
    ("teams", {"gpu-nodes:a100-train": (2, 2, 29.0, 29.0), "gpu-nodes:l4-infer": (2, 2, 1.7, 1.7)}),
    # Two A100 hosts at the stack's 14.5/h each, one L4 host at 0.85/h; the delegated layer (Argo CD's) costs nothing.
    ("gitops-k3s", {"gpu-nodes:a100-train": (2, 2, 29.0, 29.0), "gpu-nodes:l4-serve": (1, 1, 0.85, 0.85),
                    "storage:claim:gitops-observability-release": (1, 1, 0.0, 0.0)}),
    ("lab", {"gpu-nodes:l4-shared": (2, 2, 4.8, 4.8), "gpu-nodes:h100-mig": (1, 1, 24.0, 24.0),
             "gpu-nodes:a100-rdma": (2, 2, 29.0, 29.0), "storage:claim:lab-storage-checkpoints": (1, 1, 0.0, 0.0)}),
])
def test_k3s_stacks_without_host_prices_are_at_least(stack, gpu):
    assert breakdown(stack) == {"host:cp-1": (1, 1, None, None), "host:cpu-1": (1, 1, None, None), **gpu}
    cost = planned(stack).cost.to_json()
    assert cost["atLeast"] and cost["unpriced"] == ["server cp-1", "CPU agent cpu-1"]
    assert cost["hourlyMin"] == r(sum(v[2] for v in gpu.values()))
    assert "self_hosted" not in cost["items"][0]["source"] and "pricePerHour" in cost["items"][0]["source"]


def test_ha_every_host_and_the_overhead_are_priced():
    assert breakdown("ha") == {
        **{f"host:cp-{n}": (1, 1, 0.12, 0.12) for n in (1, 2, 3)},
        **{f"host:cpu-{n}": (1, 1, 0.2, 0.2) for n in (1, 2)},
        "gpu-nodes:h100": (2, 2, 48.0, 48.0),
        "overhead:k3s": (1, 1, 0.05, 0.05),
    }
    cost = planned("ha").cost.to_json()
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"], cost["unpriced"]) == (48.81, 48.81, False, [])


def test_amd_lab_breakdown_from_the_declared_host_prices():
    """Issue 17: every host of stacks/Pulumi.amd-lab.yaml is priced in the stack (pricePerNodeHour per GPU pool,
    pricePerHour on the server), so the totals are exact: 0.15 (cp-1) + 20.0 (one CPX host) + 2 x 20.0 (training)
    + 0.8 (L4) = 60.95 $/h, at minimum and maximum (k3s pools have fixed sizes)."""
    assert breakdown("amd-lab") == {
        "host:cp-1": (1, 1, 0.15, 0.15),
        "gpu-nodes:mi300x-cpx": (1, 1, 20.0, 20.0),
        "gpu-nodes:mi300x-train": (2, 2, 40.0, 40.0),
        "gpu-nodes:l4": (1, 1, 0.8, 0.8),
    }
    cost = planned("amd-lab").cost.to_json()
    assert (cost["hourlyMin"], cost["hourlyMax"], cost["atLeast"], cost["unpriced"]) == (60.95, 60.95, False, [])
    assert (cost["monthlyMin"], cost["monthlyMax"]) == (round(60.95 * H, 2), round(60.95 * H, 2))
    teams = {(t["team"], t["pool"]): t for t in cost["teams"]}
    # The CPX host's whole quota (64 partitions of 8 GPUs) costs the host: 20 $/h; 8 of the training pool's 16 MI300X
    # cost half of it.
    assert (teams["research", "mi300x-cpx"]["nominalQuota"], teams["research", "mi300x-cpx"]["hourlyNominal"]) == (64, 20.0)
    assert (teams["research", "mi300x-train"]["nominalQuota"], teams["research", "mi300x-train"]["hourlyNominal"]) == (8, 20.0)


def test_teams_k3s_quota_costs():
    teams = {t["team"]: t for t in planned("teams").cost.to_json()["teams"]}
    # 14.5 $/h per 8-GPU node = 1.8125 per GPU; research 8 nominal, unlimited borrowing: the whole pool (16)
    assert (teams["research"]["hourlyNominal"], teams["research"]["maxWithBorrowing"], teams["research"]["hourlyMax"]) == (
        14.5, 16, 29.0)
    # vision: 8 nominal + 4 borrowing limit = 12 GPUs
    assert (teams["vision"]["hourlyNominal"], teams["vision"]["maxWithBorrowing"], teams["vision"]["hourlyMax"]) == (
        14.5, 12, 21.75)


def test_the_json_contract_keeps_its_keys():
    cost = planned("dev").cost.to_json()
    assert {"hourlyMin", "hourlyMax", "currency", "unpricedPools", "items", "monthlyMin", "monthlyMax"} <= set(cost)
    assert set(cost["items"][0]) >= {"name", "kind", "count", "unitHourly", "hourlyMin", "hourlyMax", "source"}


def test_extended_support_rate_and_unknown_versions():
    assert charges.eks_support("1.33") == ("extended", "2026-07-29")
    rate = charges.eks_control_plane("1.33")
    assert rate.value == 0.6 and "extended support (since 2026-07-29)" in rate.source
    # extended-support billing starts at the beginning of the end-of-standard-support day (kubernetes.yaml eks_calendar),
    # and the catalog was read on 1.34's: the plan's warning and its cost agree
    assert charges.eks_support("1.34") == ("extended", "2026-12-02")
    assert charges.eks_control_plane("1.34").value == 0.6
    assert charges.eks_support("1.34", on=datetime.date(2026, 12, 1)) == ("standard", "2026-12-02")
    assert charges.eks_control_plane("1.35").value == 0.1 and "until 2027-03-27" in charges.eks_control_plane("1.35").source
    assert charges.eks_control_plane("1.36").value == 0.1  # recorded as standard (its dates not read)
    assert isinstance(charges.eks_control_plane("1.99"), charges.Missing)


def test_a_region_the_catalog_lacks_is_unpriced_with_the_reason():
    config = example_config("teams-eks")
    config["aws:region"] = "eu-west-1"
    config["gpufleet:cluster"]["eks"]["network"]["availabilityZones"] = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    config["gpufleet:nodePools"][0]["availabilityZone"] = "eu-west-1a"
    cost = plan_config(config, stack="teams-eks", policies=False).cost.to_json()
    items = {i["key"]: i for i in cost["items"]}
    assert cost["atLeast"]
    assert items["control-plane:teams-eks-eks-cluster"]["hourlyMin"] == EKS_135  # one price everywhere
    assert items["network:teams-eks-network-nat-eu-west-1a"]["unpriced"]
    assert "no prices for region eu-west-1" in items["network:teams-eks-network-nat-eu-west-1a"]["source"]
    assert "us-east-1 figure; none for eu-west-1" in items["gpu-nodes:h100-train"]["source"]
    assert {t["team"]: t["hourlyNominal"] for t in cost["teams"]} == {"research": None, "serving": None}


def test_a_pool_without_a_price_is_listed_never_zero():
    config = example_config("dev")
    del config["gpufleet:nodePools"][1]["pricePerNodeHour"]
    cost = plan_config(config, stack="dev", policies=False).cost.to_json()
    a100 = next(i for i in cost["items"] if i["key"] == "gpu-nodes:a100")
    assert a100["unpriced"] and a100["hourlyMin"] is None and "has no pricePerNodeHour" in a100["source"]
    assert cost["unpricedPools"] == ["a100"] and "GPU pool a100 (A100-80GB)" in cost["unpriced"]
    assert cost["hourlyMin"] == 0.85  # the priced part only, and "at least"
    assert cost["atLeast"]


def test_a_server_that_is_also_a_gpu_host_is_priced_once_by_its_pool():
    config = example_config("dev")
    server = config["gpufleet:cluster"]["k3s"]["servers"][0]
    config["gpufleet:nodePools"] = [{**config["gpufleet:nodePools"][0], "hosts": [dict(server)]}]
    config["gpufleet:cluster"]["k3s"]["agents"] = []
    cost = plan_config(config, stack="dev", policies=False).cost.to_json()
    assert [(i["key"], i["hourlyMin"]) for i in cost["items"]] == [("gpu-nodes:l4", 0.85)]
    assert not cost["atLeast"]


def test_no_example_stack_creates_a_load_balancer():
    """charges.yaml has no load balancer prices because no example stack creates one; if one ever does, it is listed
    as unpriced (never 0) and this test asks for its price."""
    lb_types = {"aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer", "aws:elb/loadBalancer:LoadBalancer",
                "gcp:compute/forwardingRule:ForwardingRule", "gcp:compute/globalForwardingRule:GlobalForwardingRule"}
    for stack in sorted(HAND_CHECKED):
        p = planned(stack)
        assert not [r.name for r in p.resources if r.type in lb_types], stack
        if stack in GATEWAY_STACKS:
            lbs = [i for i in p.cost.to_json()["items"] if i["kind"] == "load-balancer"]
            assert [(i["name"], i["hourlyMin"]) for i in lbs] == [("load balancer of Gateway inference-gateway", None)]
            continue
        assert not [r.name for r in p.resources if r.type == "kubernetes:core/v1:Service"
                    and (r.inputs.get("spec") or {}).get("type") == "LoadBalancer"], stack
        lbs = [i for i in p.cost.to_json()["items"] if i["kind"] == "load-balancer"]
        if p.spec.cluster.platform == "aks":
            # AKS makes a Standard load balancer for the nodes' outbound traffic (outbound_type loadBalancer) with
            # every cluster: listed, unpriced (no Azure price source was reachable: docs/aks.md, Cost), never 0.
            assert [(i["key"], i["unitHourly"]) for i in lbs] == [(f"load-balancer:{stack}-aks-cluster:lb", None)], stack
            continue
        assert not lbs, stack


@pytest.mark.parametrize("deployment,throughput,why", [
    ("PERSISTENT_2", 500, "PERSISTENT_2 at 500 MB/s/TiB"),
    ("PERSISTENT_1", 200, "PERSISTENT_1 at 200 MB/s/TiB"),
    ("SCRATCH_2", None, "SCRATCH_2 in us-east-1"),
])
def test_fsx_tiers_without_a_sourced_price_are_missing(deployment, throughput, why):
    price = charges.fsx_lustre_gb_hourly("us-east-1", deployment, throughput)
    assert isinstance(price, charges.Missing) and why in price.reason
    assert charges.fsx_lustre_gb_hourly("us-east-1", "PERSISTENT_2", 125).value == pytest.approx(0.145 / H)
