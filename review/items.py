"""Review items: one per mask of a release, with an identity that survives a rebuild.

A mask is identified by its post, its word (normalised) and which occurrence of that word it is
among the post's masks (before review). Offsets are kept for display only: a new segmentation or
PII scrubbing moves them, so matching (apply.py) falls back on the words around the mask.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from schemas.records import MASK
from warehouse.layout import Warehouse

CONTEXT_WORDS = 5  # words kept each side of a mask to recognise it again
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*")  # letters (any script), inner apostrophes
# PII placeholders ([USER], [EMAIL], <PERSON>, ...) and the mask token are not context: a change of
# scrubber changes them.
_PLACEHOLDER = re.compile(r"\[[A-Z_]+\]|<[A-Za-z_]+>")
_CONTEXT_CHARS = 160


def normalize_surface(surface: str) -> str:
    """The word as matching sees it: NFKC, case-folded, straight apostrophes, single spaces."""
    s = unicodedata.normalize("NFKC", surface).replace("\u2019", "'").casefold()
    return " ".join(s.split())


def make_item_id(post_id: str, surface: str, occurrence: int) -> str:
    key = f"{post_id}\x1f{normalize_surface(surface)}\x1f{occurrence}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def context_words(text: str, start: int, end: int, n: int = CONTEXT_WORDS) -> tuple[list[str], list[str]]:
    """Up to `n` lower-cased words left and right of text[start:end], placeholders left out."""
    left = _PLACEHOLDER.sub(" ", text[max(0, start - _CONTEXT_CHARS):start])
    right = _PLACEHOLDER.sub(" ", text[end:end + _CONTEXT_CHARS])
    lw = [w.replace("\u2019", "'").casefold() for w in _WORD.findall(left)]
    rw = [w.replace("\u2019", "'").casefold() for w in _WORD.findall(right)]
    return lw[-n:], rw[:n]


def mask_spans(text: str, masked_text: str, surfaces: Sequence[str], mask: str = MASK) -> list[tuple[int, int]]:
    """(start, end) in `text` of each mask of `masked_text`, in order; ValueError if they disagree."""
    spans = []
    pos_t = pos_m = 0
    for j, surface in enumerate(surfaces):
        i = masked_text.find(mask, pos_m)
        if i < 0:
            raise ValueError(f"mask {j} ('{surface}') is missing from the masked text")
        prefix = masked_text[pos_m:i]
        start = pos_t + len(prefix)
        end = start + len(surface)
        if text[pos_t:start] != prefix or text[start:end] != surface:
            raise ValueError(f"mask {j} ('{surface}') does not line up with the text")
        spans.append((start, end))
        pos_t, pos_m = end, i + len(mask)
    if masked_text[pos_m:] != text[pos_t:]:
        raise ValueError("text after the last mask differs from the masked text")
    return spans


@dataclass
class ReviewItem:
    """One mask to review: where it is shown (segment text and span) and who it is (identity)."""

    item_id: str
    dataset: str
    release: str  # DATASET/VERSION the item was exported from
    post_id: str
    segment_index: int
    text: str
    start: int
    end: int
    surface: str
    pattern: str
    rule: str
    label: str
    negated: bool | None
    occurrence: int  # which occurrence of this word among the post's masks (0-based)
    occurrences: int  # how many masks of the post have this word
    left: list[str] = field(default_factory=list)
    right: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> "ReviewItem":
        return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row})

    def identity(self) -> dict[str, Any]:
        """What a ledger line keeps of the item: enough to find the same word again."""
        return {"post_id": self.post_id, "surface": self.surface, "occurrence": self.occurrence,
                "occurrences": self.occurrences, "left": list(self.left), "right": list(self.right),
                "pattern": self.pattern, "rule": self.rule, "label": self.label, "negated": self.negated,
                "release": self.release}


@dataclass
class ExportResult:
    items: list[ReviewItem]
    masks: int  # masks read (a mask shown in two overlapping segments counts twice)
    unaligned: int  # masks whose text and masked text disagree (left out, never silently)
    post_level: bool  # rule/negated and occurrences came from the run's post-level disclosures


@dataclass(frozen=True)
class _PostMask:
    start: int
    end: int
    surface: str
    rule: str
    negated: bool


def release_items(release: Any, warehouse_root: Path) -> ExportResult:
    """Every mask of a release as a ReviewItem (one per post-level mask), read with DuckDB."""
    import duckdb

    manifest = release.manifest()
    files = [str(p) for p in release.split_files().values()]
    keep_negated = bool(manifest.get("config", {}).get("extract", {}).get("keep_negated", False))
    found = _run_disclosures(warehouse_root, manifest, keep_negated)
    con = duckdb.connect()
    try:
        paths = ", ".join("'" + f.replace("'", "''") + "'" for f in files)  # a bound list param imports pandas
        rel = con.execute(
            "SELECT post_id, segment_index, text, masked_text, surfaces, labels, patterns "
            f"FROM read_parquet([{paths}]) ORDER BY post_id, segment_index")
        rows = _batched_rows(rel)
        items: list[ReviewItem] = []
        masks = unaligned = 0
        release_id = f"{release.dataset}/{release.version}"
        for post_id, segs in _group_by_post(rows):
            got, n_masks, bad = _post_items(release.dataset, release_id, post_id, segs, (found or {}).get(post_id))
            items.extend(got)
            masks += n_masks
            unaligned += bad
    finally:
        con.close()
    return ExportResult(items, masks, unaligned, post_level=found is not None and bool(found))


def _batched_rows(rel: Any) -> Iterator[tuple]:
    while True:
        chunk = rel.fetchmany(2048)
        if not chunk:
            return
        yield from chunk


def _group_by_post(rows: Iterable[tuple]) -> Iterator[tuple[str, list[tuple]]]:
    current, group = None, []
    for row in rows:
        if row[0] != current and group:
            yield current, group
            group = []
        current = row[0]
        group.append(row)
    if group:
        yield current, group


def _run_disclosures(root: Path, manifest: dict[str, Any], keep_negated: bool) -> dict[str, list[_PostMask]] | None:
    """The post-level masks (before review) of the run that built the release, if it is still there:
    they give rule and negation, and let overlapping segments be told apart."""
    run_id = manifest.get("run_id")
    if not run_id:
        return None
    path = Warehouse(Path(root)).run(str(run_id)).disclosures
    if not path.exists():
        return None
    from common.parquet import iter_tuples

    out: dict[str, list[_PostMask]] = {}
    for post_id, found in iter_tuples(path, ["post_id", "disclosures"]):
        kept = [_PostMask(d["start"], d["end"], d["surface"], d.get("rule") or "", bool(d.get("negated")))
                for d in found or [] if keep_negated or not d.get("negated")]
        if kept:
            out[post_id] = sorted(kept, key=lambda d: d.start)
    return out


def _post_items(dataset: str, release_id: str, post_id: str, segs: list[tuple],
                pre: list[_PostMask] | None) -> tuple[list[ReviewItem], int, int]:
    """Items of one post from its example rows; `pre` are its post-level masks when known."""
    shown: dict[Any, tuple] = {}  # post-level key -> (segment row, j, span, post mask or None)
    masks = bad = after = 0
    for seg in segs:
        _, segment_index, text, masked, surfaces, labels, patterns = seg
        masks += len(surfaces)
        try:
            spans = mask_spans(text, masked, surfaces)
        except ValueError:
            bad += len(surfaces)
            continue
        offset = _segment_offset(text, spans, surfaces, pre, after) if pre else None
        if offset is not None:
            after = offset
        for j, (s, e) in enumerate(spans):
            if offset is not None:
                pm = next(d for d in pre if d.start == offset + s)
                key: Any = ("post", pm.start)
            else:
                pm = None
                left, right = context_words(text, s, e)
                key = ("ctx", normalize_surface(surfaces[j]), tuple(left), tuple(right))
            shown.setdefault(key, (seg, j, (s, e), pm))
    # occurrences among the post's masks: post-level when known, else in order of appearance
    by_word: dict[str, list[Any]] = defaultdict(list)
    if pre and all(k[0] == "post" for k in shown):
        for d in pre:
            by_word[normalize_surface(d.surface)].append(("post", d.start))
    else:
        for key, (seg, j, _, _) in shown.items():
            by_word[normalize_surface(seg[4][j])].append(key)
    items = []
    for key, (seg, j, (s, e), pm) in shown.items():
        _, segment_index, text, _, surfaces, labels, patterns = seg
        word = normalize_surface(surfaces[j])
        same = by_word[word]
        k = same.index(key)
        left, right = context_words(text, s, e)
        items.append(ReviewItem(
            item_id=make_item_id(post_id, surfaces[j], k), dataset=dataset, release=release_id,
            post_id=post_id, segment_index=int(segment_index), text=text, start=s, end=e,
            surface=surfaces[j], pattern=patterns[j] if j < len(patterns) else "",
            rule=pm.rule if pm else "", label=labels[j] if j < len(labels) else "",
            negated=pm.negated if pm else None, occurrence=k, occurrences=len(same), left=left, right=right))
    return items, masks, bad


def _segment_offset(text: str, spans: list[tuple[int, int]], surfaces: Sequence[str], pre: list[_PostMask],
                    after: int) -> int | None:
    """Where the segment starts in its post: a shift that puts every mask on a post-level mask of
    the same word, at or after the previous segment's start (windows come in post order); the one
    leaving fewest post-level masks unmasked inside the window wins, then the earliest."""
    if not spans:
        return None
    starts = {d.start: d for d in pre}
    best: tuple[int, int] | None = None
    first = normalize_surface(surfaces[0])
    for d in pre:
        lo = d.start - spans[0][0]
        if lo < after or normalize_surface(d.surface) != first:
            continue
        ok = all((m := starts.get(lo + s)) is not None and m.end == lo + e
                 and normalize_surface(m.surface) == normalize_surface(w)
                 for (s, e), w in zip(spans, surfaces))
        if ok:
            extra = sum(1 for m in pre if lo <= m.start and m.end <= lo + len(text)) - len(spans)
            if best is None or (extra, lo) < best:
                best = (extra, lo)
    return best[1] if best else None


def select_items(items: list[ReviewItem], sample: int | None, seed: int = 0,
                 stratify: str | None = None) -> list[ReviewItem]:
    """A reproducible sample in a seeded random order (so a partly done review is a random sample).

    With `stratify` (label, rule or pattern) the sample is split across strata in proportion to
    their size (largest remainder), every stratum getting at least one item while there is room."""
    ordered = sorted(items, key=lambda it: _rank(seed, it.item_id))
    if sample is None or sample >= len(ordered):
        return ordered
    if not stratify:
        return ordered[:sample]
    if stratify not in ("label", "rule", "pattern"):
        raise ValueError(f"--stratify must be label, rule or pattern, not {stratify!r}")
    strata: dict[str, list[ReviewItem]] = defaultdict(list)
    for it in ordered:
        strata[getattr(it, stratify) or "(none)"].append(it)
    quota = _allocate({k: len(v) for k, v in strata.items()}, sample)
    chosen = {it.item_id for k, v in strata.items() for it in v[:quota[k]]}
    return [it for it in ordered if it.item_id in chosen]


def _allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    total = sum(sizes.values())
    names = sorted(sizes, key=lambda k: (-sizes[k], k))
    quota = {k: 0 for k in names}
    for k in names[:n]:  # one each first, largest strata first
        quota[k] = 1
    left = n - sum(quota.values())
    if left <= 0:
        return quota
    room = total - sum(quota.values())
    share = {k: (sizes[k] - quota[k]) * left / room for k in names}
    for k in names:
        quota[k] += min(int(share[k]), sizes[k] - quota[k])
    rest = n - sum(quota.values())
    order = sorted(names, key=lambda k: (-(share[k] - int(share[k])), k))
    while rest > 0:  # n < total, so some stratum always has room
        for k in order:
            if rest > 0 and quota[k] < sizes[k]:
                quota[k] += 1
                rest -= 1
    return quota


def _rank(seed: int, item_id: str) -> str:
    return hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()
