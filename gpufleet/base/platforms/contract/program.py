"""What a platform's Pulumi program needs (gpufleet/app/program.py, components/platform.py, the CLI)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramTraits:
    components: str
    """The module whose `PLATFORM` (a components.platform.Platform) builds its resources, imported only when a stack
    uses the platform (e.g. `gpufleet.components.eks.platform`)."""
    extra: str
    """The install extra that brings its SDKs: `pip install 'gpufleet[<extra>]'`."""
    sdk_modules: tuple[str, ...] = ()
    """The Python modules of its cloud SDKs (beyond the core's pulumi and pulumi_kubernetes); a stack on this platform
    with one of them missing is refused, naming the extra."""
    starter_stack: str = ""
    """The stack file `gpufleet init --platform <name>` writes for a new repository: a small working example that plans
    as it is, the values to replace marked `# replace:`; empty: init does not offer the platform."""
