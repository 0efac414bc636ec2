"""Compute Engine machine series facts (gcp_families.yaml, with sources): disk types each series attaches
and whether it needs gVNIC. Unknown series give None: the checks then stay silent rather than guess."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog import _load

FILE = "gcp_families.yaml"
PERSISTENT_DISK = "pd-balanced"
HYPERDISK = "hyperdisk-balanced"


@dataclass(frozen=True)
class Series:
    name: str
    disks: tuple[str, ...]
    gvnic: bool

    @property
    def boot_disk(self) -> str:
        """The boot disk type gpufleet gives nodes of this series: pd-balanced where it attaches, else Hyperdisk."""
        return PERSISTENT_DISK if PERSISTENT_DISK in self.disks else self.disks[0]


def series(machine_type: str) -> Optional[Series]:
    """The series of a machine type by the longest matching prefix (a3-ultragpu-8g -> a3-ultragpu), or None."""
    rows = _load(FILE)["series"]
    parts = (machine_type or "").split("-")
    for n in range(len(parts) - 1, 0, -1):
        name = "-".join(parts[:n])
        if name in rows:
            row = rows[name]
            return Series(name, tuple(row["disks"]), bool(row["gvnic"]))
    return None


def known_series() -> list[str]:
    return list(_load(FILE)["series"])
