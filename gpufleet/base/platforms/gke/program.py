"""gke: what its Pulumi program needs beyond the contract's defaults: the stack `gpufleet init --platform gke`
writes (gpufleet/app/init.py), a small working example that plans as it is (tests/cli/test_init.py)."""

STARTER_STACK = """\
# A regional GKE cluster with one L4 pool that scales to zero. `gcloud auth application-default login` gives
# `pulumi up` its credentials.
config:
  gcp:project: my-gpu-project               # replace: your project
  gcp:region: us-central1
  gpufleet:cluster:
    platform: gke
    kubernetesVersion: "1.35"
    gke:
      region: us-central1
      authorizedNetworks:                   # who may reach the API server (secure-defaults refuses none)
        - {cidr: 203.0.113.0/24, name: office}  # replace: your office/VPN egress
  gpufleet:nodePools:
    - name: l4
      machineType: g2-standard-8
      minNodes: 0
      maxNodes: 2
      gke: {gpuDriverVersion: LATEST}       # GKE's DEFAULT driver is branch 535, past its support end
  gpufleet:workloads:
    cudaVersions: ["12.8"]
"""
