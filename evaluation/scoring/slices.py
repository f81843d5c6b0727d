"""Scores of a slice of a run's stored rows: the rows of a window, of one month of posting, those
posted after the model's knowledge cutoff. One shape for every slice (the leaderboard's rows, the run's
months, a page's chart): the four metrics, the emotion-word rate, and seeded bootstrap intervals drawn
with the run's own resamples and seed, so the same rows always give the same interval.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from evaluation.live.window import iso
from evaluation.scoring.emotion_words import other_words, summary
from evaluation.scoring.metrics import RowScore, aggregate, score_row
from evaluation.scoring.stats import bootstrap_intervals, row_arrays
from schemas.lexicon import Decomposition
from schemas.vocabulary import Vocabulary, default_vocabulary

METRICS = ("AccL", "AccV", "F1V", "VRate")
LEVEL = 0.95


@dataclass(frozen=True)
class ScoredRow:
    """One stored answer, scored: when its post was written, its score, how many of its answered words
    are emotion words and which are not (none for an invalid row)."""

    created: int | None  # Unix seconds (None: a run stored before rows carried it)
    score: RowScore
    emotion_words: int
    others: tuple[str, ...] = ()


def score_rows(rows: Iterable[dict[str, Any]], dec: Decomposition,
               vocabulary: Vocabulary | None = None) -> list[ScoredRow]:
    """A run's stored rows (`surfaces`, `parsed`, `created_utc`), scored."""
    vocab = vocabulary or default_vocabulary()
    out = []
    for r in rows:
        s = score_row(r["surfaces"], r["parsed"], dec)
        created = r.get("created_utc")
        others = other_words(r["parsed"], s.valid, vocab)
        out.append(ScoredRow(None if created is None else int(created), s, s.masks - len(others) if s.valid else 0,
                             others))
    return out


def _answers(rows: Sequence[ScoredRow]) -> int:
    """The answered words of the valid rows: EWRate's denominator, as F1V's."""
    return sum(r.score.masks for r in rows if r.score.valid)


def emotion_word_summary(rows: Sequence[ScoredRow], vrate: float, vocabulary: Vocabulary | None = None) -> dict[str, Any]:
    """The run's emotion-word rate with its counts, the commonest other answers and the flag."""
    return summary(_answers(rows), sum(r.emotion_words for r in rows), Counter(w for r in rows for w in r.others),
                   vrate, vocabulary)


def slice_scores(rows: Sequence[ScoredRow], samples: int, seed: int) -> dict[str, Any]:
    """rows, masks, AccL, AccV, F1V, VRate, EWRate (None without a valid row) and their intervals
    (`intervals`: [low, high] per metric, None when no resample was drawn)."""
    point = aggregate(r.score for r in rows)
    answers = _answers(rows)
    drawn = bootstrap_intervals(row_arrays([r.score for r in rows]), samples, seed, LEVEL) if rows else {}
    return {"rows": len(rows), "masks": point["masks"],
            **{m: point[m] if rows else None for m in METRICS},
            "EWRate": sum(r.emotion_words for r in rows) / answers if answers else None,
            "intervals": {"level": LEVEL, "samples": samples, "seed": seed, **{m: drawn.get(m) for m in METRICS}}}


def window_scores(rows: Sequence[ScoredRow], cutoff: int | None, samples: int, seed: int) -> dict[str, Any]:
    """A leaderboard row's numbers: the slice's scores, the model's cutoff, and the scores of the rows
    posted on or after it (`after_cutoff`, None without a cutoff)."""
    after = [r for r in rows if r.created is not None and cutoff is not None and r.created >= cutoff]
    return {**slice_scores(rows, samples, seed), "cutoff": None if cutoff is None else iso(cutoff),
            "after_cutoff": None if cutoff is None else slice_scores(after, samples, seed)}


def month(ts: int) -> str:
    """The UTC month of posting, as `express releases` counts them: `2024-01`."""
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m")


def month_scores(rows: Sequence[ScoredRow], samples: int, seed: int) -> dict[str, dict[str, Any]]:
    """The slice's scores per month of posting, in order (rows without a posting time are left out)."""
    groups: dict[str, list[ScoredRow]] = {}
    for r in rows:
        if r.created is not None:
            groups.setdefault(month(r.created), []).append(r)
    return {m: slice_scores(groups[m], samples, seed) for m in sorted(groups)}


def span(rows: Sequence[ScoredRow]) -> dict[str, str] | None:
    """When the first and the last of the rows were posted (None when none says)."""
    times = [r.created for r in rows if r.created is not None]
    return {"first": iso(min(times)), "last": iso(max(times))} if times else None
