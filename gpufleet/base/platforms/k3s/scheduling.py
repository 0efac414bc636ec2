"""k3s: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means).

A k3s pool is its hosts: the stack declares their GPU model (`gpu`), their topology (each host's `block` and `rack`,
written as node labels at join), their RDMA NICs (the NVIDIA Network Operator's, SR-IOV included) and whether AMD
Instinct GPUs run (the AMD GPU Operator). k3s brings its own local-path provisioner; serving goes through agentgateway (or Envoy Gateway).
"""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import labels as L
from gpufleet.base.platforms.contract.scheduling import SchedulingTraits
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import (AGENTGATEWAY_CLASS, AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES,
                                                  ENVOY_CLASS)

NS = "gpufleet"


class K3sScheduling(SchedulingTraits):
    # The gateway's Service (agentgateway's or Envoy's): the contract's default, ClusterIP when internal. A LoadBalancer Service on k3s is served by
    # ServiceLB, which binds its ports as host ports on every node (docs.k3s.io/networking/networking-services,
    # "ServiceLB will expose these ports on all cluster members"; k3s-io/klipper-lb README), so only an external
    # Gateway gets one.
    # agentgateway first (auto: InferencePool routing, scale to zero behind the picker); Envoy Gateway on request.
    gateway_classes = (AGENTGATEWAY_CLASS, ENVOY_CLASS)
    serving_rdma_fabric = "network-operator"  # the pool's RDMA device and Multus network (components/gpu_stack/network_operator.py)
    inference_extension_releases = AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES
    amd_gpus = True
    declared_gpus = True
    nic_rdma = True
    sriov_rdma = True
    local_path_storage = True

    def size_keys(self, pool: Any) -> list[tuple[str, int]]:
        """A k3s pool is its hosts."""
        return [("hosts", len(pool.hosts))]

    # Topology

    def topology_levels(self, pool: Any) -> list[str]:
        """The hosts' declared block and rack (gpufleet/base/spec/features/topology.py host_labels)."""
        hosts = list(pool.hosts)
        out = []
        if hosts and any(h.block for h in hosts):
            out.append(L.TOPOLOGY_BLOCK_LABEL)
        if hosts and any(h.rack for h in hosts):
            out.append(L.TOPOLOGY_RACK_LABEL)
        return out

    def topology_domain_nodes(self, pool: Any, level: str, nvlink: Any) -> Optional[int]:
        """Most hosts sharing one value of the level (a rack is identified within its block, as Kueue builds
        domains)."""
        if level not in (L.TOPOLOGY_BLOCK_LABEL, L.TOPOLOGY_RACK_LABEL):
            return None
        counts: dict[tuple, int] = {}
        for h in pool.hosts:
            key = (h.block,) if level == L.TOPOLOGY_BLOCK_LABEL else (h.block, h.rack)
            counts[key] = counts.get(key, 0) + 1
        return max(counts.values(), default=0)

    def topology_problems(self, stack: str, at: str, pool: Any) -> list:
        """Every host declares its rack, and its block on all hosts or on none: Kueue leaves nodes without a level's
        label out."""
        out = []
        hosts = list(pool.hosts)
        no_rack = [h.name for h in hosts if not h.rack]
        if no_rack:
            out.append(Problem(stack, f"{at}.name", f"hosts {', '.join(no_rack)} of pool {pool.name} declare no rack, so "
                               "their nodes carry no topology label: set nodePools[].hosts[].rack (and block, if racks "
                               "sit behind different spines) on every host", pool.name))
        no_block = [h.name for h in hosts if not h.block]
        if any(h.block for h in hosts) and no_block:
            out.append(Problem(stack, f"{at}.name", f"hosts {', '.join(no_block)} of pool {pool.name} declare no block "
                               "while others do: Kueue leaves nodes without a level's label out; set block on every host "
                               "or on none", pool.name))
        return out

    # Storage

    def local_path_problems(self, stack: str, spec: Any) -> list:
        """k3s's local-path provisioner is off when `cluster.k3s.disable` lists local-storage."""
        if spec.storage.local_path.enabled and "local-storage" in spec.cluster.k3s.disable:
            return [Problem(stack, f"{NS}:storage.localPath.enabled",
                            "k3s's local-path provisioner is disabled (cluster.k3s.disable has local-storage): "
                            "remove it from disable, or set localPath.enabled: false")]
        return []
