"""eks: what its Pulumi program needs beyond the contract's defaults: the stack `gpufleet init --platform eks`
writes (gpufleet/app/init.py), a small working example that plans as it is (tests/cli/test_init.py)."""

STARTER_STACK = """\
# An EKS cluster in a new VPC with one L4 pool that scales to zero. `aws configure` (or your SSO profile) gives
# `pulumi up` its credentials.
config:
  aws:region: us-east-1                     # replace: your region
  gpufleet:cluster:
    platform: eks
    kubernetesVersion: "1.35"
    eks:
      network:
        availabilityZones: [us-east-1a, us-east-1b]
  gpufleet:nodePools:
    - name: l4
      instanceType: g6.xlarge
      minNodes: 0
      maxNodes: 2
  gpufleet:gpuOperator:
    driver: {source: preinstalled}
  gpufleet:workloads:
    cudaVersions: ["12.8"]
"""
