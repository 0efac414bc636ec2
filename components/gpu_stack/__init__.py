"""The GPU stack on any cluster: NVIDIA GPU Operator, GPU sharing configs, Network Operator and SR-IOV."""
