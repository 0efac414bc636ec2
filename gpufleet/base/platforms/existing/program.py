"""existing: what its Pulumi program needs beyond the contract's defaults: the stack `gpufleet init --platform existing`
writes (gpufleet/app/init.py), a small working example that plans as it is (tests/cli/test_init.py)."""

STARTER_STACK = """\
# A Kubernetes cluster you already have (a GPU cloud's managed Kubernetes, or one made elsewhere): gpufleet installs
# the GPU stack on it. Its kubeconfig: `pulumi config set --secret gpufleet:kubeconfig < kubeconfig.yaml`.
config:
  gpufleet:cluster:
    platform: existing
    kubernetesVersion: "1.34"
    existing: {}
  gpufleet:nodePools:
    - name: h100
      minNodes: 1
      maxNodes: 1
      gpu: H100-80GB
      gpusPerNode: 8
      existing:
        nodeSelector: {gpufleet.io/pool: h100}   # replace: a label your GPU nodes carry
  gpufleet:gpuOperator:
    driver: {source: preinstalled}
  gpufleet:workloads:
    cudaVersions: ["12.8"]
  gpufleet:kubeconfig:
    secure: v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==
"""
