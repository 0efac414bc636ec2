"""What happened to one stack in a fleet run."""

from __future__ import annotations

from dataclasses import dataclass, field

SUCCEEDED, FAILED, LOCKED, NOT_STARTED = "succeeded", "failed", "locked", "not started"


@dataclass
class StackOutcome:
    stack: str
    result: str = NOT_STARTED
    changes: dict[str, int] = field(default_factory=dict)  # engine op -> count ("same" left out)
    policies: list[dict] = field(default_factory=list)  # {policy, level, urn, message} from the engine's policy events
    seconds: float = 0.0
    message: str = ""
    started: float = 0.0  # monotonic clock when it started (0: never), to check the stop rule
    finished: float = 0.0

    @property
    def changed(self) -> bool:
        """The engine changed (up) or would change (preview) at least one resource of this stack."""
        return any(n for op, n in self.changes.items() if op != "same")

    @property
    def mandatory(self) -> int:
        return sum(1 for p in self.policies if p["level"] == "mandatory")

    @property
    def advisory(self) -> int:
        return len(self.policies) - self.mandatory
