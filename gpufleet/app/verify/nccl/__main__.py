"""`python -m gpufleet.app.verify.nccl STACK`: print the NCCL check of the stack's first RDMA pool as YAML."""

import sys

from gpufleet.app.verify.nccl.allreduce import main

raise SystemExit(main(sys.argv[1:]))
