from gpufleet.policies.pack import build

build()
