"""gpufleet's Pulumi components, installed as `gpufleet.components`.

- `gpu_cluster.GpuCluster` composes everything; `platform` picks the platform package by name;
  `cluster_access.ClusterAccess` is the narrow view of a cluster that pools and add-ons take;
  `helm_chart` installs a pinned chart on that view.
- `eks/`, `gke/`, `k3s/`: one subpackage per platform (control plane, network, GPU pools, its own add-ons).
- `gpu_stack/`, `workloads/`: the cross-platform layers installed on any cluster.

Import the module you need: a platform's SDK loads only when its package is imported.
"""
