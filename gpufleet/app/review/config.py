"""What changes in the stack file outside the `gpufleet:` keys, read from the two plans' `stackFile` records.

The resource diff cannot show these: a provider key or a secrets setting changes no resource input, yet it decides
where the deploy's requests go and which keys decrypt its secrets, and a `secure:` value changes only its ciphertext.
So each is a finding of its own that a reviewer must see (docs/security.md, "The stack file outside gpufleet:"):
every provider key added, removed or changed (with its values: each passed its shape check in the plan), every
`secure:` value by name only, every secrets setting (`secretsprovider`, `encryptedkey`, `encryptionsalt`) by name
only. A plan from before the record existed compares as "not recorded", never as "nothing changed".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

KINDS = {"config": "provider key", "secure": "secret value", "settings": "secrets setting"}


@dataclass(frozen=True)
class ConfigChange:
    kind: str  # config | secure | settings (the record's section)
    key: str
    status: str  # added | removed | changed
    before: Optional[Any] = None
    """The old value: provider keys only (a secret or a secrets setting is named, never shown)."""
    after: Optional[Any] = None

    @property
    def finding(self) -> str:
        what = f"{KINDS[self.kind]} {self.key}"
        if self.kind != "config":
            return f"{what} {self.status} (its value is not shown)"
        if self.status == "changed":
            return f"{what} changed: {self.before} -> {self.after}"
        return f"{what} {self.status}: {self.after if self.status == 'added' else self.before}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "key": self.key, "status": self.status, "before": self.before, "after": self.after,
                "finding": self.finding}


def config_changes(base: dict, head: dict) -> tuple[list[ConfigChange], Optional[str]]:
    """Every change outside `gpufleet:` from the base plan to the head plan, and a note when either plan does not
    record its stack file (then nothing is compared)."""
    old, new = base.get("stackFile"), head.get("stackFile")
    if not isinstance(old, dict) or not isinstance(new, dict):
        side = "base" if not isinstance(old, dict) else "head"
        return [], (f"the {side} plan does not record its stack file's keys outside `gpufleet:` (a plan from an older "
                    "gpufleet): provider keys, secret values and secrets settings are not compared")
    out = []
    for kind in KINDS:
        a, b = old.get(kind) or {}, new.get(kind) or {}
        for key in sorted(set(a) | set(b)):
            if key not in a:
                status = "added"
            elif key not in b:
                status = "removed"
            elif a[key] != b[key]:
                status = "changed"
            else:
                continue
            shown = kind == "config"
            out.append(ConfigChange(kind, str(key), status, a.get(key) if shown else None, b.get(key) if shown else None))
    return out, None
