"""Support calendars of versioned components besides EKS/GKE Kubernetes (gpufleet/base/catalog/lifecycle.yaml):
the GPU Operator's status per major, NVIDIA driver branches' end of life, k3s minors (upstream Kubernetes end of
life). Each lookup returns a `Support` with the source it came from; a version the calendar does not list comes back
with status "unknown" (the caller says so, never skips it silently)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from gpufleet.base.catalog._files import _load

FILE = "lifecycle.yaml"


@dataclass(frozen=True)
class Support:
    component: str  # what is judged, in words: "GPU Operator v25.10.1", "NVIDIA driver branch R535"
    status: str  # supported | deprecated | end_of_support | unknown
    end: Optional[dt.date]  # last day of support, where the source gives a date
    source: str

    def days_left(self, today: dt.date) -> Optional[int]:
        return None if self.end is None else (self.end - today).days


def _sources(keys) -> str:
    """The short citation of each source (lifecycle.yaml `cite`; the full reading is in `sources`)."""
    data = _load(FILE)
    return "; ".join(data["cite"].get(k) or data["sources"][k] for k in keys)


def as_of() -> str:
    return str(_load(FILE)["as_of"])


def gpu_operator(version: str) -> Support:
    """Status of a GPU Operator release by its major (vYY.MM.PP -> YY.MM)."""
    data = _load(FILE)["gpu_operator"]
    major = ".".join(version.lstrip("v").split(".")[:2])
    row = data["majors"].get(major)
    what = f"GPU Operator {version}"
    if row is None:
        return Support(what, "unknown", None, f"major {major} is not in lifecycle.yaml gpu_operator "
                                              f"(known: {', '.join(data['majors'])})")
    return Support(what, row["status"], None, _sources(data["sources"]))


def driver_branch(branch: int) -> Support:
    """End of life of an NVIDIA data center driver branch (R535, R580, ...)."""
    data = _load(FILE)["nvidia_driver_branches"]
    row = data["branches"].get(int(branch))
    what = f"NVIDIA driver branch R{branch}"
    if row is None and int(branch) < max(data["branches"]):
        # NVIDIA's table lists every branch still supported: an older branch missing from it is past its end of life.
        return Support(what, "end_of_support", None, "not among the supported branches of " + _sources(data["sources"]))
    if row is None:
        return Support(what, "unknown", None, f"R{branch} is not in lifecycle.yaml nvidia_driver_branches "
                                              f"(known: {', '.join(f'R{b}' for b in data['branches'])})")
    end = row["end_of_life"]
    if end == "past":
        return Support(f"{what} ({row['designation']})", "end_of_support", None, _sources(data["sources"]))
    return Support(f"{what} ({row['designation']})", "supported", dt.date.fromisoformat(end), _sources(data["sources"]))


def k3s_minor(minor: str) -> Support:
    """End of life of a k3s minor: upstream Kubernetes' for the same minor."""
    data = _load(FILE)["k3s"]
    row = data["minors"].get(minor)
    what = f"k3s {minor} (Kubernetes {minor} upstream)"
    if row is None:
        return Support(what, "unknown", None, f"{minor} is not in lifecycle.yaml k3s (known: {', '.join(data['minors'])})")
    return Support(what, "supported", dt.date.fromisoformat(row["end_of_life"]), _sources(data["sources"]))


def no_calendar(component: str) -> Optional[str]:
    """Why no calendar is recorded for a component (amd_gpu_operator, charts), or None when one is."""
    data = _load(FILE)
    row = data.get(component) or {}
    return "; ".join(data["sources"][k] for k in row["sources"]) if row.get("calendar") == "none" else None
