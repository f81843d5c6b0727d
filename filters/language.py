"""Language filter with py3langid, whose model ships inside its PyPI package (no download)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from schemas.records import RawPost

SAMPLE_CHARS = 1000  # the language of a post is clear from its first ~150 words; longer costs time


@lru_cache(maxsize=1)
def identifier() -> Any:
    """The py3langid classifier with normalised probabilities (loaded once, ~1 s).

    Its feature table ships as float16; every post's score is a float32 product with it, so numpy
    converted the rows it needs on each call. Converting the table once (+54 MB RSS) makes detection
    ~25 % cheaper with bit-identical scores (tests/filters/test_language_table.py compares them)."""
    import numpy as np
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    found = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    found.nb_ptc = np.ascontiguousarray(found.nb_ptc, dtype=np.float32)
    found._full_model = (found.nb_ptc, *found._full_model[1:])  # its float16 original is then freed (-27 MB)
    return found


def detect(text: str) -> tuple[str, float]:
    lang, prob = identifier().classify(text[:SAMPLE_CHARS])
    return str(lang), float(prob)


@dataclass
class LanguageFilter:
    """Keeps posts detected as one of `languages` with at least `min_confidence`."""

    languages: frozenset[str]
    min_confidence: float = 0.5
    name: str = "language"

    def check(self, post: RawPost) -> str | None:
        lang, prob = detect(post.text)
        if lang in self.languages and prob >= self.min_confidence:
            return None
        return "language"
