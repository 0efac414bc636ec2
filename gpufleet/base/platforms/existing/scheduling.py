"""existing: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means)."""

from __future__ import annotations

from gpufleet.base.platforms.contract.scheduling import SchedulingTraits
from gpufleet.base.spec.features.serving import (AGENTGATEWAY_CLASS, AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES,
                                                  ENVOY_CLASS)


class ExistingScheduling(SchedulingTraits):
    nic_rdma = True  # RDMA over the Network Operator's NICs, as on k3s (components/existing/platform.py)
    # Serving: gpufleet installs agentgateway (auto) or Envoy Gateway into the cluster, published through the contract's
    # default Service (ClusterIP when internal: gpufleet knows nothing of the cluster's load balancers).
    gateway_classes = (AGENTGATEWAY_CLASS, ENVOY_CLASS)
    serving_rdma_fabric = "network-operator"  # as on k3s (components/existing/platform.py installs the Network Operator)
    inference_extension_releases = AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES
