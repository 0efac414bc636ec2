"""Entry point for `pulumi up`: everything lives in gpufleet.app.program."""

from gpufleet.app.program import main

main()
