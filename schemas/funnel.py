"""Record accounting: every record a stage reads is kept, dropped with a reason, or malformed."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Where a step hands each record it does not keep, with the reason (the quarantine writer).
DropSink = Callable[[Any, str], None]


@dataclass
class Funnel:
    """Counts for one stage; `balanced()` is the invariant read = kept + dropped + malformed."""

    read: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    malformed: int = 0

    def drop(self, reason: str) -> None:
        self.dropped[reason] += 1

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())

    def balanced(self) -> bool:
        return self.read == self.kept + self.dropped_total + self.malformed

    def check(self, stage: str) -> None:
        if not self.balanced():
            raise AssertionError(
                f"{stage}: funnel does not add up: read {self.read} != kept {self.kept} + "
                f"dropped {self.dropped_total} + malformed {self.malformed}"
            )

    def __add__(self, other: "Funnel") -> "Funnel":
        dropped = Counter(self.dropped)
        dropped.update(other.dropped)
        return Funnel(self.read + other.read, self.kept + other.kept, dropped, self.malformed + other.malformed)

    def __radd__(self, other: int) -> "Funnel":
        """`sum(funnels)` starts from 0."""
        if other != 0:
            return NotImplemented
        return Funnel(self.read, self.kept, Counter(self.dropped), self.malformed)

    def to_dict(self) -> dict[str, Any]:
        return {"read": self.read, "kept": self.kept, "dropped": dict(sorted(self.dropped.items())),
                "malformed": self.malformed}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Funnel":
        return cls(d["read"], d["kept"], Counter(d.get("dropped", {})), d.get("malformed", 0))
