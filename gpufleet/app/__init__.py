"""The application: what uses the base, the components and the policies. `program.py` (the Pulumi program of
`pulumi up`), `plan/` (the offline plan), `review/` (pull-request previews), `verify/` (checks on a live cluster),
`package.py` (GpuCluster as a component package for other languages) and `cli.py` (the `gpufleet` command)."""
