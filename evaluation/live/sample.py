"""Samples that can tell (`--sample N`, `--probe-rows N`): N rows drawn at random, seeded, spread
evenly over both sides of the model's knowledge cutoff and, within a side, over the months the rows
were posted in, instead of the first N in time order (which may all come from one side and one week).

Each stratum (side x month) gets an equal share, capped at the rows it holds; what a small one cannot
take goes to the others. The same rows, seed and cutoff give the same sample. Equal shares mean a
month or side with few rows weighs more in the run's totals than in the window: the strata and their
counts are stored, so the weights are known (docs/live.md).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.live.window import iso

Key = tuple[str, int]  # (post_id, segment_index): a row of a split, of a run, of a probe
SIDES = ("before", "after")


def key_of(row: dict[str, Any]) -> Key:
    return str(row["post_id"]), int(row["segment_index"])


@dataclass(frozen=True)
class Stratum:
    side: str  # "before" or "after" the cutoff; "" without one
    month: str  # YYYY-MM (UTC) the rows were posted in
    rows: int  # rows it holds
    drawn: int  # rows drawn from it


@dataclass(frozen=True)
class Sample:
    asked: int
    seed: int
    cutoff: int | None  # Unix seconds
    strata: tuple[Stratum, ...]
    keys: frozenset[Key]

    @property
    def drawn(self) -> int:
        return len(self.keys)

    def rows(self, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """The drawn rows of `rows`, in their own order."""
        return (r for r in rows if key_of(r) in self.keys)

    def to_json(self) -> dict[str, Any]:
        """What a run's config.json records: the size asked and drawn, the seed and every stratum."""
        return {"rows": self.asked, "drawn": self.drawn, "seed": self.seed,
                "cutoff": iso(self.cutoff) if self.cutoff is not None else None,
                "strata": [{"side": s.side, "month": s.month, "rows": s.rows, "drawn": s.drawn} for s in self.strata]}


def allocate(n: int, sizes: Sequence[int]) -> list[int]:
    """`n` spread as evenly as `sizes` allow: equal shares capped at each size, the capped part given to
    the others; a remainder smaller than the groups left goes one each to those with the most room."""
    take = [0] * len(sizes)
    left = min(n, sum(sizes))
    while left:
        room = [i for i, size in enumerate(sizes) if take[i] < size]
        share = left // len(room)
        if not share:
            for i in sorted(room, key=lambda i: (take[i] - sizes[i], i))[:left]:
                take[i] += 1
            break
        for i in room:  # each gets at least one: the loop ends
            add = min(share, sizes[i] - take[i])
            take[i] += add
            left -= add
    return take


def draw(rows: Iterable[tuple[Key, int]], n: int, seed: int, cutoff: int | None = None) -> Sample:
    """Draw `n` of `rows` ((key, created_utc) each): first shared between the sides of `cutoff`,
    then within a side between its months; each stratum's rows drawn without replacement."""
    groups: dict[tuple[str, str], list[Key]] = {}
    for key, created in rows:
        side = "" if cutoff is None else SIDES[int(created) >= cutoff]
        groups.setdefault((side, iso(int(created))[:7]), []).append(key)
    order = sorted(groups, key=lambda g: (SIDES.index(g[0]) if g[0] else 0, g[1]))
    sides = list(dict.fromkeys(side for side, _ in order))
    per_side = allocate(n, [sum(len(groups[g]) for g in order if g[0] == side) for side in sides])
    shares: dict[tuple[str, str], int] = {}
    for side, quota in zip(sides, per_side):
        months = [g for g in order if g[0] == side]
        shares.update(zip(months, allocate(quota, [len(groups[g]) for g in months])))
    rng = np.random.default_rng(seed)
    keys: set[Key] = set()
    for g in order:
        members = groups[g]
        keys.update(members[i] for i in rng.choice(len(members), size=shares[g], replace=False))
    strata = tuple(Stratum(side, month, len(groups[(side, month)]), shares[(side, month)]) for side, month in order)
    return Sample(n, seed, cutoff, strata, frozenset(keys))


def draw_rows(rows: Iterable[dict[str, Any]], n: int, seed: int, cutoff: int | None = None) -> Sample:
    """`draw` over rows that carry post_id, segment_index and created_utc (a split's, a run's)."""
    return draw(((key_of(r), int(r["created_utc"])) for r in rows), n, seed, cutoff)
