"""The emotion-word rate (EWRate): the share of a run's answers that are words of the vocabulary.

VRate counts answers of the right shape. A model held to a list by structured decoding gives one
for every row, and may fill it with any words (`weirdweek`, `word`, `sentence`): VRate 1.0 with no
emotion word in sight. EWRate says so. Its denominator is the answered words of valid rows, as for
F1V; a word counts when the shipped vocabulary maps it to a label (a canonical label or one of its
variants; an excluded lexicon string is no emotion word).
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from schemas.vocabulary import Vocabulary, default_vocabulary

# The report flags a run whose answers have the right shape (VRate at least VRATE_HIGH) but are
# mostly not emotion words (EWRate below EWRATE_LOW). Why these values: docs/evaluation.md.
VRATE_HIGH = 0.9
EWRATE_LOW = 0.5
TOP_OTHER = 10  # the commonest answers that are no emotion word, shown with the flag


def is_emotion_word(word: str, vocabulary: Vocabulary) -> bool:
    return vocabulary.canonical(word) is not None


def other_words(parsed: list[str] | None, valid: bool, vocabulary: Vocabulary | None = None) -> tuple[str, ...]:
    """The words of a valid row's answer that are no vocabulary word, folded (none for an invalid row:
    its words are not counted as answers)."""
    vocab = vocabulary or default_vocabulary()
    return tuple(w.strip().lower() for w in parsed or [] if not is_emotion_word(w, vocab)) if valid else ()


def flagged(vrate: float, ewrate: float | None) -> bool:
    """Answers of the right shape that are mostly not emotion words."""
    return ewrate is not None and vrate >= VRATE_HIGH and ewrate < EWRATE_LOW


def summary(answers: int, hits: int, others: Counter[str], vrate: float,
            vocabulary: Vocabulary | None = None) -> dict[str, Any]:
    """EWRate of a run's `answers` answered words (those of valid rows), `hits` of them emotion words,
    with the commonest `others` and the flag (analysis.json `emotion_words`)."""
    rate = hits / answers if answers else None
    return {"EWRate": rate, "answers": answers, "emotion_words": hits,
            "vocabulary": (vocabulary or default_vocabulary()).version,
            "not_emotion_words": [[w, c] for w, c in others.most_common(TOP_OTHER)],
            "thresholds": {"VRate_high": VRATE_HIGH, "EWRate_low": EWRATE_LOW}, "flagged": flagged(vrate, rate)}
