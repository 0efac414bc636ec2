"""NetworkOperator: NVIDIA Network Operator (Helm) with a NicClusterPolicy, an NV-IPAM pool and a secondary
network per RDMA pool, for GPUDirect RDMA between the hosts of k3s pools.

Per pool `rdmaNetwork.network`:
- macvlan: the RDMA shared device plugin advertises `rdma/<resource>` (NICs picked by vendor/device/interface),
  and a MacvlanNetwork on `interfaces[0]` gives pods a second interface on the RDMA fabric;
- host-device: the SR-IOV device plugin advertises whole NICs as `nvidia.com/<resource>`, and a
  HostDeviceNetwork moves one into the pod;
- sriov: the SR-IOV Network Operator (chart subchart) splits the NICs into VFs per a SriovNetworkNodePolicy
  and a SriovNetwork attaches one VF to the pod (components/gpu_stack/sriov_network.py).
Addresses come from NV-IPAM (an IPPool per pool): the pinned operator no longer deploys whereabouts
(deprecated in Network Operator 25.4, gone from the NicClusterPolicy CRD by 26.4).
The operator's daemons run only on nodes labelled `gpufleet.io/rdma=true` (RDMA pools' nodes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from gpufleet.components.gpu_stack import sriov_network
from gpufleet.components.cluster_access import ClusterAccess
from gpufleet.components.gpu_stack.operator import tolerations
from gpufleet.components.helm_chart import namespaced_release
from gpufleet.components.image_digests import pinned_by_facts
from gpufleet.components.image_mirror import MIRROR_FACT
from gpufleet.base import labels, versions
from gpufleet.base.catalog import images
from gpufleet.base.spec import NodePoolSpec

NAMESPACE = "nvidia-network-operator"
# The operator reconciles only the NicClusterPolicy with this name.
NIC_CLUSTER_POLICY = "nic-cluster-policy"
API_VERSION = "mellanox.com/v1alpha1"
IPAM_API_VERSION = "nv-ipam.nvidia.com/v1alpha1"
RDMA_RESOURCE_PREFIX = "rdma"  # rdma shared device plugin default prefix
HOSTDEV_RESOURCE_PREFIX = "nvidia.com"
# `pulumi up` waits until the operator reports the NicClusterPolicy ready (status.state, an enum of ready |
# notReady | ignore | error in the pinned CRD): by then it has applied every state, the nv-ipam CRDs included.
# The provider honours `pulumi.com/waitFor` since pulumi-kubernetes 4.18.0 (its CHANGELOG; 4.18.4 fixed
# JSONPath waits on non-primitive fields, pulumi/pulumi-kubernetes#3345).
WAIT_FOR_READY = "jsonpath={.status.state}=ready"
POLICY_READY_TIMEOUT = "20m"  # pulls of the Multus, CNI, IPAM and device-plugin images on every RDMA host


@dataclass(frozen=True)
class NetworkOperatorArgs:
    pools: list[NodePoolSpec]
    """The RDMA pools (`rdma: true`); each gets a device-plugin resource, an IP pool and a network."""
    gpu_node_taints: list[dict] = field(default_factory=list)
    """Taints of GPU nodes: the operator's daemonsets tolerate each (they run on the GPU hosts)."""
    namespace: str = NAMESPACE
    """Namespace of the operator, its daemons and the IP pools."""
    infiniband: bool = False
    """The pools' NICs are InfiniBand ports of cloud VMs (AKS ND series): the operator's DOCA driver container loads
    the host driver, the RDMA shared device plugin advertises each pool's InfiniBand ports (`linkTypes: infiniband`,
    as Azure/aks-rdma-infiniband configs/nicclusterpolicy does) and pods use them through IB verbs, so no secondary
    network, Multus or IPAM is made. Default: off (k3s hosts: the host's driver, a secondary network per pool)."""


def resource_name(pool: NodePoolSpec) -> str:
    """Device-plugin resource name of a pool (no dashes: the plugins reject special characters)."""
    if pool.rdma_network.network == "sriov":
        return sriov_network.resource_name(pool)
    kind = "hostdev" if pool.rdma_network.network == "host-device" else "rdma"
    return f"{kind}_{pool.name.replace('-', '_')}"


def pod_resource(pool: NodePoolSpec) -> str:
    """The extended resource a pod requests to get the pool's RDMA device."""
    prefix = {"host-device": HOSTDEV_RESOURCE_PREFIX, "sriov": sriov_network.RESOURCE_PREFIX}.get(
        pool.rdma_network.network, RDMA_RESOURCE_PREFIX
    )
    return f"{prefix}/{resource_name(pool)}"


def network_name(pool: NodePoolSpec) -> str:
    """Name of the pool's network (and of its NetworkAttachmentDefinition pods reference)."""
    return f"rdma-{pool.name}"


def chart_values(pools: list[NodePoolSpec] = (), facts: Optional[dict] = None) -> dict:
    """network-operator chart values; every key path exists in the chart's values.yaml."""
    values = {
        # The GPU Operator already runs Node Feature Discovery; a second NFD fights over the same labels.
        # gpufleet places the daemons by its own RDMA label instead of NFD's PCI labels.
        "nfd": {"enabled": False, "deployNodeFeatureRules": False},
        "sriovNetworkOperator": {"enabled": False},
    }
    facts = facts or {}
    if "cni_bin_dir" in facts:
        # k3s keeps CNI binaries and configs in its own directories, not /opt/cni/bin and /etc/cni/net.d:
        # Multus and the CNI plugins installed elsewhere are never called by k3s's containerd.
        values["operator"] = {"cniBinDirectory": facts["cni_bin_dir"], "cniNetworkDirectory": facts["cni_conf_dir"]}
    if any(p.rdma_network.network == "sriov" for p in pools):
        values.update(sriov_network.chart_values())
    return values


def _component(image: str, mirror: Optional[str] = None) -> dict:
    """One NicClusterPolicy component image; the operator pulls `<repository>/<image>:<version>`, from the stack's
    registry mirror when it has one (gpufleet:registry.mirror)."""
    repository = versions.NETWORK_OPERATOR_IMAGE_REPOSITORY
    return {
        "image": image,
        "repository": images.mirrored(repository, mirror) if mirror else repository,
        "version": versions.network_operator_component_tag(),
    }


def rdma_shared_config(pools: list[NodePoolSpec], infiniband: bool = False) -> dict:
    """k8s-rdma-shared-dev-plugin config: one resource per macvlan pool, NICs picked by selectors (InfiniBand pools:
    the pool's ConnectX ports by vendor and link type)."""
    config_list = []
    for pool in pools:
        net = pool.rdma_network
        if infiniband:
            selectors = {"vendors": list(net.vendors), "linkTypes": ["infiniband"]}
            config_list.append({"resourceName": resource_name(pool), "rdmaHcaMax": net.rdma_hca_max, "selectors": selectors})
            continue
        if net.network != "macvlan":
            continue
        selectors: dict = {"vendors": list(net.vendors)}
        if net.device_ids:
            selectors["deviceIDs"] = list(net.device_ids)
        if net.interfaces:
            selectors["ifNames"] = list(net.interfaces)
        config_list.append({"resourceName": resource_name(pool), "rdmaHcaMax": net.rdma_hca_max, "selectors": selectors})
    return {"configList": config_list}


def sriov_config(pools: list[NodePoolSpec]) -> dict:
    """sriov-network-device-plugin config: whole RDMA NICs per host-device pool."""
    resources = []
    for pool in pools:
        net = pool.rdma_network
        if net.network != "host-device":
            continue
        selectors: dict = {"vendors": list(net.vendors), "isRdma": True}
        if net.device_ids:
            selectors["devices"] = list(net.device_ids)
        if net.interfaces:
            selectors["pfNames"] = list(net.interfaces)
        resources.append({"resourcePrefix": HOSTDEV_RESOURCE_PREFIX, "resourceName": resource_name(pool), "selectors": selectors})
    return {"resourceList": resources}


def nic_cluster_policy(args: NetworkOperatorArgs, mirror: Optional[str] = None, facts: Optional[dict] = None) -> dict:
    """The NicClusterPolicy: RDMA device plugins, Multus + CNI plugins and NV-IPAM on RDMA nodes only, their images
    from `mirror` when the stack has one, and pinned by digest where the cluster's facts say so
    (gpufleet:images.pinDigests: `<tag>@sha256:<digest>` in each component's `version`; the CRD gives `version` no
    pattern, and the operator joins `<repository>/<image>:<version>` as the chart does for its init container)."""
    spec: dict = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{
                    "matchExpressions": [{"key": labels.RDMA_NODE_LABEL, "operator": "In", "values": ["true"]}],
                }],
            },
        },
        "tolerations": tolerations(args.gpu_node_taints),
    }
    if args.infiniband:
        repository = versions.NETWORK_OPERATOR_IMAGE_REPOSITORY
        spec["ofedDriver"] = {"image": "doca-driver", "version": versions.NETWORK_OPERATOR_DOCA_DRIVER,
                              "repository": images.mirrored(repository, mirror) if mirror else repository}
    else:
        spec["secondaryNetwork"] = {"multus": _component("multus-cni", mirror), "cniPlugins": _component("plugins", mirror)}
        spec["nvIpam"] = {**_component("nvidia-k8s-ipam", mirror), "enableWebhook": False}
    shared = rdma_shared_config(args.pools, args.infiniband)
    if shared["configList"]:
        spec["rdmaSharedDevicePlugin"] = {**_component("k8s-rdma-shared-dev-plugin", mirror), "config": json.dumps(shared, indent=2)}
    sriov = sriov_config(args.pools)
    if sriov["resourceList"]:
        spec["sriovDevicePlugin"] = {**_component("sriov-network-device-plugin", mirror), "config": json.dumps(sriov, indent=2)}
    if facts:
        # Only each pinned block's `version` is taken: its repository stays the one above (the mirror's, if any).
        _take_versions(spec, pinned_by_facts({}, versions.NETWORK_OPERATOR.name, versions.NETWORK_OPERATOR.version,
                                             facts, object_kind="NicClusterPolicy"))
    metadata = {"name": NIC_CLUSTER_POLICY, "annotations": {labels.PULUMI_WAIT_FOR_ANNOTATION: WAIT_FOR_READY}}
    return {"apiVersion": API_VERSION, "kind": "NicClusterPolicy", "metadata": metadata, "spec": spec}


def _take_versions(target: dict, pinned: dict) -> None:
    """Copy the `version` of every image block in `pinned` into the block at the same path of `target`."""
    for key, node in pinned.items():
        if not isinstance(node, dict) or not isinstance(target.get(key), dict):
            continue
        if "version" in node and "image" in node:
            target[key]["version"] = node["version"]
        else:
            _take_versions(target[key], node)


def ip_pool(pool: NodePoolSpec, namespace: str = NAMESPACE) -> dict:
    """NV-IPAM IPPool for a pool's network: `ipRange`, split in per-node blocks, on the pool's nodes only."""
    net = pool.rdma_network
    spec: dict = {
        "subnet": net.ip_range,
        "perNodeBlockSize": net.per_node_block_size,
        "nodeSelector": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": labels.POOL_LABEL, "operator": "In", "values": [pool.name]}],
        }]},
    }
    if net.gateway:
        spec["gateway"] = net.gateway
    return {"apiVersion": IPAM_API_VERSION, "kind": "IPPool", "metadata": {"name": network_name(pool), "namespace": namespace}, "spec": spec}


def network(pool: NodePoolSpec, namespace: str = NAMESPACE) -> dict:
    """The pool's MacvlanNetwork, HostDeviceNetwork or SriovNetwork (the operator renders a
    NetworkAttachmentDefinition); a SriovNetwork lives in the operator's `namespace`, the others are cluster-scoped."""
    net = pool.rdma_network
    if net.network == "sriov":
        return sriov_network.sriov_network(pool, network_name(pool), namespace)
    ipam = json.dumps({"type": "nv-ipam", "poolName": network_name(pool)})
    if net.network == "host-device":
        kind = "HostDeviceNetwork"
        spec = {"networkNamespace": net.namespace, "resourceName": pod_resource(pool), "ipam": ipam}
    else:
        kind = "MacvlanNetwork"
        spec = {"networkNamespace": net.namespace, "master": net.interfaces[0], "mode": "bridge", "mtu": 0, "ipam": ipam}
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": network_name(pool)}, "spec": spec}


def _custom(name: str, obj: dict, opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    return k8s.apiextensions.CustomResource(
        name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"], spec=obj["spec"], opts=opts
    )


class NetworkOperator(pulumi.ComponentResource):
    """Namespace, Helm release, NicClusterPolicy, an IPPool + network per RDMA pool, and an SR-IOV node
    policy per sriov pool."""

    def __init__(
        self, name: str, args: NetworkOperatorArgs, access: ClusterAccess, opts: Optional[pulumi.ResourceOptions] = None
    ):
        super().__init__("gpufleet:addons:NetworkOperator", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=access.provider)
        # Its daemons are privileged (device plugins, CNI binaries on the host).
        self.namespace, self.release = namespaced_release(
            name, versions.NETWORK_OPERATOR, args.namespace, chart_values(args.pools, access.facts), access, parent=self,
            namespace_labels={"pod-security.kubernetes.io/enforce": "privileged"}, timeout=900,
        )
        # The NicClusterPolicy, MacvlanNetwork and HostDeviceNetwork CRDs ship in the chart's crds/ directory.
        after_release = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.release]))
        policy_opts = pulumi.ResourceOptions.merge(after_release, pulumi.ResourceOptions(
            custom_timeouts=pulumi.CustomTimeouts(create=POLICY_READY_TIMEOUT, update=POLICY_READY_TIMEOUT)))
        policy = nic_cluster_policy(args, access.facts.get(MIRROR_FACT), access.facts)
        self.policy = _custom(f"{name}-nic-cluster-policy", policy, policy_opts)
        # The IPPool CRD (ippools.nv-ipam.nvidia.com) is not in the chart: the operator applies it when it reconciles
        # the NicClusterPolicy's nvIpam state (Mellanox/network-operator at the pinned tag, manifests/state-nv-ipam-cni/
        # 005-*.yaml). So the IP pools wait for the policy to report ready (see WAIT_FOR_READY), and each network
        # waits for its pool: its `ipam` names the pool, and a network created first hands pods no addresses.
        after_policy = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.release, self.policy]))
        networked = [] if args.infiniband else args.pools
        self.ip_pools = [_custom(f"{name}-ippool-{p.name}", ip_pool(p, args.namespace), after_policy) for p in networked]
        self.networks = [
            _custom(f"{name}-network-{p.name}", network(p, args.namespace),
                    pulumi.ResourceOptions.merge(after_policy, pulumi.ResourceOptions(depends_on=[self.release, self.policy, pool])))
            for p, pool in zip(networked, self.ip_pools)
        ]
        # SR-IOV pools: the VFs the SriovNetwork's resourceName refers to.
        self.sriov_policies = [
            _custom(f"{name}-sriov-policy-{p.name}", sriov_network.node_policy(p, args.namespace), after_release)
            for p in args.pools if p.rdma_network.network == "sriov"
        ]
        self.register_outputs({
            "namespace": args.namespace,
            "chartVersion": versions.NETWORK_OPERATOR.version,
            "networks": {p.name: network_name(p) for p in networked},
            "resources": {p.name: pod_resource(p) for p in args.pools},
        })
