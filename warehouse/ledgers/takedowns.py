"""The takedown ledger: which posts and authors left the benchmark, under `<warehouse>/takedowns/`.

Append-only like the review ledger: each append is one immutable batch file `ledger/NNNNNN.jsonl`
(temp file, fsync, linked into place under a lock). Version N is batches 1..N and its sha256 the
hash of their bytes, so a build records exactly which takedowns it honoured. A post id is kept as
given (`t3_abc` or `abc`: both match the post `abc`). An author is kept only as a keyed hash
(HMAC-SHA256); the key is made in the warehouse for a ledger that holds nothing hashed yet, readable
by its owner alone, and without it the ledger's hashes are refused, never silently ignored.
`resolved` lines are what `express takedown apply` found: the posts of a taken-down author, and
keyed fingerprints of each taken-down post's texts (whole and per field), so a later check finds
them once they are gone. Every place that honours the ledger asks its one matcher
(common/matching/takedowns.py, `TakedownSet.matcher`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from common.batches import BatchFolder, now, record_from_json
from common.errors import UserError
from common.files import write_json
from common.matching.reddit_ids import post_key
from common.matching.takedowns import TakedownMatcher, author_key, keyed_hash
from warehouse.layout import TakedownPaths, Warehouse

SCHEMA = "express-takedown-ledger/1"
KINDS = ("post", "author", "resolved")
DELETED_ON_REDDIT = "deleted on Reddit"
_POST_ID = re.compile(r"^(?:t[13]_)?([0-9a-z]{1,16})$")  # Reddit's base-36 ids are a dozen characters at most


class TakedownError(UserError, ValueError):
    """A takedown ledger or request that cannot be used; the message names the file and line."""


def check_post_id(post_id: str) -> str:
    """A post id as given, once it is known to be one (base 36, with or without `t3_`/`t1_`)."""
    given = str(post_id).strip()
    if not _POST_ID.match(given.lower()):
        shown = given if len(given) <= 40 else f"{given[:40]}... ({len(given):,} characters)"
        raise TakedownError(f"{shown!r} is not a Reddit post id (base 36, at most 16 characters, with or without t3_)")
    return given


@dataclass(frozen=True)
class Takedown:
    """One ledger line: a post or an author taken down, or what apply resolved for a post."""

    kind: str
    reason: str
    time: str
    source: str  # cli, sync, apply
    post_id: str = ""  # as given (post, resolved)
    author_hmac: str = ""  # author; for resolved: the author whose post it is
    texts: list[list[Any]] = field(default_factory=list)  # resolved: fingerprints of its texts
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", [])}

    @property
    def keyed(self) -> bool:
        """Made with the warehouse's key (an author's hash, a text's fingerprints)."""
        return bool(self.author_hmac or self.texts)


def entry_from_json(row: Any, where: str) -> Takedown:
    kind = row.get("kind") if isinstance(row, dict) else None
    named = ("author_hmac",) if kind == "author" else ("post_id",)  # what a line of its kind takes down
    return record_from_json(Takedown, row, where, TakedownError, SCHEMA, "takedown", ("reason", "time", "source", *named),
                            {"kind": KINDS})


@dataclass(frozen=True)
class TakedownSet:
    """What a ledger version takes down: post ids (as matched), authors' hashes, text fingerprints."""

    posts: frozenset[str] = frozenset()
    authors: frozenset[str] = frozenset()
    fingerprints: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # (post, fingerprint)
    version: int = 0
    sha256: str = ""
    root: str = ""  # the warehouse, whose key made the hashes

    def __bool__(self) -> bool:
        return bool(self.posts or self.authors)

    @property
    def digest(self) -> str:
        """What the set takes down, whatever the ledger's wording: a scrub done for it is not redone."""
        h = hashlib.sha256(json.dumps([sorted(self.posts), sorted(self.authors)]).encode())
        return h.hexdigest()

    def matcher(self) -> TakedownMatcher:
        """The one matcher of this set (common/matching/takedowns.py); a missing key is refused."""
        key = TakedownLedger(self.root).key() if self.root and (self.authors or self.fingerprints) else None
        return TakedownMatcher(self.posts, self.authors, self.fingerprints, key, self.digest)

    def state(self) -> dict[str, Any]:
        return {"version": self.version, "sha256": self.sha256}


class TakedownLedger(BatchFolder):
    """The warehouse's takedowns. Cheap to create; reads the batch files on demand."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.paths = Warehouse(self.root).takedowns
        super().__init__(self.paths.ledger, self.paths.ledger_lock, TakedownError, "takedown",
                         "another takedown writer")

    def append(self, entries: Iterable[Takedown]) -> int:
        """Add one batch holding `entries` (all or none); returns the new ledger version."""
        return self.append_rows([e.to_json() for e in entries], entry_from_json)

    def batches(self, version: int | None = None) -> list[tuple[int, list[Takedown]]]:
        """(batch number, its entries) of batches 1..version (default: all), in ledger order."""
        return self.parsed(entry_from_json, version)

    def read(self, version: int | None = None) -> list[Takedown]:
        return [e for _, entries in self.batches(version) for e in entries]

    def key(self, create: bool = False) -> bytes | None:
        """The warehouse's hashing key; made (mode 0600) when `create` and the ledger holds nothing
        made with a key. A ledger whose hashes need a key that is gone is refused: a new key could
        not recognise them, and honouring only the ids would drop them silently."""
        if self.paths.key.exists():
            return self.paths.key.read_bytes()
        keyed = sum(e.keyed for e in self.read())
        if keyed:
            raise TakedownError(
                f"{self.paths.key}: the takedown key is missing, and the ledger ({self.paths.ledger}) holds {keyed} "
                "author hash(es) and text fingerprint(s) made with it; restore the key from your backup of the "
                "warehouse (docs/takedowns.md): a new key could not recognise them")
        return _make_key(self.paths) if create else None

    def add(self, posts: Iterable[str] = (), authors: Iterable[str] = (), reason: str = "",
            source: str = "cli") -> int:
        """Take down posts (ids as given) and authors (hashed with the warehouse key); returns the version."""
        if not reason.strip():
            raise TakedownError("a takedown needs a reason (--reason TEXT)")
        posts, authors = [check_post_id(p) for p in posts], [author_key(a) for a in authors]
        if any(a in ("", "[deleted]") for a in authors):
            raise TakedownError("an author takedown needs the author's Reddit name")
        key = self.key(create=bool(authors))  # refused before anything is written when the key is lost
        stamp = now()
        entries = [Takedown("post", reason.strip(), stamp, source, post_id=p) for p in posts]
        entries += [Takedown("author", reason.strip(), stamp, source, author_hmac=keyed_hash(key, a))
                    for a in authors if key is not None]
        return self.append(entries)

    def current(self, version: int | None = None) -> TakedownSet:
        """The set a ledger version (default: the latest) takes down."""
        version = self.version if version is None else version
        return _takedown_set(str(self.root), version, self.sha256(version) if version else "")


def _make_key(paths: TakedownPaths) -> bytes:
    paths.root.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(paths.key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return paths.key.read_bytes()
    with os.fdopen(fd, "wb") as fh:
        fh.write(secrets.token_bytes(32))
        fh.flush()
        os.fsync(fh.fileno())
    return paths.key.read_bytes()


@lru_cache(maxsize=4)
def _takedown_set(root: str, version: int, sha256: str) -> TakedownSet:
    posts, authors, prints = set(), set(), []
    for e in TakedownLedger(root).read(version) if version else []:
        if e.kind == "author":
            authors.add(e.author_hmac)
            continue
        posts.add(post_key(e.post_id))
        prints += [(post_key(e.post_id), tuple(t)) for t in e.texts]
    return TakedownSet(frozenset(posts), frozenset(authors), tuple(dict.fromkeys(prints)), version, sha256, root)


def takedown_state(wh: Warehouse) -> dict[str, Any] | None:
    """The ledger as it stands (version, sha256), or None when nothing was taken down; a ledger
    whose key is lost is refused here, before a build honours it in part."""
    ledger = TakedownLedger(wh.root)
    version = ledger.version
    if not version:
        return None
    ledger.key()
    return {"version": version, "sha256": ledger.sha256(version)}


def save_takedown_state(run_file: Path, state: dict[str, Any] | None) -> None:
    """Fix the ledger version a run honours (its `takedowns.json`), when anything was taken down."""
    if state is not None and not run_file.exists():
        write_json(run_file, state)


def run_takedowns(run_file: Path) -> TakedownSet:
    """The set a run honours (`runs/<id>/takedowns.json`), empty when it honours none."""
    if not run_file.exists():
        return TakedownSet()
    state = json.loads(run_file.read_text())
    return TakedownLedger(Warehouse.of_run(run_file.parent).root).current(int(state["version"]))
