"""gpufleet: declare whole GPU Kubernetes clusters per environment, on Pulumi."""
