"""`express takedown verify`: is any taken-down post left in the warehouse? Every file is read
(releases not withdrawn, build work, quarantine, review, evaluations, cache, inputs, reports, cards,
compressed or not) for a taken-down post's id as a whole value, its author in a record, or its
text, whole or a field of it (takedowns/files.py, common/matching/takedowns.py). The ledger and its
key, the catalog (views only), the record of copies and withdrawn releases (kept on purpose until
purged) are not. With `outside`, the copies the project wrote elsewhere are read too."""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from common.matching.fingerprints import fingerprint
from common.matching.takedowns import TakedownMatcher
from takedowns.files import file_hits
from takedowns.outside import outside_hits
from takedowns.resolve import texts_of
from warehouse.layout import Warehouse
from warehouse.ledgers.takedowns import TakedownLedger
from warehouse.ledgers.withdrawn import withdrawal


@dataclass(frozen=True)
class Hit:
    path: Path
    where: str
    outside: bool = False  # a copy outside the warehouse: the user's to delete

    def __str__(self) -> str:
        return f"{self.path}: {self.where}" + (" (outside the warehouse)" if self.outside else "")


def matcher_for(wh: Warehouse) -> TakedownMatcher:
    """The ledger's matcher, with the fingerprints of the texts still in the warehouse of posts apply
    has not resolved yet."""
    ledger = TakedownLedger(wh.root)
    taken = ledger.current()
    matcher = taken.matcher()
    unresolved = taken.posts - {post for post, _ in taken.fingerprints}
    if unresolved:
        key = ledger.key() or secrets.token_bytes(32)  # nothing keyed yet: any key finds them, none is kept
        prints = [(post, fp) for post, texts in texts_of(wh, unresolved).items() for t in texts
                  if (fp := fingerprint(key, t))]
        matcher = TakedownMatcher(matcher.posts, matcher.authors, (*matcher.prints, *prints), key, matcher.digest)
    return matcher


def skipped(wh: Warehouse) -> list[Path]:
    """What verify does not read: the ledger, the catalog, the record of copies, withdrawn releases."""
    out = [wh.takedowns.root, wh.catalog, wh.exports]
    out += [r.root for r in wh.releases() if withdrawal(r.root) is not None]
    return out


def verify(wh: Warehouse, outside: bool = False) -> list[Hit]:
    """Every file that holds a taken-down post, with where in it."""
    matcher = matcher_for(wh)
    if not matcher:
        return []
    skip = skipped(wh)
    hits = []
    for path in sorted(wh.root.rglob("*")):
        if path.is_file() and not any(path == s or path.is_relative_to(s) for s in skip):
            if (where := file_hits(path, matcher)) is not None:
                hits.append(Hit(path, where))
    if outside:
        hits += [Hit(path, where, outside=True) for path, where in outside_hits(wh, matcher)]
    return hits
