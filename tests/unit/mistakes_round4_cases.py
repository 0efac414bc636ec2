"""Issue 49, "Mistakes still missed": realistic one-line mistakes of each class the issue lists (id, example stack it
starts from, the change, the exact problems), each with its source beside the rule it trips (the rule's module), and
valid stacks at the edge of each new rule. tests/unit/test_mistakes_round4.py runs them.

NEWLY_REFUSED planned clean (exit 0) on main before issue 49's round 4; STILL_REFUSED were already refused on main
(written as stacks and planned first, as the issue asks) and stay as regression cases of their class."""

from __future__ import annotations

from tests.unit.mistakes_round3_cases import Change, at, both

P = "gpufleet:nodePools"
ADDONS = "gpufleet:addons"
AKS = "gpufleet:cluster.aks"
# k3s air-gap files without sha256 keys (the recorded ones apply) from a mirror the hosts reach.
AIRGAP = {"source": "https://mirror.example.com/k3s", "arch": "amd64"}


# /dev/shm for every model server here: enough for any tensor-parallel size, so a case meets only the check it is about
# (the model server's own shm check: gpufleet/base/spec/features/serving_server_checks.py).
SHM = "64Gi"


def model(**fields) -> Change:
    """inference-eks with one model server (Qwen3-8B on the l40s pool, one g6e.xlarge L40S per node, maxNodes 4),
    changed by `fields`."""
    def apply(config: dict) -> dict:
        m = {"name": "qwen", "pool": "l40s", "model": "Qwen/Qwen3-8B", "shm": SHM}
        m.update(fields)
        config["gpufleet:serving"]["models"] = [m]
        return config
    return apply


def serve_on(pool: str) -> Change:
    def apply(config: dict) -> dict:
        config["gpufleet:serving"] = {"enabled": True, "models": [{"name": "qwen", "pool": pool, "model": "Qwen/Qwen3-8B",
                                                                   "shm": SHM}]}
        return config
    return apply


def cache(**fields) -> Change:
    def apply(config: dict) -> dict:
        config["gpufleet:modelCaches"] = [{"name": "weights", "source": "hf://Qwen/Qwen3-8B", **fields}]
        return config
    return apply


def topology(pool: str, levels=None) -> Change:
    def apply(config: dict) -> dict:
        entry = {"name": pool, **({"levels": levels} if levels else {})}
        config.setdefault(ADDONS, {})["kueue"] = {"enabled": True, "teams": [{"name": "t", "queues": [{"pool": pool}]}],
                                                  "topology": {"pools": [entry]}}
        return config
    return apply


def airgapped_k3s(arch: str) -> Change:
    """nvl72-k3s (GB200 hosts) installed from air-gap files of `arch`, images from a mirror."""
    return both(at("gpufleet:cluster.k3s.airgap", {**AIRGAP, "arch": arch}),
                at("gpufleet:registry", {"mirror": "registry.example.com/gpufleet"}))


def two_racks_serving(nodes: int) -> Change:
    """nvl72-k3s grown to two NVL72 racks (36 GB200 hosts), serving one model whose replica is `nodes` wide and claims
    the research ComputeDomain (its IMEX channels span one rack: 18 nodes)."""
    return both(
        at("gpufleet:serving", {"enabled": True, "models": [{"name": "big", "namespace": "research", "pool": "gb200",
                                                             "model": "deepseek-ai/DeepSeek-R1", "gpusPerNode": 4,
                                                             "nodesPerReplica": nodes, "computeDomain": "train",
                                                             "shm": SHM}]}),
        lambda c: c[P][0]["hosts"].extend({"name": f"gb200-{k}", "address": f"198.51.100.{100 + k}"}
                                          for k in range(19, 37)))


NEWLY_REFUSED_CHANGES: list[tuple[str, str, Change]] = [
    # AKS limits Azure enforces (gpufleet/base/spec/platforms/aks.py, aks_checks.py).
    ("aks-spot-max-price-six-decimals", "aks-train", at(f"{P}.1.aks", {"spotMaxPrice": 0.123456})),
    ("aks-pool-of-1001-nodes", "aks-train", at(f"{P}.1.maxNodes", 1001)),
    ("aks-cluster-past-5000-nodes", "aks-train", both(at(f"{P}.0.maxNodes", 1000), at(f"{P}.1.maxNodes", 1000),
        lambda c: c[P].extend([{"name": f"a100spot{k}", "vmSize": "Standard_NC24ads_A100_v4", "maxNodes": 1000,
                                "capacity": "spot"} for k in (2, 3, 4)]))),
    ("aks-zones-in-westus", "aks-train", at(f"{AKS}.location", "westus")),
    ("aks-service-cidr-in-169-254", "aks-train", at(f"{AKS}.network", {"serviceCidr": "169.254.0.0/16",
                                                                       "dnsServiceIp": "169.254.0.10"})),
    ("aks-pod-cidr-over-172-31", "aks-train", at(f"{AKS}.network", {"podCidr": "172.16.0.0/12"})),
    ("aks-dns-service-ip-first-address", "aks-train", at(f"{AKS}.network", {"dnsServiceIp": "10.0.0.1"})),
    ("aks-system-pool-one-vcpu", "aks-train", at(f"{AKS}.systemPool.vmSize", "Standard_B1ms")),
    ("aks-cache-names-rwx-class-without-files", "aks-train", both(at(f"{AKS}.storage", {}),
                                                                  cache(storageClass="gpufleet-rwx"))),
    ("aks-cache-on-the-rwo-class", "aks-train", cache(storageClass="gpufleet-rwo")),
    # Serving shapes against their pool (gpufleet/base/spec/features/serving_shape_checks.py).
    ("serving-replica-wider-than-the-pool", "inference-eks", model(pool="h100", nodesPerReplica=3, gpusPerNode=8)),
    ("serving-more-gpus-per-pod-than-the-instance", "inference-eks", model(gpusPerNode=4)),
    ("serving-scales-past-the-pool", "inference-eks", model(scaling={"signal": "queue", "target": 5, "minReplicas": 1,
                                                                     "maxReplicas": 5})),
    ("serving-two-multinode-replicas-on-two-nodes", "inference-eks", model(
        pool="h100", nodesPerReplica=2, gpusPerNode=8, scaling={"signal": "kvCache", "target": 0.8, "minReplicas": 1,
                                                                "maxReplicas": 2})),
    ("serving-replica-wider-than-the-nvlink-domain", "nvl72-k3s", two_racks_serving(19)),
    ("serving-cuda-server-on-amd", "amd-lab", serve_on("mi300x-cpx")),
    ("serving-on-a-mig-pool", "teams", both(serve_on("a100-train"),
                                            at(f"{P}.0.sharing", {"mode": "mig", "profile": "1g.10gb"}))),
    ("serving-tensor-parallel-over-mig-devices", "teams", both(
        serve_on("a100-train"), at("gpufleet:serving.models.0.gpusPerNode", 2),
        at(f"{P}.0.sharing", {"mode": "mig", "profile": "3g.40gb", "strategy": "single"}))),
    # Paths that need egress on networks without it (egress_checks.py; eks_endpoints.py adds FSx's endpoint instead).
    ("serving-hugging-face-model-behind-vpc-endpoints", "airgap-eks", serve_on("l4-infer")),
    # DRA pools under Karpenter (gpufleet/base/platforms/eks/scheduling.py, catalog dra.yaml autoscalers).
    ("dra-pool-under-karpenter", "karpenter-eks", at(f"{P}.0.allocation", "dra")),
    # GB200/Grace facts (grace_checks.py, k3s_checks.py).
    ("gb200-eight-gpus-per-tray", "nvl72-k3s", at(f"{P}.0.gpusPerNode", 8)),
    ("gb200-precompiled-driver", "nvl72-k3s", at("gpufleet:gpuOperator", {"driver": {"source": "operator",
                                                                                    "precompiled": True}})),
    ("gb200-amd64-airgap-files", "nvl72-k3s", airgapped_k3s("amd64")),
    # The DRA driver root against who installs the driver (dra_checks.py).
    ("dra-root-slash-under-operator-driver", "nvl72-k3s", both(at("gpufleet:gpuOperator", {"driver": {"source": "operator"}}),
                                                               at("gpufleet:dra.driverRoot", "/"))),
    ("dra-root-operator-path-on-preinstalled", "nvl72-k3s", at("gpufleet:dra.driverRoot", "/run/nvidia/driver")),
    # Existing-cluster pools that overlap (gpufleet/base/spec/platforms/existing.py).
    ("existing-node-in-two-pools", "existing-coreweave", at(f"{P}.1.existing.nodes", ["g8h100-node-1", "g8l40s-node-2"])),
    ("existing-same-selector-twice", "existing-coreweave", at(f"{P}.1.existing.nodeSelector",
                                                              {"node.kubernetes.io/instance-type": "gd-8xh100ib-i128"})),
    ("existing-selector-inside-another", "existing-coreweave", at(f"{P}.1.existing.nodeSelector", {
        "node.kubernetes.io/instance-type": "gd-8xh100ib-i128", "example.com/role": "infer"})),
    # EKS API inputs (gpufleet/base/spec/platforms/eks.py).
    ("eks-public-cidr-without-prefix", "prod-eks", at("gpufleet:cluster.eks.endpoint.publicAccessCidrs", ["203.0.113.5"])),
    ("eks-vpc-cidr-without-prefix", "prod-eks", at("gpufleet:cluster.eks.network.vpcCidr", "10.0.0.0")),
    ("eks-wildcard-access-entry", "airgap-eks", at("gpufleet:cluster.eks.accessEntries.1.principalArn",
                                                   "arn:aws:iam::123456789012:role/ml-*")),
]

STILL_REFUSED_CHANGES: list[tuple[str, str, Change]] = [
    ("aks-dns-service-ip-outside-services", "aks-train", at(f"{AKS}.network", {"dnsServiceIp": "10.1.0.10"})),
    ("aks-system-pool-of-zero", "aks-train", at(f"{AKS}.systemPool", {"minNodes": 0, "maxNodes": 3})),
    ("aks-cache-without-rwx-class", "aks-train", both(at(f"{AKS}.storage", {}), cache())),
    ("hugging-face-cache-behind-vpc-endpoints", "airgap-eks", cache(storageClass="gp3")),
    ("topology-rack-on-one-host-only", "teams", lambda c: c[P][0]["hosts"][1].pop("rack") and c),
    ("topology-level-nothing-writes-gke", "prod-gke", topology("l4-infer", ["cloud.google.com/gce-topology-block",
                                                                            "kubernetes.io/hostname"])),
    ("topology-eks-layer-4-on-p5", "inference-eks", topology("h100", ["topology.k8s.aws/network-node-layer-4",
                                                                      "kubernetes.io/hostname"])),
    ("topology-hostname-not-last", "teams", at(f"{ADDONS}.kueue.topology.pools", [
        {"name": "a100-train", "levels": ["kubernetes.io/hostname", "gpufleet.io/topology-rack"]}])),
]

VALID: list[tuple[str, str, Change]] = [
    ("aks-spot-max-price-five-decimals", "aks-train", at(f"{P}.1.aks", {"spotMaxPrice": 0.98765})),
    ("aks-pool-of-1000-nodes", "aks-train", at(f"{P}.1.maxNodes", 1000)),
    ("aks-westus-without-zones", "aks-train", both(at(f"{AKS}.location", "westus"), at(f"{AKS}.zones", []),
                                                   at(f"{P}.0.aks", {}))),
    ("aks-dns-service-ip-second-address", "aks-train", at(f"{AKS}.network", {"dnsServiceIp": "10.0.0.2"})),
    ("aks-system-pool-two-vcpus", "aks-train", at(f"{AKS}.systemPool.vmSize", "Standard_D2ds_v5")),
    ("aks-cache-on-files-by-default", "aks-train", cache()),
    ("serving-replica-as-wide-as-the-pool", "inference-eks", model(pool="h100", nodesPerReplica=2, gpusPerNode=8)),
    ("serving-scales-to-the-pool-exactly", "inference-eks", model(scaling={"signal": "queue", "target": 5,
                                                                           "minReplicas": 1, "maxReplicas": 4})),
    ("serving-one-mig-device-per-pod", "teams", both(serve_on("a100-train"),
                                                     at(f"{P}.0.sharing", {"mode": "mig", "profile": "3g.40gb",
                                                                           "strategy": "single"}))),
    # gpufleet records no trusted sha256 of the v1.36.2+k3s1 arm64 binary and images (versions.K3S_RELEASE_SHA256), so
    # the stack gives them (any value: nothing recorded to disagree with; install.sh's is recorded).
    ("gb200-arm64-airgap-files", "nvl72-k3s", both(airgapped_k3s("arm64"), at("gpufleet:cluster.k3s.airgap.sha256", {
        "k3s": "1" * 64, "images": "2" * 64}))),
    ("serving-replica-as-wide-as-the-nvlink-domain", "nvl72-k3s", two_racks_serving(18)),
    ("dra-root-operator-path-under-operator-driver", "nvl72-k3s", both(
        at("gpufleet:gpuOperator", {"driver": {"source": "operator"}}), at("gpufleet:dra.driverRoot", "/run/nvidia/driver/"))),
    ("existing-disjoint-selectors-on-one-key", "existing-coreweave", at(f"{P}.1.existing.nodeSelector", {
        "node.kubernetes.io/instance-type": "gd-8xl40s-i128", "example.com/role": "infer"})),
    ("eks-public-cidr-of-one-address", "prod-eks", at("gpufleet:cluster.eks.endpoint.publicAccessCidrs", ["203.0.113.5/32"])),
    ("eks-access-entry-with-a-path", "airgap-eks", at("gpufleet:cluster.eks.accessEntries.1.principalArn",
                                                      "arn:aws:iam::123456789012:role/teams/ml-engineers")),
    ("fsx-behind-vpc-endpoints", "airgap-eks", at("gpufleet:cluster.eks.storage", {"fsxLustre": {}})),
]


# The exact problems each mistake is refused with (the CLI prints them one per line, exit 2).
EXPECTED: dict[str, list[str]] = {
    'aks-spot-max-price-six-decimals': [
        "stack 'aks-train': gpufleet:nodePools[1].aks.spotMaxPrice: AKS takes at most five decimal places "
        '(got 0.123456); e.g. 0.12346',
    ],
    'aks-pool-of-1001-nodes': [
        "stack 'aks-train': gpufleet:nodePools[1].maxNodes: an AKS node pool holds at most 1000 nodes; split "
        'the pool (got 1001)',
    ],
    'aks-cluster-past-5000-nodes': [
        "stack 'aks-train': gpufleet:nodePools: the pools' maxNodes (system pool included) add up to 5003; an"
        ' AKS cluster holds at most 5000 nodes across all node pools (got 5003)',
    ],
    'aks-zones-in-westus': [
        "stack 'aks-train': gpufleet:cluster.aks.zones: Azure region westus has no availability zones (Azure "
        "regions list): leave zones empty, or choose a region with zones (got ['1', '2', '3'])",
        "stack 'aks-train': gpufleet:nodePools[0].aks.zones: Azure region westus has no availability zones "
        "(Azure regions list): leave zones empty, or choose a region with zones (got ['1'])",
    ],
    'aks-service-cidr-in-169-254': [
        "stack 'aks-train': gpufleet:cluster.aks.network.serviceCidr: overlaps 169.254.0.0/16, which AKS "
        'reserves (it refuses 169.254.0.0/16, 172.30.0.0/16, 172.31.0.0/16, 192.0.2.0/24 for service, pod and'
        " virtual network ranges); choose another range (got '169.254.0.0/16')",
    ],
    'aks-pod-cidr-over-172-31': [
        "stack 'aks-train': gpufleet:cluster.aks.network.podCidr: overlaps 172.30.0.0/16, which AKS reserves "
        '(it refuses 169.254.0.0/16, 172.30.0.0/16, 172.31.0.0/16, 192.0.2.0/24 for service, pod and virtual '
        "network ranges); choose another range (got '172.16.0.0/12')",
        "stack 'aks-train': gpufleet:cluster.aks.network.podCidr: overlaps 172.31.0.0/16, which AKS reserves "
        '(it refuses 169.254.0.0/16, 172.30.0.0/16, 172.31.0.0/16, 192.0.2.0/24 for service, pod and virtual '
        "network ranges); choose another range (got '172.16.0.0/12')",
    ],
    'aks-dns-service-ip-first-address': [
        "stack 'aks-train': gpufleet:cluster.aks.network.dnsServiceIp: the first address of serviceCidr "
        '10.0.0.0/16 is not free for the cluster DNS (the first goes to the kubernetes Service); use another,'
        " e.g. 10.0.0.10 (got '10.0.0.1')",
    ],
    'aks-system-pool-one-vcpu': [
        "stack 'aks-train': gpufleet:cluster.aks.systemPool.vmSize: AKS system node pools need a VM size with"
        ' at least 2 vCPUs and 4 GB of memory; this one has 1 vCPU (e.g. Standard_D4ds_v5) (got '
        "'Standard_B1ms')",
    ],
    'aks-cache-names-rwx-class-without-files': [
        "stack 'aks-train': gpufleet:modelCaches[0].storageClass: gpufleet creates gpufleet-rwx only with "
        'cluster.aks.storage.files: true, so the claim would never bind; set it, or name another StorageClass'
        " (got 'gpufleet-rwx')",
    ],
    'aks-cache-on-the-rwo-class': [
        "stack 'aks-train': gpufleet:modelCaches[0].storageClass: gpufleet-rwo is Azure Disk, ReadWriteOnce: "
        'a model cache is mounted by many pods; use gpufleet-rwx (cluster.aks.storage.files: true) (got '
        "'gpufleet-rwo')",
    ],
    'serving-replica-wider-than-the-pool': [
        "stack 'inference-eks': gpufleet:serving.models[0].nodesPerReplica: a replica is wider than pool "
        "'h100' (at most 2 node(s)): its pods never all schedule; at most 2 (got 3)",
    ],
    'serving-more-gpus-per-pod-than-the-instance': [
        "stack 'inference-eks': gpufleet:serving.models[0].gpusPerNode: more GPUs per pod than a node of pool"
        " 'l40s' offers (1 nvidia.com/gpu per node): the pods never schedule; at most 1 (got 4)",
    ],
    'serving-scales-past-the-pool': [
        "stack 'inference-eks': gpufleet:serving.models[0].scaling.maxReplicas: 5 replica(s) of 1 pod(s) with"
        " 1 GPU(s) each need 5 pods; pool 'l40s' holds at most 4 (4 node(s) x 1): the rest stay Pending; at "
        "most 4 replica(s), or raise the pool's maxNodes (got 5)",
    ],
    'serving-two-multinode-replicas-on-two-nodes': [
        "stack 'inference-eks': gpufleet:serving.models[0].scaling.maxReplicas: 2 replica(s) of 2 pod(s) with"
        " 8 GPU(s) each need 4 pods; pool 'h100' holds at most 2 (2 node(s) x 1): the rest stay Pending; at "
        "most 1 replica(s), or raise the pool's maxNodes (got 2)",
    ],
    'serving-replica-wider-than-the-nvlink-domain': [
        "stack 'nvl72-k3s': gpufleet:serving.models[0].nodesPerReplica: a replica claims ComputeDomain train,"
        ' whose IMEX channels span one NVLink domain of GB200 (at most 18 nodes); at most 18 (got 19)',
    ],
    'serving-cuda-server-on-amd': [
        "stack 'amd-lab': gpufleet:serving.models[0].pool: pool 'mi300x-cpx' has AMD MI300X GPUs: the model "
        "server is vLLM's CUDA image and asks for nvidia.com/gpu, which AMD nodes do not advertise (they "
        "offer amd.com/gpu); serve it from an NVIDIA pool (got 'mi300x-cpx')",
    ],
    'serving-on-a-mig-pool': [
        "stack 'teams': gpufleet:serving.models[0].pool: pool 'a100-train' is a MIG pool with strategy mixed:"
        " its nodes advertise nvidia.com/mig-<profile>, no whole nvidia.com/gpu, so the model server's pods "
        "never schedule; serve from a pool without MIG (got 'a100-train')",
    ],
    'serving-tensor-parallel-over-mig-devices': [
        "stack 'teams': gpufleet:serving.models[0].gpusPerNode: pool 'a100-train' advertises MIG devices as "
        'nvidia.com/gpu (strategy single), and a CUDA process enumerates only one MIG instance (NVIDIA MIG '
        'User Guide, CUDA Device Enumeration): tensor parallelism over several MIG devices cannot start; use '
        '1, or a pool without MIG (got 2)',
    ],
    'serving-hugging-face-model-behind-vpc-endpoints': [
        "stack 'airgap-eks': gpufleet:serving.models[0].model: nodes without a NAT "
        "(cluster.eks.network.egress: endpoints) reach only their VPC's endpoints (S3 in the stack's region, "
        'no internet), and vLLM downloads this model from the Hugging Face Hub (huggingface.co) when the '
        'server starts: give the nodes a path to the internet, or serve outside this network (got '
        "'Qwen/Qwen3-8B')",
    ],
    'dra-pool-under-karpenter': [
        "stack 'karpenter-eks': gpufleet:nodePools[0].allocation: karpenter 1.14.1 launches no node for a pod"
        ' whose GPUs come from a ResourceClaim (the EKS user guide: Karpenter does not support DRA; sources '
        'in gpufleet/base/catalog/dra.yaml), so this pool would never get a node: use '
        'cluster.eks.autoscaler.kind: cluster-autoscaler (managed node groups) for DRA pools, or allocation: '
        "device-plugin (got 'dra')",
    ],
    'gb200-eight-gpus-per-tray': [
        "stack 'nvl72-k3s': gpufleet:nodePools[0].gpusPerNode: a GB200 node is one compute tray with 4 GPUs "
        '(two Grace superchips; gpufleet/base/catalog/gpus.yaml grace_trays): use 4 (got 8)',
    ],
    'gb200-precompiled-driver': [
        "stack 'nvl72-k3s': gpufleet:gpuOperator.driver.precompiled: pools gb200 run on Arm (Grace) and "
        'NVIDIA builds precompiled driver containers for x86_64 only (GPU Operator, Precompiled Driver '
        'Containers, Limitations): their nodes would get no driver; set precompiled: false (the driver is '
        'compiled on the node) (got True)',
    ],
    'gb200-amd64-airgap-files': [
        "stack 'nvl72-k3s': gpufleet:cluster.k3s.airgap.arch: pool 'gb200' (GB200) runs on arm64 hosts "
        '(Grace), and cluster.k3s.airgap gives amd64 files: its hosts cannot run that k3s binary; set arch: '
        "arm64 (one architecture per cluster: its servers and agents too) (got 'amd64')",
    ],
    'dra-root-slash-under-operator-driver': [
        "stack 'nvl72-k3s': gpufleet:dra.driverRoot: the GPU Operator installs the driver "
        '(gpuOperator.driver.source: operator), whose container puts it under /run/nvidia/driver on the host '
        "(the DRA driver chart's nvidiaDriverRoot): use /run/nvidia/driver, or leave driverRoot out (got '/')",
    ],
    'dra-root-operator-path-on-preinstalled': [
        "stack 'nvl72-k3s': gpufleet:dra.driverRoot: the driver is preinstalled on the hosts, and "
        "/run/nvidia/driver exists only where the GPU Operator's driver container runs: use the hosts' driver"
        " root (/ for a driver installed on the host), or leave driverRoot out (got '/run/nvidia/driver')",
    ],
    'existing-node-in-two-pools': [
        "stack 'existing-coreweave': gpufleet:nodePools[1].existing.nodes: also listed by pool 'h100-train' "
        "(nodePools[0]): a node belongs to one pool (got 'g8h100-node-1')",
    ],
    'existing-same-selector-twice': [
        "stack 'existing-coreweave': gpufleet:nodePools[1].existing.nodeSelector: every node it selects is "
        "also selected by pool 'h100-train' (nodePools[0], nodeSelector {'node.kubernetes.io/instance-type': "
        "'gd-8xh100ib-i128'}) (got {'node.kubernetes.io/instance-type': 'gd-8xh100ib-i128'})",
    ],
    'existing-selector-inside-another': [
        "stack 'existing-coreweave': gpufleet:nodePools[1].existing.nodeSelector: every node it selects is "
        "also selected by pool 'h100-train' (nodePools[0], nodeSelector {'node.kubernetes.io/instance-type': "
        "'gd-8xh100ib-i128'}) (got {'node.kubernetes.io/instance-type': 'gd-8xh100ib-i128', "
        "'example.com/role': 'infer'})",
    ],
    'eks-public-cidr-without-prefix': [
        "stack 'prod-eks': gpufleet:cluster.eks.endpoint.publicAccessCidrs: '203.0.113.5' has no prefix "
        'length: write the CIDR block, e.g. 203.0.113.5/32 for one address or 10.0.0.0/16 for a network',
    ],
    'eks-vpc-cidr-without-prefix': [
        "stack 'prod-eks': gpufleet:cluster.eks.network.vpcCidr: '10.0.0.0' has no prefix length: write the "
        'CIDR block, e.g. 10.0.0.0/32 for one address or 10.0.0.0/16 for a network',
    ],
    'eks-wildcard-access-entry': [
        "stack 'airgap-eks': gpufleet:cluster.eks.accessEntries[1].principalArn: 'ml-*' is not an IAM role or"
        ' user name (letters, digits and +=,.@_- only, 1-64 characters; IAM API Reference, CreateRole '
        'RoleName): an access entry names one principal, no wildcards; list each role',
    ],
    'aks-dns-service-ip-outside-services': [
        "stack 'aks-train': gpufleet:cluster.aks.network: dnsServiceIp 10.1.0.10 must lie inside serviceCidr "
        '10.0.0.0/16',
    ],
    'aks-system-pool-of-zero': [
        "stack 'aks-train': gpufleet:cluster.aks.systemPool.minNodes: Input should be greater than or equal "
        'to 1 (got 0)',
    ],
    'aks-cache-without-rwx-class': [
        "stack 'aks-train': gpufleet:modelCaches[0].storageClass: a model cache needs ReadWriteMany storage "
        'and this stack configures none: set cluster.aks.storage.files: true (gpufleet-rwx, Azure Files NFS),'
        ' or name a StorageClass',
    ],
    'hugging-face-cache-behind-vpc-endpoints': [
        "stack 'airgap-eks': gpufleet:modelCaches[0].source: nodes without a NAT (cluster.eks.network.egress:"
        " endpoints) reach only their VPC's endpoints (S3 in the stack's region, no internet), and the "
        "cache's prefetch Job downloads from this source and installs huggingface_hub from PyPI: copy the "
        "model onto the cache's storage yourself and leave modelCaches out, or use a s3:// source (got "
        "'hf://Qwen/Qwen3-8B')",
    ],
    'topology-rack-on-one-host-only': [
        "stack 'teams': gpufleet:addons.kueue.topology.pools[0].name: hosts gpu-a100-2 of pool a100-train "
        'declare no rack, so their nodes carry no topology label: set nodePools[].hosts[].rack (and block, if'
        " racks sit behind different spines) on every host (got 'a100-train')",
        "stack 'teams': gpufleet:addons.kueue.teams[1].queues[0].topology.gpusPerJob: a job of 16 GPUs never "
        'fits one gpufleet.io/topology-rack domain: the largest holds 8 GPUs (1 nodes); grow the pool or '
        'split the job, or make it preferred (got 16)',
    ],
    'topology-level-nothing-writes-gke': [
        "stack 'prod-gke': gpufleet:addons.kueue.topology.pools[0].levels[0]: no node label of this pool "
        'provides this level (labels its nodes carry: gpufleet.io/pool, kubernetes.io/hostname, '
        'topology.kubernetes.io/region, topology.kubernetes.io/zone); add it to nodePools[].labels or name '
        "another (got 'cloud.google.com/gce-topology-block')",
    ],
    'topology-eks-layer-4-on-p5': [
        "stack 'inference-eks': gpufleet:addons.kueue.topology.pools[0].levels[0]: no node label of this pool"
        ' provides this level (labels its nodes carry: gpufleet.io/pool, kubernetes.io/hostname, '
        'topology.k8s.aws/network-node-layer-1, topology.k8s.aws/network-node-layer-2, '
        'topology.k8s.aws/network-node-layer-3, topology.kubernetes.io/region, topology.kubernetes.io/zone); '
        "add it to nodePools[].labels or name another (got 'topology.k8s.aws/network-node-layer-4')",
    ],
    'topology-hostname-not-last': [
        "stack 'teams': gpufleet:addons.kueue.topology.pools[0].levels: kubernetes.io/hostname may only be "
        "the last level (Kueue's Topology CRD) (got 'kubernetes.io/hostname')",
    ],
}

NEWLY_REFUSED = [(name, base, change, EXPECTED[name]) for name, base, change in NEWLY_REFUSED_CHANGES]
STILL_REFUSED = [(name, base, change, EXPECTED[name]) for name, base, change in STILL_REFUSED_CHANGES]
CASES = NEWLY_REFUSED + STILL_REFUSED
