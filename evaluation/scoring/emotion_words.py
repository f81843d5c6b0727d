"""The emotion-word rate (EWRate): the share of a run's answers that are words of the vocabulary.

VRate counts answers of the right shape. A model held to a list by structured decoding gives one
for every row, and may fill it with any words (`weirdweek`, `word`, `sentence`): VRate 1.0 with no
emotion word in sight. EWRate says so. Its denominator is the answered words of valid rows, as for
F1V; a word counts when the shipped vocabulary maps it to a label (a canonical label or one of its
variants; an excluded lexicon string is no emotion word).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from schemas.vocabulary import Vocabulary, default_vocabulary

# The report flags a run whose answers have the right shape (VRate at least VRATE_HIGH) but are
# mostly not emotion words (EWRate below EWRATE_LOW). Why these values: docs/evaluation.md.
VRATE_HIGH = 0.9
EWRATE_LOW = 0.5
TOP_OTHER = 10  # the commonest answers that are no emotion word, shown with the flag


def is_emotion_word(word: str, vocabulary: Vocabulary) -> bool:
    return vocabulary.canonical(word) is not None


def emotion_words(parsed: list[str] | None, valid: bool, vocabulary: Vocabulary | None = None) -> int:
    """How many words of a valid row's answer are vocabulary words (0 for an invalid row)."""
    vocab = vocabulary or default_vocabulary()
    return sum(is_emotion_word(w, vocab) for w in parsed or []) if valid else 0


def flagged(vrate: float, ewrate: float | None) -> bool:
    """Answers of the right shape that are mostly not emotion words."""
    return ewrate is not None and vrate >= VRATE_HIGH and ewrate < EWRATE_LOW


def summary(rows: Iterable[tuple[list[str], list[str] | None]], vrate: float,
            vocabulary: Vocabulary | None = None) -> dict[str, Any]:
    """EWRate of (gold, parsed) rows with its counts, the commonest answers outside the vocabulary and
    the flag (analysis.json `emotion_words`)."""
    vocab = vocabulary or default_vocabulary()
    answers = hits = 0
    other: Counter[str] = Counter()
    for gold, parsed in rows:
        valid = parsed is not None and len(parsed) == len(gold)
        hits += emotion_words(parsed, valid, vocab)
        if valid:
            answers += len(gold)
            other.update(w.strip().lower() for w in parsed or [] if not is_emotion_word(w, vocab))
    rate = hits / answers if answers else None
    return {"EWRate": rate, "answers": answers, "emotion_words": hits, "vocabulary": vocab.version,
            "not_emotion_words": [[w, c] for w, c in other.most_common(TOP_OTHER)],
            "thresholds": {"VRate_high": VRATE_HIGH, "EWRate_low": EWRATE_LOW}, "flagged": flagged(vrate, rate)}
