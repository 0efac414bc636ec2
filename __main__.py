"""Entry point for `pulumi up`: everything lives in gpufleet.program."""

from gpufleet.program import main

main()
