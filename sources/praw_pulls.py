"""One praw pull, exactly once: the items newer than the stored checkpoint go into a new numbered JSONL
file; a kill -9 at any moment, then the same pull again, hands on every item once, in order.

Files of one query (its parameters hashed: `praw-<hash>`) in the pull folder:

- `praw-<hash>-<k:04d>.jsonl` + `.query.json`: pull k's items (dump-shaped rows, comments after their
  submission) and its query (never credentials). While pull k runs its file is `...-<k:04d>.jsonl.part`,
  so a folder glob never reads half a pull. A pull with nothing new leaves no file and uses no number.
- `praw-<hash>.checkpoint.jsonl`: the one checkpoint, an append-only log. Line 1 is the snapshot of
  committed pulls, `{"format": "express-praw-checkpoint/1", "pulls": k, "marks": {query key:
  {"created_utc": t, "ids": [...]}}}` (per Reddit query, the newest item handed on and the ids at that
  second: later pulls skip what it covers). Each later line is the open pull's progress: after every
  item, `{"q": key, "id", "created_utc", "after", "new", "seen", "bytes"}`, where `bytes` is the length
  of the `.part` file once that item's rows are in it; after every query, `{"q": key, "done": true,
  ...}`.
- `praw-<hash>.lock`: held while a pull runs (a second pull of the same query stops at once).

Why it is exactly-once: an item's rows are appended to the `.part` file first and its log line second;
the last complete log line is the truth. On resume a torn last log line is cut off and the `.part` file
is cut back to the `bytes` of the last complete line, so rows written without their line (killed in
between, or halfway through a write) are dropped and read again from the same cursor; an item with its
line is never read again (the cursor is past it, and its id is kept against a listing that shifted).
A finished pull commits by replacing the log with a new snapshot (write, fsync, rename: atomic), then
renames `.part` to `.jsonl` (common/files.py: `place`); a kill between the two is finished by the
next pull. Rows are flushed to the OS after every item, which a process kill cannot lose; they are
fsynced only at the commit.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from common.files import place, write_atomic, write_json
from schemas.config import SourcesConfig
from sources.praw_source import (Mark, Progress, Query, Scraper, ScrapeError, make_reddit, queries, query_digest,
                                 query_record)

CHECKPOINT_FORMAT = "express-praw-checkpoint/1"


@dataclass
class Checkpoint:
    """The checkpoint log of one query: committed pulls and marks, plus the open pull's progress."""

    path: Path
    pulls: int = 0
    marks: dict[str, Mark] = field(default_factory=dict)
    progress: dict[str, Progress] = field(default_factory=dict)
    newest: dict[str, Mark] = field(default_factory=dict)  # of the open pull, merged into marks at commit
    bytes: int = 0  # the open pull's `.part` file length covered by the log
    _log: BinaryIO | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, path: str | Path) -> "Checkpoint":
        """Replay the log; a torn last line (a kill mid-append) is cut off the file."""
        cp = cls(Path(path))
        if not cp.path.is_file():
            return cp
        raw = cp.path.read_bytes()
        *lines, torn = raw.split(b"\n")
        if not lines:  # the snapshot line is written whole (write, rename), so this is damage, not a kill
            raise ScrapeError(f"{cp.path}:1: no complete snapshot line; restore the file, or delete it and the "
                              "query's pull files to pull afresh")
        for n, line in enumerate(lines, 1):
            try:
                cp._apply(json.loads(line), n)
            except (ValueError, KeyError, TypeError) as exc:
                raise ScrapeError(f"{cp.path}:{n}: not a praw pull checkpoint line ({exc}); restore the file, or "
                                  "delete it and the query's pull files to pull afresh") from exc
        if torn:
            os.truncate(cp.path, len(raw) - len(torn))
        return cp

    def _apply(self, rec: dict[str, Any], n: int) -> None:
        if n == 1:
            if rec.get("format") != CHECKPOINT_FORMAT:
                raise ValueError(f"format is {rec.get('format')!r}, not {CHECKPOINT_FORMAT!r}")
            self.pulls = int(rec["pulls"])
            self.marks = {k: Mark(float(m["created_utc"]), frozenset(m["ids"])) for k, m in rec["marks"].items()}
            return
        p = self.progress_of(rec["q"])
        p.after, p.new, p.seen = rec["after"], int(rec["new"]), int(rec["seen"])
        if rec.get("done"):
            p.done, p.stopped_at_mark = True, bool(rec.get("stopped"))
            return
        p.ids.add(rec["id"])
        self.bytes = int(rec["bytes"])
        self._advance(rec["q"], float(rec["created_utc"]), rec["id"])

    def _advance(self, key: str, created: float, item_id: str) -> None:
        cur = self.newest.get(key)
        if cur is None or created > cur.created_utc:
            self.newest[key] = Mark(created, frozenset([item_id]))
        elif created == cur.created_utc:
            self.newest[key] = Mark(created, cur.ids | {item_id})

    def progress_of(self, key: str) -> Progress:
        return self.progress.setdefault(key, Progress())

    def _append(self, rec: dict[str, Any]) -> None:
        if self._log is None:
            if not self.path.is_file():
                self._snapshot()
            self._log = open(self.path, "ab")
        self._log.write(json.dumps(rec, ensure_ascii=False).encode() + b"\n")
        self._log.flush()

    def item_kept(self, key: str, p: Progress, item_id: str, created: float, nbytes: int) -> None:
        """Log an item whose rows are in the `.part` file up to `nbytes`: from now on it is handed on."""
        self._append({"q": key, "id": item_id, "created_utc": created, "after": p.after, "new": p.new,
                      "seen": p.seen, "bytes": nbytes})
        self.bytes = nbytes
        self._advance(key, created, item_id)

    def query_done(self, key: str, p: Progress) -> None:
        self._append({"q": key, "done": True, "after": p.after, "new": p.new, "seen": p.seen,
                      "stopped": p.stopped_at_mark})

    def commit(self, pull: int | None) -> None:
        """End the open pull: with a number, its marks join the committed ones; None = nothing was new."""
        if pull is not None:
            for key, new in self.newest.items():
                old = self.marks.get(key)
                if old is None or new.created_utc > old.created_utc:
                    self.marks[key] = new
                elif new.created_utc == old.created_utc:
                    self.marks[key] = Mark(old.created_utc, old.ids | new.ids)
            self.pulls = pull
        self.close()
        self._snapshot()
        self.progress, self.newest, self.bytes = {}, {}, 0

    def _snapshot(self) -> None:
        marks = {k: {"created_utc": m.created_utc, "ids": sorted(m.ids)} for k, m in sorted(self.marks.items())}
        write_atomic(self.path, (json.dumps({"format": CHECKPOINT_FORMAT, "pulls": self.pulls, "marks": marks},
                                            ensure_ascii=False) + "\n").encode("utf-8"))

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


@dataclass
class PullResult:
    """What one pull did: its new file (None when nothing was new), every committed pull file (what a build
    reads, oldest first), and its counts."""

    path: Path | None
    files: list[Path]
    pull: int | None
    new_items: int
    rows: int
    skipped_seen: int
    queries: int
    query: dict[str, Any]
    resumed: bool

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "files": [str(f) for f in self.files],
                "pull": self.pull, "new_items": self.new_items, "rows": self.rows,
                "skipped_seen": self.skipped_seen, "queries": self.queries, "query": self.query,
                "resumed": self.resumed}


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ScrapeError(f"{path}: another pull of this query is running; wait for it to end") from None
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def pull_file(out_dir: Path, digest: str, k: int) -> Path:
    return out_dir / f"praw-{digest}-{k:04d}.jsonl"


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def _committed_files(out: Path, digest: str, cp: Checkpoint) -> list[Path]:
    """Pull files 1..k, finishing a commit cut short before its rename; refuses a broken history."""
    files = [pull_file(out, digest, i) for i in range(1, cp.pulls + 1)]
    if files and not files[-1].is_file() and _part(files[-1]).is_file():
        place(_part(files[-1]), files[-1])
    missing = [f.name for f in files if not f.is_file()]
    if missing:  # their items are behind the checkpoint and would never be read again
        raise ScrapeError(f"{out}: committed pull file(s) {missing} are gone; restore them, or delete "
                          f"{cp.path.name} and praw-{digest}-*.* to pull afresh")
    stray = pull_file(out, digest, cp.pulls + 1)
    if stray.is_file():
        raise ScrapeError(f"{stray}: exists, but {cp.path.name} records only {cp.pulls} pull(s); restore the "
                          "checkpoint or move the file away")
    return files


def _open_part(part: Path, nbytes: int, checkpoint: Path) -> BinaryIO:
    """The open pull's data file, cut back to what the checkpoint covers."""
    size = part.stat().st_size if part.is_file() else 0
    if size < nbytes:
        raise ScrapeError(f"{part}: {size} bytes, but {checkpoint.name} says {nbytes} were written; delete "
                          f"{part.name} and every line after the first of {checkpoint.name} to redo this pull")
    with open(part, "ab") as fh:
        fh.truncate(nbytes)
    return open(part, "ab")


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def pull(cfg: SourcesConfig, terms: list[str], out_dir: str | Path, reddit: Any | None = None, *,
         sleep: Callable[[float], None] = time.sleep, log: Callable[[str], None] = _stderr) -> PullResult:
    """Pull what is newer than the query's checkpoint into `praw-<hash>-<k:04d>.jsonl` (resuming an
    interrupted pull k); `terms` are the search terms (`search_terms(cfg)`), none for a listing."""
    params = query_record(cfg, terms)
    digest = query_digest(params)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with _locked(out / f"praw-{digest}.lock"):
        cp = Checkpoint.load(out / f"praw-{digest}.checkpoint.jsonl")
        try:
            return _pull(cfg, terms, out, cp, reddit, sleep, log)
        finally:
            cp.close()


def _pull(cfg: SourcesConfig, terms: list[str], out: Path, cp: Checkpoint, reddit: Any | None,
          sleep: Callable[[float], None], log: Callable[[str], None]) -> PullResult:
    params = query_record(cfg, terms)
    digest = query_digest(params)
    files = _committed_files(out, digest, cp)
    k = cp.pulls + 1
    path = pull_file(out, digest, k)
    part = _part(path)
    resumed = bool(cp.progress)
    log(f"[scrape] pull {k} of {params['listing']} {','.join(params['subreddits'])} -> {path.name}"
        f"{' (resuming an interrupted pull)' if resumed else ''}; {len(cp.marks)} queries have a checkpoint")
    scraper = Scraper(reddit if reddit is not None else make_reddit(cfg), cfg, sleep)
    qs = queries(cfg, terms)
    started = time.perf_counter()
    with _open_part(part, cp.bytes, cp.path) as data:
        def hand_on(q: Query, p: Progress, item_id: str, created: float, rows: list[dict[str, Any]]) -> None:
            blob = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows)
            data.write(blob)  # rows first, their log line second: see the module docstring
            data.flush()
            cp.item_kept(q.key, p, item_id, created, cp.bytes + len(blob))

        for i, q in enumerate(qs, 1):
            p = cp.progress_of(q.key)
            if not p.done:
                scraper.run_query(q, p, cp.marks.get(q.key), hand_on, where=str(cp.path))
                cp.query_done(q.key, p)
            log(_progress_line(cp, i, len(qs), q, started))
        data.flush()
        os.fsync(data.fileno())
    new = sum(p.new for p in cp.progress.values())
    seen = sum(p.seen for p in cp.progress.values())
    n_queries = len(cp.progress)
    if cp.bytes == 0:  # nothing new: no file, no number used, so a rebuild sees no new input
        part.unlink(missing_ok=True)
        cp.commit(None)
        new_path, rows, number = None, 0, None
    else:
        rows = _count_lines(part)
        write_json(path.with_suffix(".query.json"), {**params, "pull": k, "new_items": new, "skipped_seen": seen},
                   indent=1)
        cp.commit(k)
        place(part, path)
        files, new_path, number = files + [path], path, k
    log(f"[scrape] pull {k}: {new:,} new items ({rows:,} rows) -> "
        f"{new_path.name if new_path else 'no new file'}; {seen:,} skipped as already seen")
    return PullResult(new_path, files, number, new, rows, seen, n_queries, params, resumed)


def _progress_line(cp: Checkpoint, i: int, total: int, q: Query, started: float) -> str:
    states = cp.progress.values()
    new, seen = sum(s.new for s in states), sum(s.seen for s in states)
    st = cp.progress_of(q.key)
    rate = (new + seen) / max(time.perf_counter() - started, 1e-9)
    stop = ", stopped at the checkpoint" if st.stopped_at_mark else ""
    return (f"[scrape] queries {i}/{total}  new {new:,}  already seen {seen:,}  {rate:,.1f} items/s  "
            f"{q.key}: {st.new} new, {st.seen} already seen{stop}")
