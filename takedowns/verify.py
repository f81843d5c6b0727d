"""`express takedown verify`: is any taken-down post left in the warehouse? Every file is read
(releases not withdrawn, build work, quarantine, review, evaluations, cache, inputs, reports, cards)
for a taken-down post's id as a whole value or its text (takedowns/finder.py). The ledger and its
key, the catalog (views only) and withdrawn releases (kept on purpose until purged) are not."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from takedowns.finder import Finder, file_hits
from takedowns.resolve import texts_of
from warehouse.fingerprints import fingerprint
from warehouse.layout import Warehouse
from warehouse.takedowns import TakedownLedger, read_key
from warehouse.withdrawn import withdrawal


@dataclass(frozen=True)
class Hit:
    path: Path
    where: str

    def __str__(self) -> str:
        return f"{self.path}: {self.where}"


def finder_for(wh: Warehouse) -> Finder:
    """The ledger's posts with the fingerprints apply stored, and those of the texts still in the
    warehouse of posts apply has not resolved yet."""
    taken = TakedownLedger(wh.root).current()
    finder = Finder.of(taken)
    key = read_key(wh.takedowns)
    unresolved = taken.posts - {post for post, _ in taken.fingerprints}
    if key is not None and unresolved:
        prints = [(post, fp) for post, texts in texts_of(wh, unresolved).items() for t in texts
                  if (fp := fingerprint(key, t))]
        finder = Finder.of(taken.with_prints(prints))
    return finder


def skipped(wh: Warehouse) -> list[Path]:
    """What verify does not read: the ledger, the catalog, withdrawn releases' folders."""
    out = [wh.takedowns.root, wh.catalog]
    out += [r.root for r in wh.releases() if withdrawal(r.root) is not None]
    return out


def verify(wh: Warehouse) -> list[Hit]:
    """Every file that holds a taken-down post, with where in it."""
    finder = finder_for(wh)
    if not finder.posts and finder.authors is None:
        return []
    skip = skipped(wh)
    hits = []
    for path in sorted(wh.root.rglob("*")):
        if path.is_file() and not any(path == s or path.is_relative_to(s) for s in skip):
            if (where := file_hits(path, finder)) is not None:
                hits.append(Hit(path, where))
    return hits
