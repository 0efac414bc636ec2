"""aks: scheduling traits (gpufleet/base/platforms/contract/scheduling.py says what each one means)."""

from __future__ import annotations

from typing import Any, Optional

from gpufleet.base import labels as L
from gpufleet.base.catalog import azure
from gpufleet.base.platforms.contract.scheduling import SchedulingTraits
from gpufleet.base.spec.errors import Problem
from gpufleet.base.spec.features.serving import (AGENTGATEWAY_CLASS, AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES,
                                                  ENVOY_CLASS)

NS = "gpufleet"


class AksScheduling(SchedulingTraits):
    # AKS has no managed gateway that routes to an InferencePool: gpufleet installs agentgateway (auto) or, on request,
    # Envoy Gateway, published through the Service below (issue 52).
    gateway_classes = (AGENTGATEWAY_CLASS, ENVOY_CLASS)
    serving_rdma_fabric = "infiniband"  # InfiniBand ports through the RDMA shared device plugin, no secondary network (components/aks/platform.py)
    inference_extension_releases = AGENTGATEWAY_INFERENCE_EXTENSION_RELEASES

    machine_key = "vmSize"

    def nvlink_machine(self, pool: Any) -> Optional[str]:
        """The pool's VM size (no AKS size is in catalog dra.yaml: DRA pools are refused on aks)."""
        return pool.vm_size

    def compat_problems(self, stack: str, spec: Any) -> list:
        """A VM size that runs only NVIDIA's GRID driver (the NVadsA10 v5 family, azure_vms.yaml `nv_a10`): gpufleet's
        pools get the data-center driver (AKS's or the GPU Operator's), under which the GPU never comes up."""
        out = []
        for i, pool in enumerate(spec.node_pools):
            vm = azure.vms().get(pool.vm_size or "")
            if vm is None or vm.driver != "grid":
                continue
            allowed = ", ".join(n for n, v in azure.vms().items() if v.driver != "grid")
            out.append(Problem(stack, f"{NS}:nodePools[{i}].vmSize", f"{vm.name} runs only NVIDIA's GRID (vGPU) driver, "
                               "which gpufleet does not install (AKS's default GPU driver and the GPU Operator's are the "
                               "data-center driver), so its GPU would not come up; use a size of another family (allowed: "
                               f"{allowed}). Source: MicrosoftDocs/azure-docs articles/virtual-machines/nva10v5-series.md (every "
                               "NVadsA10 v5 VM 'comes with a GRID license'); AKS installs it only as gpuProfile.driverType "
                               "Grid (gpufleet/base/catalog/azure_vms.yaml nv_a10)", vm.name))
        return out

    def compat_warnings(self, stack: str, spec: Any) -> list:
        """InfiniBand pools with `cluster.aks.infinibandFeature: manual`: the subscription feature the AKS InfiniBand
        guides register first (Azure/aks-rdma-infiniband getting-started/02-prerequisites.md @700dabb4), with the
        commands; gpufleet cannot see a subscription's features from a plan."""
        rdma = [p.name for p in spec.node_pools if p.rdma]
        if not rdma or spec.cluster.aks.infiniband_feature != "manual":
            return []
        return [Problem(stack, f"{NS}:cluster.aks.infinibandFeature", f"InfiniBand pools ({', '.join(rdma)}): register "
                        "the subscription's AKSInfinibandSupport feature once before `pulumi up`, so their nodes land "
                        "on one InfiniBand network: `az feature register --namespace Microsoft.ContainerService --name "
                        "AKSInfinibandSupport`, then wait until `az feature show --namespace Microsoft.ContainerService "
                        "--name AKSInfinibandSupport --query properties.state` says Registered and run `az provider "
                        "register --namespace Microsoft.ContainerService`; or set cluster.aks.infinibandFeature: register "
                        "to let the stack declare it (docs/aks.md, \"InfiniBand\")")]

    def gateway_service(self, external: bool) -> dict:
        """The serving gateway's Service: an Azure internal load balancer (`azure-load-balancer-internal: "true"`, learn.microsoft.com/azure/aks/
        internal-lb: a private IP from the cluster's virtual network, no public IP), or the public one when external."""
        if external:
            return {"type": "LoadBalancer"}
        return {"type": "LoadBalancer", "annotations": {L.AZURE_LB_INTERNAL_ANNOTATION: "true"}}
