"""The two-node NCCL all-reduce `gpufleet verify --level full` runs on RDMA pools: `allreduce.py` (the pod pair on
k3s RDMA and EKS EFA pools, and `for_pool`, which picks the check for any pool) and `gke.py` (Google's own test on
GKE GPUDirect pools)."""
