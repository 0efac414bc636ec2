from policies.pack import build

build()
