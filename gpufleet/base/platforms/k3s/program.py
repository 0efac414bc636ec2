"""k3s: what its Pulumi program needs beyond the contract's defaults: the stack `gpufleet init --platform k3s`
writes (gpufleet/app/init.py), a small working example that plans as it is (tests/cli/test_init.py)."""

STARTER_STACK = """\
# A k3s cluster on your own hosts over SSH: one server, one GPU host. Addresses are from the documentation range:
config:
  gpufleet:cluster:
    platform: k3s
    kubernetesVersion: "1.36"
    k3s:
      sshUser: ubuntu
      servers:
        - {name: cp-1, address: 192.0.2.10}   # replace: your server's address
  gpufleet:nodePools:
    - name: l4
      gpu: L4
      gpusPerNode: 1
      pricePerNodeHour: 0.85                  # replace: what one host costs you per hour
      hosts:
        - {name: gpu-1, address: 192.0.2.31}  # replace: your GPU host
  gpufleet:gpuOperator:
    driver: {source: operator}
  gpufleet:workloads:
    cudaVersions: ["12.8"]
  # replace: `pulumi config set --secret gpufleet:sshPrivateKey < ~/.ssh/id_ed25519` writes the real value
  gpufleet:sshPrivateKey:
    secure: v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
"""
