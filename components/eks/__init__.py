"""AWS EKS: control plane, VPC, managed GPU node groups (with EFA), and EKS's own add-ons.

Importing this package loads `pulumi_aws`; a k3s or GKE stack never does.
"""
