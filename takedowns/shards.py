"""Takedowns in what builds stored: shard folders, folders of re-derived labels and a run's assembled
tables are rewritten as if each taken-down post had been dropped for `takedown` when it was read,
so every funnel still adds up and a later rebuild can reuse them.

- posts.parquet keeps the post's row, emptied (no id, no text): dedupe's row numbers and key files
  stay aligned, and extraction drops such a row for takedown (pipeline/extract_shards.py);
- a quarantine row of the post becomes a takedown row without id or text, and the step that
  dropped it counts it for takedown instead; a row holding its text under another id loses the text;
- examples and disclosures lose its rows, and extraction counts it for takedown instead of kept;
- its raw line in lines.jsonl.zst becomes the tombstone a build writes at read (pipeline/shards.py:
  TAKEN_DOWN), and its id leaves nsfw-submissions.txt.

What is taken down is what the ledger's one matcher finds (common/matching/takedowns.py): a post by id,
by author, or by its text (a repost under another id, resolved into the ledger by apply).

A folder's files change together (common/files.py: commit_together), and a stamp names the
takedowns it was rewritten for: a rerun after a kill finishes the job, a folder done is skipped.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import zstandard

from common.files import commit_together, staged
from common.matching.reddit_ids import post_key
from common.matching.takedowns import TakedownMatcher, hash_author
from pipeline.shards import TAKEN_DOWN, ShardPaths
from pipeline.steps import marker
from schemas.records import QUARANTINE, TAKEDOWN, RawPost
from sources.dumps import iter_lines, parse_line
from warehouse.layout import RunPaths, quarantine_file

STAMP = "takedown.json"
TAG = "takedown"
QUARANTINES = {"ingest": "filter", "dedupe": "dedupe"}  # a shard's quarantine -> the step whose funnel counts it
KEEP_IN_EMPTIED = ("source_file", "source_line")  # where the dropped line was: no word of it
TEXT_COLUMNS = ("text", "title", "selftext")


def _blank(column: pa.ChunkedArray) -> pa.Scalar:
    t = column.type
    if pa.types.is_string(t):
        return pa.scalar("", t)
    if pa.types.is_boolean(t):
        return pa.scalar(False, t)
    return pa.scalar(0, t)


def _any(mask: Any) -> bool:
    return bool(pc.any(mask).as_py())


Origin = dict[str, tuple[str | None, int | None]]  # post (as matched) -> its input file and line


def empty_rows(path: Path, matcher: TakedownMatcher) -> tuple[pa.Table | None, Origin]:
    """posts.parquet with each taken-down post's row emptied in place (and another post's copy of
    a taken-down text blanked); where the posts it emptied were read. None when nothing changes."""
    t = pq.read_table(path)
    mask = pc.or_(matcher.id_mask(t["id"]), matcher.author_mask(t["author"]))
    copies = pc.and_(pc.invert(mask), matcher.rows_hit(t.select([c for c in TEXT_COLUMNS if c in t.column_names])))
    if not (_any(mask) or _any(copies)):
        return None, {}
    hit = t.filter(mask)
    ids = {post_key(i): (f, n) for i, f, n in zip(*(hit[c].to_pylist() for c in ("id", *KEEP_IN_EMPTIED)))}
    columns = []
    for name in t.column_names:
        col = t[name]
        if name not in KEEP_IN_EMPTIED:
            col = pc.if_else(mask, _blank(col), col)
        if name in TEXT_COLUMNS:
            col = pc.if_else(copies, pa.scalar("", col.type), col)
        columns.append(col)
    return pa.table(columns, schema=t.schema), ids


def convert_quarantine(path: Path, matcher: TakedownMatcher) -> tuple[pa.Table | None, Counter[str]]:
    """A quarantine file whose rows of taken-down posts are takedown rows without id or text, and
    whose rows holding a taken-down text (or line) under another id lost it; the reasons moved to takedown."""
    t = pq.read_table(path)
    mask = matcher.id_mask(t["post_id"])
    raw = [bool(v) and (matcher.line_hit(v.encode()) or matcher.text_hit(v)) for v in t["raw"].to_pylist()]
    copies = pc.and_(pc.invert(mask), pa.array(raw, pa.bool_()))
    if not (_any(mask) or _any(copies)):
        return None, Counter()
    moved = Counter(t["reason"].filter(mask).to_pylist())
    cols = {n: t[n] for n in t.column_names}
    cols["reason"] = pc.if_else(mask, pa.scalar(TAKEDOWN, pa.string()), t["reason"])
    cols["post_id"] = pc.if_else(mask, pa.scalar(None, pa.string()), t["post_id"])
    cols["raw"] = pc.if_else(pc.or_(mask, copies), pa.scalar(None, pa.string()), t["raw"])
    return pa.table(cols, schema=t.schema), moved


def without_rows(path: Path, matcher: TakedownMatcher) -> tuple[pa.Table | None, set[str]]:
    """A table keyed by post_id without the rows of taken-down posts; those posts (as matched)."""
    t = pq.read_table(path)
    mask = matcher.id_mask(t["post_id"])
    if not _any(mask):
        return None, set()
    return t.filter(pc.invert(mask)), {post_key(p) for p in t["post_id"].filter(mask).to_pylist()}


def takedown_rows(stage: str, posts: Iterable[str], origin: Origin) -> pa.Table:
    """A quarantine row per post counted for takedown instead of kept: where it was read, no id, no text."""
    rows = [(stage, TAKEDOWN, None, *origin.get(p, (None, None)), None) for p in sorted(posts)]
    return pa.Table.from_pylist([dict(zip(QUARANTINE.names, r)) for r in rows], schema=QUARANTINE)


def moved_to_takedown(funnel: dict[str, Any], moved: Counter[str], kept: int = 0) -> dict[str, Any]:
    """A funnel (marker form) with `moved` drops and `kept` kept posts counted for takedown instead."""
    dropped = Counter(funnel.get("dropped", {}))
    dropped.subtract(moved)
    dropped[TAKEDOWN] += sum(moved.values()) + kept
    return {**funnel, "kept": funnel["kept"] - kept, "dropped": dict(sorted((k, v) for k, v in dropped.items() if v))}


def _tombstoned(path: Path, dest: Path, matcher: TakedownMatcher) -> set[str] | None:
    """The shard's raw lines with each taken-down line (a post, its author's, or one holding its text)
    a tombstone, into `dest`; the ids of those lines' posts. None when no line is one."""
    found: dict[int, str] = {}
    for n, line in iter_lines(path):
        if line != TAKEN_DOWN and matcher.line_hit(line):
            rec = parse_line(line, str(path), n, "dump")
            found[n] = post_key(rec.id) if isinstance(rec, RawPost) else ""
    if not found:
        return None
    writer = zstandard.ZstdCompressor(level=1).compressobj()
    with open(dest, "wb") as fh:
        for n, line in iter_lines(path):
            fh.write(writer.compress((TAKEN_DOWN if n in found else line) + b"\n"))
        fh.write(writer.flush())
    return {pid for pid in found.values() if pid}


class FolderScrub:
    """The new versions of one folder's files, staged beside them, then committed together."""

    def __init__(self, folder: Path, matcher: TakedownMatcher):
        self.folder, self.matcher = folder, matcher
        self.changes: dict[Path, Path | None] = {}
        self.posts = 0  # taken-down posts whose rows left

    def write_table(self, path: Path, table: pa.Table | None) -> None:
        if table is not None:
            path.parent.mkdir(parents=True, exist_ok=True)  # a run published by apply has no quarantine folder
            pq.write_table(table, staged(path, TAG), compression="zstd")
            self.changes[path] = staged(path, TAG)

    def write_json(self, path: Path, data: Any, marker_form: bool = True) -> None:
        text = json.dumps(data, indent=1, sort_keys=True) if marker_form else json.dumps(data, indent=2)
        staged(path, TAG).write_text(text + "\n")
        self.changes[path] = staged(path, TAG)

    def adjust(self, path: Path, key: str | None, moved: Counter[str], kept: int = 0) -> None:
        """Count `moved` and `kept` for takedown in the funnel a marker (under `key`) or file holds."""
        if not (moved or kept) or not path.exists():
            return
        current = self.changes.get(path) or path
        data = json.loads(current.read_text())
        if key is None:
            self.write_json(path, moved_to_takedown(data, moved, kept), marker_form=False)
        else:
            self.write_json(path, {**data, key: moved_to_takedown(data[key], moved, kept)})

    def commit(self, stamp_unchanged: bool = True) -> bool:
        """Commit the staged files with the stamp (a folder left unchanged is stamped only when
        `stamp_unchanged`: a run's own tables are cheap to read again, a shard's lines are not)."""
        changed = bool(self.changes)
        if changed or stamp_unchanged:
            self.write_json(self.folder / STAMP, {"digest": self.matcher.digest})
        commit_together(self.folder, self.changes)
        return changed


def done_for(folder: Path, matcher: TakedownMatcher) -> bool:
    stamp = folder / STAMP
    return stamp.exists() and json.loads(stamp.read_text()).get("digest") == matcher.digest


def scrub_folder(folder: Path, matcher: TakedownMatcher) -> tuple[bool, set[str]]:
    """Rewrite one shard folder or labels folder (whichever of their files it holds); returns
    whether anything changed, and the ids of the taken-down posts it held (by author among them)."""
    if done_for(folder, matcher):
        return False, set()
    job, found, files = FolderScrub(folder, matcher), set(), ShardPaths(folder)
    if files.lines.exists():
        ids = _tombstoned(files.lines, staged(files.lines, TAG), matcher)
        if ids is not None:
            job.changes[files.lines] = staged(files.lines, TAG)
            found |= ids
    origin: Origin = {}
    if files.posts.exists():
        table, origin = empty_rows(files.posts, matcher.with_posts(found))
        job.write_table(files.posts, table)
        found |= set(origin)
    matcher = matcher.with_posts(found)
    for name, step in QUARANTINES.items():
        if files.quarantine(name).exists():
            table, moved = convert_quarantine(files.quarantine(name), matcher)
            job.write_table(files.quarantine(name), table)
            job.adjust(marker(folder, step), "funnel", moved)
    _scrub_nsfw_ids(job, files.nsfw_ids, matcher)
    _scrub_labels(job, files, matcher, origin, files.quarantine("extract"))
    return job.commit(), found


def _scrub_labels(job: FolderScrub, tables: ShardPaths | RunPaths, matcher: TakedownMatcher, origin: Origin,
                  quarantine: Path, assembled: bool = False) -> None:
    """Examples, disclosures and the extract quarantine of a labels folder (or, `assembled`, of a
    run), and the extract funnel its marker (and funnel file) holds."""
    folder, examples, disclosures = tables.root, tables.examples, tables.disclosures
    kept: set[str] = set()
    if examples.exists():
        table, kept = without_rows(examples, matcher)
        job.write_table(examples, table)
    if disclosures.exists():
        job.write_table(disclosures, without_rows(disclosures, matcher)[0])
    table, moved = convert_quarantine(quarantine, matcher) if quarantine.exists() else (None, Counter())
    if kept:
        base = table if table is not None else pq.read_table(quarantine) if quarantine.exists() else QUARANTINE.empty_table()
        table = pa.concat_tables([base.cast(QUARANTINE), takedown_rows("extract", kept, origin)])
    job.write_table(quarantine, table)
    job.adjust(marker(folder, "assemble" if assembled else "extract"), "extract" if assembled else "funnel",
               moved, len(kept))
    if assembled:
        job.adjust(RunPaths(folder).funnel("extract"), None, moved, len(kept))


def _scrub_nsfw_ids(job: FolderScrub, path: Path, matcher: TakedownMatcher) -> None:
    if not path.exists():
        return
    lines = path.read_text().splitlines()
    kept = [x for x in lines if not matcher.id_hit(x)]
    if len(kept) != len(lines):
        staged(path, TAG).write_text("".join(x + "\n" for x in kept))
        job.changes[path] = staged(path, TAG)


def scrub_run_tables(run: RunPaths, quarantine: Path, matcher: TakedownMatcher) -> bool:
    """A run's assembled tables (examples, disclosures, its quarantine) and the funnels its
    assemble marker and funnel files hold, as its scrubbed shards would assemble them."""
    if done_for(run.root, matcher):
        return False
    job = FolderScrub(run.root, matcher)
    ingest = quarantine_file(quarantine, "ingest")
    if ingest.exists():
        table, moved = convert_quarantine(ingest, matcher)
        job.write_table(ingest, table)
        job.adjust(marker(run.root, "assemble"), "ingest", moved)
        job.adjust(run.funnel("ingest"), None, moved)
    _scrub_labels(job, run, matcher, {}, quarantine_file(quarantine, "extract"), assembled=True)
    return job.commit(stamp_unchanged=False)


def stored_posts(folder: Path) -> Iterator[RawPost]:
    """The posts of a shard folder as read (its raw lines: the only place that keeps who wrote
    them, as the scrubber blanks the author of a kept post) and as kept (posts.parquet, scrubbed)."""
    files = ShardPaths(folder)
    if files.lines.exists():
        for n, line in iter_lines(files.lines):
            if line.strip() and line != TAKEN_DOWN and isinstance(rec := parse_line(line, str(folder), n, "dump"), RawPost):
                yield rec
    if files.posts.exists():
        names = ("id", "author", "text", "title", "selftext")
        t = pq.read_table(files.posts, columns=list(names))
        for values in zip(*(t[c].to_pylist() for c in names)):
            if values[0]:
                yield RawPost(**dict(zip(names, values)))


def author_posts(folders: Iterable[Path], matcher: TakedownMatcher) -> dict[str, str]:
    """post id (as matched) -> its author's hash, for every stored post of a taken-down author."""
    found: dict[str, str] = {}
    for folder in folders if matcher.authors else ():
        for post in stored_posts(folder):
            if post.id and matcher.author_hit(post.author):
                found[post_key(post.id)] = hash_author(matcher.key, post.author)  # type: ignore[arg-type]
    return found


def honour_in_shards(root: Path, shards: Iterable[Any]) -> int:
    """Before a rebuild reuses stored shards (pipeline.shards.Shard): take out what the takedown
    ledger names, as a build reading them now would; returns how many folders changed."""
    from warehouse.ledgers.takedowns import TakedownLedger

    taken = TakedownLedger(root).current()
    if not taken:
        return 0
    folders = list(dict.fromkeys(f for s in shards for f in (s.path, s.labels_dir) if f.is_dir()))
    matcher = taken.matcher()
    matcher = matcher.with_posts(author_posts(folders, matcher))
    return sum(scrub_folder(f, matcher)[0] for f in folders)
