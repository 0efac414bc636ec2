"""gpufleet: declare whole GPU Kubernetes clusters per environment, on Pulumi.

The package is laid out by layer, and layers import one way (tests/unit/test_layers.py):

- `gpufleet.base`: the foundation (the stack spec, the catalog of facts, the versions table, label keys); it imports
  nothing else of gpufleet.
- `gpufleet.components` (the repository's `components/`) and `gpufleet.policies` (`policies/`): the Pulumi
  components and the CrossGuard pack, side by side on the base.
- `gpufleet.app`: what uses everything (the Pulumi program, the offline plan, the review, verify, the CLI).

The flat names of 0.1 (`gpufleet.spec`, `gpufleet.plan`, `gpufleet.nccl_test`, ...) still import, with a
DeprecationWarning, until the next release (gpufleet/_moved.py).
"""

from gpufleet import _moved

_moved.install()
