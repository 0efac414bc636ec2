"""Unit tests (layer 1, with a few CLI runs): issue 14's corpus of realistic mistakes the clouds would reject,
each refused with its exact message (stack, key path, bad value, what is allowed), and unusual valid stacks that
plan clean. The cases are in tests/unit/cloud_mistakes_cases.py; specs are validated in process (fast), three
mistakes (one per platform) also through the `gpufleet plan` subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from gpufleet.app import cli
from gpufleet.base.capacity import addons_warnings
from gpufleet.base.spec import SpecError, load_spec
from gpufleet.base.spec.checks import compat_checks
from tests.helpers import ROOT, example_config, one, plan_config, stack_file
from tests.unit.cloud_mistakes_cases import MISTAKES, VALID

GPUFLEET = [sys.executable, "-m", "gpufleet.app.cli"]
CASES = {name: (base, change) for name, base, change in MISTAKES}

EXPECTED = {
    'eks-one-zone-from-another-region': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.availabilityZones[2]: not an availability zone of aws:region us-east-1 (zones there are us-east-1a, us-east-1b, ...) (got 'us-west-2c')",
    ],
    'eks-region-changed-zones-not': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.availabilityZones[0]: not an availability zone of aws:region eu-west-1 (zones there are eu-west-1a, eu-west-1b, ...) (got 'us-east-1a')",
        "stack 'prod-eks': gpufleet:cluster.eks.network.availabilityZones[1]: not an availability zone of aws:region eu-west-1 (zones there are eu-west-1a, eu-west-1b, ...) (got 'us-east-1b')",
        "stack 'prod-eks': gpufleet:cluster.eks.network.availabilityZones[2]: not an availability zone of aws:region eu-west-1 (zones there are eu-west-1a, eu-west-1b, ...) (got 'us-east-1c')",
        "stack 'prod-eks': gpufleet:nodePools[0].availabilityZone: not an availability zone of aws:region eu-west-1 (zones there are eu-west-1a, eu-west-1b, ...) (got 'us-east-1a')",
    ],
    'eks-kms-key-in-another-region': [
        "stack 'prod-eks': gpufleet:cluster.eks.kmsKeyArn: the key is in us-west-2, but EKS can only use a KMS key in the cluster's region (aws:region us-east-1) (got 'arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab')",
    ],
    'eks-existing-subnet-zone-in-another-region': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.subnets[1].availabilityZone: not an availability zone of aws:region us-east-1 (zones there are us-east-1a, us-east-1b, ...) (got 'us-east-2b')",
    ],
    'eks-vpc-cidr-too-small-for-public-subnets': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.vpcCidr: gpufleet cuts private /27 and public /30 subnets from it; AWS takes VPCs and subnets of /16 to /28 only, so use a /16 to /22 VPC, e.g. 10.0.0.0/16 (got '10.0.0.0/24')",
    ],
    'eks-vpc-cidr-too-large-for-aws': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.vpcCidr: gpufleet cuts private /15 and public /18 subnets from it; AWS takes VPCs and subnets of /16 to /28 only, so use a /16 to /22 VPC, e.g. 10.0.0.0/16 (got '10.0.0.0/12')",
    ],
    'eks-vpc-cidr-23': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.vpcCidr: gpufleet cuts private /26 and public /29 subnets from it; AWS takes VPCs and subnets of /16 to /28 only, so use a /16 to /22 VPC, e.g. 10.0.0.0/16 (got '10.1.0.0/23')",
    ],
    'eks-log-retention-45-days': [
        "stack 'prod-eks': gpufleet:cluster.eks.logRetentionDays: CloudWatch Logs takes only these retention periods (days): 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653 (got 45)",
    ],
    'eks-log-retention-100-days': [
        "stack 'prod-eks': gpufleet:cluster.eks.logRetentionDays: CloudWatch Logs takes only these retention periods (days): 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653 (got 100)",
    ],
    'eks-log-retention-two-years-730': [
        "stack 'prod-eks': gpufleet:cluster.eks.logRetentionDays: CloudWatch Logs takes only these retention periods (days): 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653 (got 730)",
    ],
    'eks-label-key-with-space': [
        "stack 'prod-eks': gpufleet:nodePools[1].labels: not a Kubernetes label key: the name part 'team name' must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (got 'team name')",
    ],
    'eks-label-value-with-space': [
        "stack 'prod-eks': gpufleet:nodePools[1].labels.example.com/owner: not a Kubernetes label value: a label value must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (no spaces, ':' or '/') (got 'ML Platform')",
    ],
    'eks-label-node-role': [
        "stack 'prod-eks': gpufleet:nodePools[1].labels: eks nodes register their labels through the kubelet, which refuses kubernetes.io / k8s.io keys except kubelet.kubernetes.io/*, node.kubernetes.io/*, topology.kubernetes.io/region|zone, kubernetes.io/arch|os|hostname; use your own prefix, e.g. example.com/role (got 'node-role.kubernetes.io/gpu')",
    ],
    'eks-label-k8s-io-prefix': [
        "stack 'prod-eks': gpufleet:nodePools[1].labels: eks nodes register their labels through the kubelet, which refuses kubernetes.io / k8s.io keys except kubelet.kubernetes.io/*, node.kubernetes.io/*, topology.kubernetes.io/region|zone, kubernetes.io/arch|os|hostname; use your own prefix, e.g. example.com/role (got 'k8s.io/gpu-class')",
    ],
    'eks-label-eks-reserved-prefix': [
        "stack 'prod-eks': gpufleet:nodePools[1].labels: EKS reserves the label prefixes eks.amazonaws.com/; use your own prefix (got 'eks.amazonaws.com/team')",
    ],
    'eks-taint-key-with-space': [
        "stack 'prod-eks': gpufleet:nodePools[1].taints[0].key: not a Kubernetes taint key: the name part 'dedicated team' must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (got 'dedicated team')",
    ],
    'eks-taint-value-with-colon': [
        "stack 'prod-eks': gpufleet:nodePools[1].taints[0].value: not a Kubernetes taint value: a label value must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (no spaces, ':' or '/') (got 'ml:infer')",
    ],
    'eks-too-many-tags-for-the-autoscaler': [
        "stack 'prod-eks': gpufleet:nodePools[1].labels: the pool's node group would carry 52 tags, over AWS's limit of 50 (the cluster autoscaler needs a node-template tag per label and taint); drop labels or taints (got 42)",
    ],
    'eks-node-group-name-too-long': [
        "stack 'prod-eks': gpufleet:nodePools[1].name: the EKS node group would be named gpu-platform-production-us-east-1-pool-l4-inference-realtime-ng-xxxxxxx (71 characters; EKS takes at most 63): with cluster name 'gpu-platform-production-us-east-1' a pool name has at most 13 characters (got 'l4-inference-realtime')",
    ],
    'eks-priority-class-system-prefix': [
        "stack 'prod-eks': gpufleet:addons.priorityClasses.classes[0].name: the 'system-' prefix is reserved for Kubernetes' own PriorityClasses; choose another name, e.g. platform-critical (got 'system-gpu-critical')",
    ],
    'eks-k3s-nfs-storage-block': [
        "stack 'prod-eks': gpufleet:storage.nfs: not used on eks: gpufleet:storage configures k3s storage only; on eks use cluster.eks.storage (EBS gp3 always, fsxLustre)",
    ],
    'eks-leftover-gke-block': [
        "stack 'prod-eks': gpufleet:cluster.gke: not used on eks: the gke block configures platform gke only; remove it (or set platform: gke)",
    ],
    'gke-zonal-cluster-zone-in-another-region': [
        "stack 'prod-gke': gpufleet:cluster.gke.zone: not a zone of the cluster's region us-central1 (cluster.gke.region; zones there are us-central1-a, us-central1-b, ...) (got 'us-east1-b')",
    ],
    'gke-node-zone-in-another-region': [
        "stack 'prod-gke': gpufleet:cluster.gke.nodeZones[1]: not a zone of the cluster's region us-central1 (cluster.gke.region; zones there are us-central1-a, us-central1-b, ...) (got 'us-east1-b')",
    ],
    'gke-region-changed-pool-zone-not': [
        "stack 'prod-gke': gpufleet:nodePools[0].gke.zones[0]: not a zone of the cluster's region europe-west4 (cluster.gke.region; zones there are europe-west4-a, europe-west4-b, ...) (got 'us-central1-a')",
    ],
    'gke-existing-subnetwork-in-another-region': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.existing.subnetwork: the subnetwork is in us-east1, but a GKE cluster's subnetwork must be in its region us-central1 (got 'projects/host/regions/us-east1/subnetworks/gke')",
    ],
    'gke-master-cidr-not-28': [
        "stack 'prod-gke': gpufleet:cluster.gke.masterIpv4Cidr: the control plane's range must be a private IPv4 /28, e.g. 172.16.0.0/28 (got '172.16.0.0/24')",
    ],
    'gke-master-cidr-public': [
        "stack 'prod-gke': gpufleet:cluster.gke.masterIpv4Cidr: the control plane's range must be a private IPv4 /28, e.g. 172.16.0.0/28 (got '34.118.0.0/28')",
    ],
    'gke-master-cidr-in-node-subnet': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.subnetCidr: overlaps cluster.gke.masterIpv4Cidr (10.0.0.16/28): pod, service, node, control-plane and GPUDirect ranges must not overlap (got '10.0.0.0/20')",
    ],
    'gke-pods-overlap-nodes': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.podsCidr: overlaps cluster.gke.network.subnetCidr (10.16.0.0/20): pod, service, node, control-plane and GPUDirect ranges must not overlap (got '10.16.0.0/14')",
    ],
    'gke-services-inside-pods': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.servicesCidr: overlaps cluster.gke.network.podsCidr (10.16.0.0/14): pod, service, node, control-plane and GPUDirect ranges must not overlap (got '10.17.0.0/20')",
    ],
    'gke-gpudirect-overlaps-nodes': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.gpuDirectCidr: overlaps cluster.gke.network.subnetCidr (10.0.0.0/20): pod, service, node, control-plane and GPUDirect ranges must not overlap (got '10.0.0.0/16')",
    ],
    'gke-master-cidr-inside-gpudirect-range': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.gpuDirectCidr: overlaps cluster.gke.masterIpv4Cidr (192.168.200.0/28): pod, service, node, control-plane and GPUDirect ranges must not overlap (got '192.168.0.0/16')",
    ],
    'gke-pods-inside-gpudirect-range': [
        "stack 'prod-gke': gpufleet:cluster.gke.network.gpuDirectCidr: overlaps cluster.gke.network.podsCidr (192.168.0.0/18): pod, service, node, control-plane and GPUDirect ranges must not overlap (got '192.168.0.0/16')",
    ],
    'gke-too-many-authorized-networks': [
        "stack 'prod-gke': gpufleet:cluster.gke.authorizedNetworks: GKE takes at most 50 authorized networks for a control plane with a public endpoint; merge CIDRs (got 51)",
    ],
    'gke-pool-name-starts-with-digit': [
        "stack 'prod-gke': gpufleet:nodePools[1].name: not a GKE node pool name: it must start with a lowercase letter (then lowercase letters, digits, '-'), at most 40 characters, e.g. l4-infer (got '4x-l4-infer')",
    ],
    'gke-label-value-with-space': [
        "stack 'prod-gke': gpufleet:nodePools[1].labels.example.com/tier: not a Kubernetes label value: a label value must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (no spaces, ':' or '/') (got 'real time')",
    ],
    'gke-label-node-role': [
        "stack 'prod-gke': gpufleet:nodePools[1].labels: gke nodes register their labels through the kubelet, which refuses kubernetes.io / k8s.io keys except kubelet.kubernetes.io/*, node.kubernetes.io/*, topology.kubernetes.io/region|zone, kubernetes.io/arch|os|hostname; use your own prefix, e.g. example.com/role (got 'node-role.kubernetes.io/inference')",
    ],
    'gke-label-key-uppercase-prefix': [
        "stack 'prod-gke': gpufleet:nodePools[1].labels: not a Kubernetes label key: the prefix 'Example.com' must be a lowercase DNS subdomain of at most 253 characters, e.g. example.com (got 'Example.com/team')",
    ],
    'gke-taint-value-with-slash': [
        "stack 'prod-gke': gpufleet:nodePools[1].taints[0].value: not a Kubernetes taint value: a label value must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (no spaces, ':' or '/') (got 'llm/serving')",
    ],
    'gke-priority-class-system-prefix': [
        "stack 'prod-gke': gpufleet:addons.priorityClasses.classes[0].name: the 'system-' prefix is reserved for Kubernetes' own PriorityClasses; choose another name, e.g. platform-critical (got 'system-inference')",
    ],
    'gke-hyperdisk-default-on-e2-system-pool': [
        "stack 'prod-gke': gpufleet:cluster.gke.storage.defaultDiskType: the system pool's e2-standard-4 (e2 series) cannot attach hyperdisk-balanced volumes, so add-ons' volumes on the default StorageClass never attach; use pd-balanced, or a system pool machine type that attaches hyperdisk-balanced (e.g. c3-standard-4, which attaches both) (got 'hyperdisk-balanced')",
    ],
    'gke-hyperdisk-default-on-n2-system-pool': [
        "stack 'prod-gke': gpufleet:cluster.gke.storage.defaultDiskType: the system pool's n2-standard-4 (n2 series) cannot attach hyperdisk-balanced volumes, so add-ons' volumes on the default StorageClass never attach; use pd-balanced, or a system pool machine type that attaches hyperdisk-balanced (e.g. c3-standard-4, which attaches both) (got 'hyperdisk-balanced')",
    ],
    'gke-b200-under-operator-pinned-535': [
        "stack 'prod-gke': gpufleet:gpuOperator.driver.version: the driver the GPU Operator installs is 535.261.03 (branch 535), but pool 'b200' has B200, which needs driver branch 570 or newer (got '535.261.03')",
    ],
    'gke-h200-under-operator-pinned-535': [
        "stack 'prod-gke': gpufleet:gpuOperator.driver.version: the driver the GPU Operator installs is 535.261.03 (branch 535), but pool 'h200' has H200, which needs driver branch 550 or newer (got '535.261.03')",
    ],
    'gke-k3s-nfs-storage-block': [
        "stack 'prod-gke': gpufleet:storage.nfs: not used on gke: gpufleet:storage configures k3s storage only; on gke use cluster.gke.storage (defaultDiskType, filestore, gcsFuse, managedLustre)",
    ],
    'gke-leftover-eks-block': [
        "stack 'prod-gke': gpufleet:cluster.eks: not used on gke: the eks block configures platform eks only; remove it (or set platform: eks)",
    ],
    'k3s-b200-under-operator-pinned-535': [
        "stack 'dev': gpufleet:gpuOperator.driver.version: the driver the GPU Operator installs is 535.261.03 (branch 535), but pool 'a100' has B200, which needs driver branch 570 or newer (got '535.261.03')",
    ],
    'k3s-h100-on-preinstalled-520': [
        "stack 'dev': gpufleet:gpuOperator.driver.version: the hosts' preinstalled driver is 520.61.05 (branch 520), but pool 'l4' has L4, which needs driver branch 525 or newer (got '520.61.05')",
        "stack 'dev': gpufleet:gpuOperator.driver.version: the hosts' preinstalled driver is 520.61.05 (branch 520), but pool 'a100' has H100-80GB, which needs driver branch 525 or newer (got '520.61.05')",
    ],
    'k3s-h200-under-operator-pinned-545': [
        "stack 'dev': gpufleet:gpuOperator.driver.version: the driver the GPU Operator installs is 545.29.06 (branch 545), but pool 'a100' has H200, which needs driver branch 550 or newer (got '545.29.06')",
    ],
    'k3s-rdma-range-inside-cluster-cidr': [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.ipRange: overlaps k3s's cluster (pod) CIDR (10.42.0.0/16); give the RDMA network a range of its own, e.g. 192.168.100.0/24 (got '10.42.100.0/24')",
    ],
    'k3s-rdma-range-inside-service-cidr': [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.ipRange: overlaps k3s's service CIDR (10.43.0.0/16); give the RDMA network a range of its own, e.g. 192.168.100.0/24 (got '10.43.0.0/24')",
    ],
    'k3s-rdma-range-covers-both': [
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.ipRange: overlaps k3s's cluster (pod) CIDR (10.42.0.0/16); give the RDMA network a range of its own, e.g. 192.168.100.0/24 (got '10.0.0.0/8')",
        "stack 'lab': gpufleet:nodePools[2].rdmaNetwork.ipRange: overlaps k3s's service CIDR (10.43.0.0/16); give the RDMA network a range of its own, e.g. 192.168.100.0/24 (got '10.0.0.0/8')",
    ],
    'k3s-label-value-with-space': [
        "stack 'dev': gpufleet:nodePools[0].labels.example.com/room: not a Kubernetes label value: a label value must be alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric (no spaces, ':' or '/') (got 'rack 4')",
    ],
    'k3s-label-name-too-long': [
        "stack 'dev': gpufleet:nodePools[0].labels: not a Kubernetes label key: the name part 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' is 64 characters; at most 63 (got 'example.com/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')",
    ],
    'k3s-label-prefix-with-underscore': [
        "stack 'dev': gpufleet:nodePools[0].labels: not a Kubernetes label key: the prefix 'gpu_lab.example.com' must be a lowercase DNS subdomain of at most 253 characters, e.g. example.com (got 'gpu_lab.example.com/owner')",
    ],
    'k3s-taint-key-two-slashes': [
        "stack 'dev': gpufleet:nodePools[0].taints[0].key: not a Kubernetes taint key: a key has at most one '/' (prefix/name) (got 'example.com/gpu/dedicated')",
    ],
    'k3s-taint-value-too-long': [
        "stack 'dev': gpufleet:nodePools[0].taints[0].value: not a Kubernetes taint value: 65 characters; a label value holds at most 63 (got 'team-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')",
    ],
    'k3s-team-namespace-default': [
        "stack 'teams': gpufleet:addons.kueue.teams[1].namespace: gpufleet creates the team's namespace 'default', but every cluster already has it; give the team a namespace of its own, e.g. team-ml (got 'default')",
    ],
    'k3s-team-namespace-kube-prefix': [
        "stack 'teams': gpufleet:addons.kueue.teams[0].name: gpufleet creates the team's namespace 'kube-ml', but the kube- prefix is reserved for Kubernetes; give the team a namespace of its own, e.g. team-ml (got 'kube-ml')",
    ],
    'k3s-priority-class-system-prefix': [
        "stack 'teams': gpufleet:addons.priorityClasses.classes[0].name: the 'system-' prefix is reserved for Kubernetes' own PriorityClasses; choose another name, e.g. platform-critical (got 'system-training')",
    ],
    'k3s-leftover-eks-block': [
        "stack 'dev': gpufleet:cluster.eks: not used on k3s: the eks block configures platform eks only; remove it (or set platform: eks)",
    ],
    'k3s-gpu-server-with-taint-servers': [
        "stack 'dev': gpufleet:cluster.k3s.taintServers: a server that is also a GPU host cannot be tainted CriticalAddonsOnly (GPU pods could not run there); set taintServers: false (got True)",
    ],
    'k3s-gpu-server-pool-taint-noschedule': [
        "stack 'dev': gpufleet:nodePools[0].taints[0].effect: the pool's hosts include a server, which must keep running system pods: a NoSchedule/NoExecute taint keeps them off (allowed here: PreferNoSchedule) (got 'NoSchedule')",
    ],
    'k3s-gpu-server-listed-with-other-address': [
        "stack 'dev': gpufleet:nodePools[0].hosts[0].name: duplicate host name (also gpufleet:cluster.k3s.servers[0]); a server that is also a GPU host must be listed identically (name, address, user, port) in both places (got 'cp-1')",
    ],
    'k3s-gpu-server-in-two-pools': [
        "stack 'dev': gpufleet:nodePools[1].hosts[0].name: this server is already a GPU host of gpufleet:nodePools[0]; a node belongs to one pool (got 'cp-1')",
    ],
}


def problems(base: str, change) -> list[str]:
    sf = stack_file(change(example_config(base)), stack=base)
    with pytest.raises(SpecError) as exc:
        load_spec(sf.stack, sf.config, sf.secret_keys)
    return [str(p) for p in exc.value.problems]


def test_corpus_covers_the_three_platforms():
    assert len(MISTAKES) >= 60 and len(VALID) >= 10
    assert len(CASES) == len(MISTAKES) and set(CASES) == set(EXPECTED)
    for platform in ("eks", "gke", "k3s"):
        assert sum(name.startswith(platform) for name in CASES) >= 15, platform


@pytest.mark.parametrize("name", list(CASES))
def test_mistake_is_refused_with_its_exact_message(name):
    base, change = CASES[name]
    assert problems(base, change) == EXPECTED[name]


@pytest.mark.parametrize("name", ["eks-log-retention-45-days", "gke-master-cidr-not-28", "k3s-b200-under-operator-pinned-535"])
def test_cli_exits_2_naming_the_problem(tmp_path, name):
    base, change = CASES[name]
    path = tmp_path / f"Pulumi.{base}.yaml"
    path.write_text(yaml.safe_dump({"config": change(example_config(base))}))
    run = subprocess.run([*GPUFLEET, "plan", base, "--config", str(path), "--format", "json"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == cli.EXIT_INVALID
    # --format json: the error document, no plan (gpufleet/app/json_errors.py)
    assert run.stdout.startswith('{\n  "error": {\n    "exitCode": 2,') and '"resources"' not in run.stdout
    assert "Traceback" not in run.stderr
    assert [f"  - {m}" for m in EXPECTED[name]] == run.stderr.splitlines()[1:]


@pytest.fixture(scope="module")
def valid_plans():
    return {name: plan_config(change(example_config(base)), stack=base) for name, base, change in VALID}


@pytest.mark.parametrize("name", [name for name, _, _ in VALID])
def test_unusual_valid_stack_plans_clean(valid_plans, name):
    p = valid_plans[name]
    assert [v for v in p.violations if v.level == "mandatory"] == []


def test_a_sentence_as_a_gke_exemption_reason_is_a_label_safe_label_and_the_full_plan_record(valid_plans):
    from gpufleet.app.plan.render import to_json

    p = valid_plans["gke-exemption-reason-is-a-sentence"]
    pool = one(p, "gcp:container/nodePool:NodePool", "prod-gke-pool-l4-infer-pool")
    assert pool.inputs["nodeConfig"]["labels"]["gpufleet.io/exempt-gpu-pool-scale-to-zero"] == (
        "always-on-keeps-p99-latency-low")
    row = next(r for r in to_json(p)["capacity"] if r["pool"] == "l4-infer")
    assert row["exemptions"] == {"gpu-pool-scale-to-zero": "always-on: keeps p99 latency low"}
    assert "gpu-pool-scale-to-zero" not in {v.policy for v in p.violations}


def test_always_on_gke_pool_is_exempt_through_a_node_label(valid_plans):
    p = valid_plans["gke-always-on-inference-pool-exempt"]
    pool = one(p, "gcp:container/nodePool:NodePool", "prod-gke-pool-l4-infer-pool")
    assert pool.inputs["autoscaling"]["totalMinNodeCount"] == 1
    assert pool.inputs["nodeConfig"]["labels"]["gpufleet.io/exempt-gpu-pool-scale-to-zero"] == (
        "always-on-inference_one-warm-L4-keeps-p99-under-300ms")
    assert "gpu-pool-scale-to-zero" not in {v.policy for v in p.violations}


def test_one_machine_k3s_server_is_the_gpu_node_and_keeps_system_pods(valid_plans):
    p = valid_plans["k3s-one-machine-cluster"]
    commands = {r.name: r for r in p.resources if r.type == "command:remote:Command"}
    assert "dev-pool-workstation-agent-cp-1" not in commands  # no second k3s on the server
    server = yaml.safe_load(commands["dev-k3s-server-cp-1"].revealed["stdin"])
    assert "gpufleet.io/pool=workstation" in server["node-label"] and "gpufleet.io/gpu=true" in server["node-label"]
    assert "node-taint" not in server  # no GPU taint: CoreDNS, metrics-server and local-path must still schedule here
    assert one(p, "gpufleet:k3s:K3sNodePool", "dev-pool-workstation").parent is not None


def test_gvnic_and_boot_disks_follow_the_machine_series(valid_plans):
    """Third-generation GPU series take gVNIC only (set on COS pools; GKE's option needs COS and GPU nodes); N4/C4-class
    series boot from Hyperdisk only (catalog/gcp_families.yaml)."""
    ubuntu = one(valid_plans["gke-operator-h100-driver-580"], "gcp:container/nodePool:NodePool", "prod-gke-pool-h100-pool")
    assert ubuntu.inputs["nodeConfig"].get("gvnic") is None  # gpuStack operator: Ubuntu nodes, left to GKE
    system = one(valid_plans["gke-hyperdisk-default-c3-system-a4-pool"], "gcp:container/nodePool:NodePool", "prod-gke-gke-system-pool")
    assert system.inputs["nodeConfig"].get("gvnic") is None and system.inputs["nodeConfig"]["diskType"] == "pd-balanced"
    b200 = one(valid_plans["gke-hyperdisk-default-c3-system-a4-pool"], "gcp:container/nodePool:NodePool", "prod-gke-pool-b200-pool")
    assert b200.inputs["nodeConfig"]["diskType"] == "hyperdisk-balanced" and b200.inputs["nodeConfig"]["gvnic"] == {"enabled": True}


def test_n4_system_pool_boots_from_hyperdisk_and_a3_without_gpudirect_gets_gvnic():
    config = example_config("prod-gke")
    config["gpufleet:cluster"]["gke"]["systemPool"] = {"machineType": "n4-standard-4"}
    config["gpufleet:cluster"]["gke"]["storage"] = {"defaultDiskType": "hyperdisk-balanced"}
    del config["gpufleet:nodePools"][0]["rdma"]
    p = plan_config(config, stack="prod-gke", policies=False)
    system = one(p, "gcp:container/nodePool:NodePool", "prod-gke-gke-system-pool")
    assert system.inputs["nodeConfig"]["diskType"] == "hyperdisk-balanced"
    a3 = one(p, "gcp:container/nodePool:NodePool", "prod-gke-pool-h100-train-pool")
    assert a3.inputs["nodeConfig"]["gvnic"] == {"enabled": True} and a3.inputs["nodeConfig"]["imageType"] == "COS_CONTAINERD"


def test_exempt_label_in_labels_points_to_exemptions():
    def change(config):
        config["gpufleet:nodePools"][1]["labels"] = {"gpufleet.io/exempt-gpu-pool-scale-to-zero": "always-on"}
        return config

    assert problems("prod-gke", change) == [
        "stack 'prod-gke': gpufleet:nodePools[1].labels: gpufleet.io/exempt-gpu-pool-scale-to-zero: exemptions are declared "
        "with the pool's `exemptions` key, e.g. exemptions: {gpu-pool-scale-to-zero: <reason>} (gpufleet then sets the label "
        "or tag itself)"
    ]


def test_quota_below_nominal_quota_is_a_warning():
    config = example_config("teams")
    config["gpufleet:addons"]["kueue"]["teams"][0]["gpuQuota"] = 4  # research: nominalQuota 8 on a100-train
    sf = stack_file(config, stack="teams")
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert [str(w) for w in addons_warnings("teams", spec)] == [
        "stack 'teams': gpufleet:addons.kueue.teams[0].gpuQuota: team 'research' may be admitted 8 nvidia.com/gpu by its "
        "queues' nominal quotas, but its namespace quota allows 4: Kueue would admit workloads whose pods the ResourceQuota "
        "then refuses; raise gpuQuota to at least 8 (or leave it unset to follow the queues) (got 4)"
    ]
    config["gpufleet:addons"]["kueue"]["teams"][0]["gpuQuota"] = 8
    sf = stack_file(config, stack="teams")
    assert addons_warnings("teams", load_spec(sf.stack, sf.config, sf.secret_keys)) == []


def _quota_warnings(stack: str, config: dict) -> list[str]:
    sf = stack_file(config, stack=stack)
    return [str(w) for w in addons_warnings(stack, load_spec(sf.stack, sf.config, sf.secret_keys))]


def test_quota_below_nominal_quota_counts_amd_partitions():
    """amd-lab's team 'research' queues on the CPX pool (64 amd.com/gpu per host) and the whole-GPU MI300X pool
    (nominalQuota 8): the ResourceQuota caps requests.amd.com/gpu at gpuQuota, so 8 is far too low."""
    config = example_config("amd-lab")
    config["gpufleet:addons"]["kueue"]["teams"][0]["gpuQuota"] = 8
    assert _quota_warnings("amd-lab", config) == [
        "stack 'amd-lab': gpufleet:addons.kueue.teams[0].gpuQuota: team 'research' may be admitted 72 amd.com/gpu by "
        "its queues' nominal quotas, but its namespace quota allows 8: Kueue would admit workloads whose pods the "
        "ResourceQuota then refuses; raise gpuQuota to at least 72 (or leave it unset to follow the queues) (got 8)"
    ]
    config["gpufleet:addons"]["kueue"]["teams"][0]["gpuQuota"] = 72
    assert _quota_warnings("amd-lab", config) == []


def test_quota_below_nominal_quota_counts_mig_slices_the_quota_caps():
    """The ResourceQuota caps each MIG slice resource at gpuQuota too (the plan's ResourceQuota shows it), so a
    team admitted 56 slices of the lab's MIG pool under gpuQuota 16 is warned, in slices."""
    config = example_config("lab")
    config["gpufleet:addons"] = {"kueue": {"enabled": True, "teams": [
        {"name": "research", "gpuQuota": 16, "queues": [{"pool": "h100-mig"}]}]}}
    quota = one(plan_config(config, stack="lab", policies=False), "kubernetes:core/v1:ResourceQuota")
    assert quota.inputs["spec"]["hard"]["requests.nvidia.com/mig-1g.10gb"] == "16"
    assert _quota_warnings("lab", config) == [
        "stack 'lab': gpufleet:addons.kueue.teams[0].gpuQuota: team 'research' may be admitted 56 "
        "nvidia.com/mig-1g.10gb by its queues' nominal quotas, but its namespace quota allows 16: Kueue would admit "
        "workloads whose pods the ResourceQuota then refuses; raise gpuQuota to at least 56 (or leave it unset to "
        "follow the queues) (got 16)"
    ]


def test_gke_gpu_pool_that_cannot_attach_the_default_disks_is_a_warning():
    config = example_config("prod-gke")
    config["gpufleet:nodePools"].append({"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2})
    sf = stack_file(config, stack="prod-gke")
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert [str(w) for w in addons_warnings("prod-gke", spec)] == [
        "stack 'prod-gke': gpufleet:nodePools[2].machineType: a4 nodes cannot attach pd-balanced volumes (they attach "
        "hyperdisk-balanced), the disk type of the default StorageClass (cluster.gke.storage.defaultDiskType): pods on this "
        "pool need a StorageClass of that type of their own (got 'a4-highgpu-8g')"
    ]


def test_eks_ami_below_a_gpus_driver_floor_is_refused(monkeypatch):
    """No catalog AMI is below a catalog GPU's floor today (al2023 580, bottlerocket 570, B200 570): an AMI on an
    older branch stands in for the day a newer GPU arrives."""
    from gpufleet.base.catalog import aws
    from gpufleet.base.platforms.eks import scheduling as eks_scheduling

    real = aws.ami

    def old_branch(name):
        facts = real(name)
        return facts.__class__(facts.name, 545, "545.29.06", facts.ships_toolkit) if name == "bottlerocket-nvidia" else facts

    monkeypatch.setattr(eks_scheduling.aws, "ami", old_branch)

    def change(config):
        config["gpufleet:nodePools"][0].update(instanceType="p5e.48xlarge", ami="bottlerocket-nvidia")
        config["gpufleet:workloads"] = {"cudaVersions": []}
        return config

    assert problems("prod-eks", change) == [
        "stack 'prod-eks': gpufleet:nodePools[0].ami: the bottlerocket-nvidia AMI ships driver branch 545, but H200 needs "
        "branch 550 or newer (allowed for this pool: al2023-nvidia) (got 'bottlerocket-nvidia')"
    ]


def _a4_and_a3_ultra(version: str, driver: str):
    def change(config):
        config["gpufleet:cluster"]["kubernetesVersion"] = version
        config["gpufleet:cluster"]["gke"]["storage"] = {"defaultDiskType": "hyperdisk-balanced"}
        config["gpufleet:cluster"]["gke"]["systemPool"] = {"machineType": "c3-standard-4", "minNodes": 1, "maxNodes": 3}
        config["gpufleet:nodePools"] = [
            {"name": "b200", "machineType": "a4-highgpu-8g", "maxNodes": 2, "gke": {"gpuDriverVersion": driver}},
            {"name": "h200", "machineType": "a3-ultragpu-8g", "maxNodes": 2, "gke": {"gpuDriverVersion": driver}},
        ]
        config["gpufleet:workloads"] = {"cudaVersions": []}
        return config
    return change


@pytest.mark.parametrize("driver", ["DEFAULT", "LATEST"])
@pytest.mark.parametrize("version", ["1.32", "1.33", "1.34", "1.35", "1.36"])
def test_gke_installs_a_driver_that_meets_b200_and_h200_floors_on_every_minor(version, driver):
    """GKE installs R570 for B200 (A4) and R550 for H200 (A3 Ultra) with DEFAULT on every minor gpufleet plans for
    (gcp_machines.yaml gke_driver_branches_per_gpu, from the AI Hypercomputer A4/A3 Ultra requirements), so the
    driver floor applied to GKE's own driver refuses neither."""
    sf = stack_file(_a4_and_a3_ultra(version, driver)(example_config("prod-gke")), stack="prod-gke")
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert [p for p in compat_checks.check(sf.stack, spec) if "driver" in str(p)] == []


def test_gke_driver_below_a_gpus_floor_is_refused(monkeypatch, tmp_path, capsys):
    """Without the per-GPU rows (the catalog before they were sourced, and what the older cluster-toolkit A4 README
    says of GKE 1.32: R570 only as LATEST) GKE 1.32's DEFAULT is branch 535: below B200's and H200's floors."""
    from gpufleet.base.catalog import gcp

    monkeypatch.setattr(gcp, "gke_gpu_driver_rows", lambda: {})
    assert problems("prod-gke", _a4_and_a3_ultra("1.32", "DEFAULT")) == [
        "stack 'prod-gke': gpufleet:nodePools[0].gke.gpuDriverVersion: GKE 1.32 installs driver branch 535 for DEFAULT on "
        "B200 nodes, but B200 needs branch 570 or newer (allowed for pool 'b200': LATEST, or cluster.gke.gpuStack: "
        "operator with a driver of branch 570 or newer) (got 'DEFAULT')",
        "stack 'prod-gke': gpufleet:nodePools[1].gke.gpuDriverVersion: GKE 1.32 installs driver branch 535 for DEFAULT on "
        "H200 nodes, but H200 needs branch 550 or newer (allowed for pool 'h200': LATEST, or cluster.gke.gpuStack: "
        "operator with a driver of branch 550 or newer) (got 'DEFAULT')",
    ]
    # the CLI (in process, so the catalog stays patched): exit 2, the problems on stderr, nothing on stdout
    path = tmp_path / "Pulumi.prod-gke.yaml"
    path.write_text(yaml.safe_dump({"config": _a4_and_a3_ultra("1.32", "DEFAULT")(example_config("prod-gke"))}))
    assert cli.main(["plan", "prod-gke", "--config", str(path), "--format", "json"]) == cli.EXIT_INVALID
    out, err = capsys.readouterr()
    # --format json: the error document, no plan (gpufleet/app/json_errors.py)
    assert out.startswith('{\n  "error": {\n    "exitCode": 2,') and '"resources"' not in out
    assert "pool 'b200': LATEST" in err and "Traceback" not in err
    # LATEST on 1.32 is branch 570 (gke_driver_branches): both pools pass
    sf = stack_file(_a4_and_a3_ultra("1.32", "LATEST")(example_config("prod-gke")), stack="prod-gke")
    spec = load_spec(sf.stack, sf.config, sf.secret_keys)
    assert [p for p in compat_checks.check(sf.stack, spec) if "driver" in str(p)] == []
