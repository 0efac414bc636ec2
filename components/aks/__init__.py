"""Azure Kubernetes Service: the resource group and network, a private AKS control plane with Microsoft Entra ID and
workload identity and its system pool, one node pool per GPU pool, and StorageClasses on AKS's CSI drivers
(docs/aks.md). Imported only by AKS stacks (gpufleet.components.platform)."""
