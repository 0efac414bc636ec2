"""aks: what its Pulumi program needs beyond the contract's defaults: the stack `gpufleet init --platform aks`
writes (gpufleet/app/init.py), a small working example that plans as it is (tests/cli/test_init.py)."""

STARTER_STACK = """\
# An AKS cluster with one A100 pool that scales to zero. `az login` gives `pulumi up` its credentials.
config:
  gpufleet:cluster:
    platform: aks
    kubernetesVersion: "1.35"
    aks:
      location: eastus                      # replace: your region
      entra:
        adminGroupObjectIds: ["00000000-0000-0000-0000-000000000000"]  # replace: your admins' Entra group
  gpufleet:nodePools:
    - name: a100
      vmSize: Standard_NC24ads_A100_v4
      minNodes: 0
      maxNodes: 2
  gpufleet:workloads:
    cudaVersions: ["12.8"]
"""
