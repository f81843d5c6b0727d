"""The examples a report shows: a deterministic sample per top label, and the masks the acceptance
model was least sure of ("look at these first"), each as a short snippet around its mask."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.records import MASK
from warehouse.layout import Warehouse
from warehouse.releases.release import Release
from common.duck import sql_path, sql_str
from warehouse.releases.stats import connect, union_sql

CONTEXT_WORDS = 25  # words kept each side of the highlighted mask
LIST_CONTEXT_WORDS = 14  # in the "look at these first" list
_TOKEN = re.compile(r"\s+|\S+")


@dataclass(frozen=True)
class Piece:
    text: str
    mask: str = ""  # "target" (the mask shown), "other" (another mask of the segment), "" (plain text)


@dataclass(frozen=True)
class Shown:
    """One example on the page: where it is from and its snippet, the shown mask highlighted."""

    post_id: str
    segment_index: int
    split: str
    subreddit: str
    label: str
    surface: str
    masks: int
    pieces: list[Piece]
    acceptance: float | None = None
    pattern: str = ""


def snippet(masked_text: str, surfaces: Sequence[str], target: int, context: int = CONTEXT_WORDS) -> list[Piece]:
    """The words around mask `target` of a segment, as written (spacing and punctuation kept), its
    masks filled with their words; the cut ends are marked with an ellipsis."""
    parts = masked_text.split(MASK)
    tokens: list[Piece] = []  # words, runs of spaces and masks, in order
    for j, part in enumerate(parts):
        tokens += [Piece(t) for t in _TOKEN.findall(part)]
        if j < len(parts) - 1:
            tokens.append(Piece(surfaces[j] if j < len(surfaces) else MASK, "target" if j == target else "other"))
    at = next((i for i, p in enumerate(tokens) if p.mask == "target"), 0)
    lo = _walk(tokens, at, -1, context)
    while lo and lo < at and not any(c.isalnum() for c in tokens[lo].text):  # a cut starts at a word
        lo += 1
    hi = _walk(tokens, at, 1, context)
    return ([Piece("… ")] if lo > 0 else []) + tokens[lo:hi + 1] + ([Piece(" …")] if hi < len(tokens) - 1 else [])


def _walk(tokens: list[Piece], at: int, step: int, words: int) -> int:
    """The index `words` words away from `at` in direction `step` (or the end)."""
    i, seen = at, 0
    while 0 <= i + step < len(tokens):
        if not tokens[i + step].text.isspace():
            if seen == words:
                break
            seen += 1
        i += step
    while tokens[i].text.isspace() and i != at:  # no dangling space at a cut
        i -= step
    return i


def label_examples(files: dict[str, Path], labels: Sequence[str], per_label: int = 3) -> dict[str, list[Shown]]:
    """`per_label` segments of each label, the same ones for the same release: ordered by an MD5 of
    (post id, segment, label)."""
    if not labels or not files:
        return {}
    wanted = ", ".join(sql_str(w) for w in labels)
    con = connect()
    try:
        con.execute(f"CREATE TEMP VIEW ex AS {union_sql(files)}")
        rows = con.execute(
            "WITH hits AS (SELECT split, post_id, segment_index, unnest(list_distinct(labels)) AS l FROM ex), "
            "picks AS (SELECT *, row_number() OVER (PARTITION BY l ORDER BY md5(post_id || ':' || segment_index "
            f"|| ':' || l)) AS rn FROM hits WHERE l IN ({wanted})) "
            "SELECT p.l, e.split, e.post_id, e.segment_index, e.subreddit, e.masked_text, e.surfaces, e.labels "
            f"FROM picks p JOIN ex e USING (split, post_id, segment_index) WHERE p.rn <= {int(per_label)} "
            "ORDER BY p.l, p.rn").fetchall()
    finally:
        con.close()
    out: dict[str, list[Shown]] = {w: [] for w in labels}
    for label, split, post_id, seg, sub, masked, surfaces, row_labels in rows:
        j = list(row_labels).index(label)
        out[label].append(Shown(post_id, int(seg), split, sub, label, surfaces[j], len(row_labels),
                                snippet(masked, surfaces, j)))
    return out


@dataclass(frozen=True)
class LowestAcceptance:
    """The masks with the lowest acceptance scores, or why there are none to show."""

    shown: list[Shown]
    threshold: float | None
    scored: int  # masks of the release's posts that carry a score
    missing: str = ""  # why no scores could be read


def lowest_acceptance(release: Release, manifest: dict[str, Any], n: int = 10) -> LowestAcceptance:
    """The `n` released masks the acceptance model scored lowest, from the run's disclosures table."""
    acc = manifest.get("acceptance")
    threshold = acc.get("threshold") if isinstance(acc, dict) else None
    run_id = manifest.get("run_id")
    if not acc:
        return LowestAcceptance([], None, 0, "The acceptance model was off for this build: masks carry no score.")
    path = Warehouse.of_release(release.path).run(str(run_id)).disclosures if run_id else None
    if path is None or not path.exists():
        return LowestAcceptance([], threshold, 0, f"The run that built this release (runs/{run_id}) is no longer "
                                                  "in the warehouse, and with it the acceptance scores.")
    keep_negated = bool(((manifest.get("config") or {}).get("extract") or {}).get("keep_negated"))
    negated = "" if keep_negated else "AND NOT coalesce(d.negated, false)"
    con = connect()
    try:
        con.execute(f"CREATE TEMP VIEW ex AS {union_sql(release.split_files())}")
        con.execute(
            "CREATE TEMP TABLE hits AS SELECT post_id, d.surface AS surface, d.label AS label, "
            "d.acceptance AS acceptance, d.pattern AS pattern, d.start AS start, row_number() OVER "
            "(PARTITION BY post_id, lower(d.surface) ORDER BY d.start) - 1 AS occurrence "
            f"FROM (SELECT post_id, unnest(disclosures) AS d FROM read_parquet({sql_path(path)})) "
            f"WHERE d.acceptance IS NOT NULL {negated} AND post_id IN (SELECT post_id FROM ex)")
        scored = con.execute("SELECT count(*) FROM hits").fetchone()[0]
        hits = con.execute("SELECT post_id, surface, label, acceptance, pattern, occurrence FROM hits "
                           f"ORDER BY acceptance, post_id, start LIMIT {int(n) * 3}").fetchall()
        posts = sorted({h[0] for h in hits})
        segments = con.execute(
            "SELECT post_id, split, segment_index, subreddit, masked_text, surfaces, labels FROM ex "
            f"WHERE post_id IN ({', '.join(sql_str(p) for p in posts) or 'NULL'}) ORDER BY post_id, segment_index"
        ).fetchall() if posts else []
    finally:
        con.close()
    by_post: dict[str, list[tuple]] = {}
    for row in segments:
        by_post.setdefault(row[0], []).append(row)
    shown = []
    for post_id, surface, label, score, pattern, occurrence in hits:
        found = _find_mask(by_post.get(post_id, []), surface, occurrence)
        if found is None:  # not masked in the release (e.g. a reviewer rejected it)
            continue
        (_, split, seg, sub, masked, surfaces, labels), j = found
        shown.append(Shown(post_id, int(seg), split, sub, labels[j], surfaces[j], len(labels),
                           snippet(masked, surfaces, j, LIST_CONTEXT_WORDS), float(score), pattern or ""))
        if len(shown) == n:
            break
    return LowestAcceptance(shown, threshold, int(scored))


def _find_mask(segments: list[tuple], surface: str, occurrence: int) -> tuple[tuple, int] | None:
    """The segment and mask index of the `occurrence`-th mask of `surface` in a post (segments in
    order; the first one when overlapping segments make the count run past it)."""
    first, seen = None, 0
    for row in segments:
        for j, s in enumerate(row[5]):
            if s.lower() == surface.lower():
                if seen == occurrence:
                    return row, j
                first = first or (row, j)
                seen += 1
    return first
