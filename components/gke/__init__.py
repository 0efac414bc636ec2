"""GCP GKE: control plane, VPC, GPU node pools (with GPUDirect networks), and GKE's own storage.

Importing this package loads `pulumi_gcp`; a k3s or EKS stack never does.
"""
