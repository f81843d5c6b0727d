"""Why answers were invalid: each invalid row gets a shape (prose, too many words, an unfinished
list, ...), and a run lists the commonest shapes with examples, so a user sees what the model did."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

EXAMPLE_CHARS = 160


def shape(row: dict[str, Any]) -> str | None:
    """The shape of a row's answer, or None when it is valid."""
    gold, parsed, out = row["surfaces"], row.get("parsed"), (row.get("output") or "").strip()
    if parsed is not None and len(parsed) == len(gold):
        return None
    if row.get("error"):
        return "request failed"
    if not out:
        return "empty answer"
    if parsed is not None:
        return "too many words" if len(parsed) > len(gold) else "too few words"
    if "<mask>" in out:
        return "repeated the text"
    if out[0] in "[{(\"'`":
        return "unfinished or malformed list"
    return "prose, no list"


def invalid_shapes(rows: Iterable[dict[str, Any]], top: int = 5, examples: int = 2) -> list[dict[str, Any]]:
    """The commonest invalid shapes, each with how many rows and a few shortened answers."""
    counts: Counter[str] = Counter()
    seen: dict[str, list[str]] = {}
    for row in rows:
        kind = shape(row)
        if kind is None:
            continue
        counts[kind] += 1
        answer = row.get("error") or (row.get("output") or "")
        if len(seen.setdefault(kind, [])) < examples:
            text = " ".join(answer.split())
            seen[kind].append(text if len(text) <= EXAMPLE_CHARS else text[:EXAMPLE_CHARS - 3] + "...")
    return [{"shape": k, "rows": n, "examples": seen[k]} for k, n in counts.most_common(top)]
