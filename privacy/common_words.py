"""Which words are no reason to think of a name: the stop words and everyday words of
privacy/data/name_free_words.txt, and frequent English words (wordfreq) that are no census first
name. The name finder (privacy/names.py) and its cues (privacy/name_cues.py) both ask here."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from schemas.lexicon import lexicon_terms

WORDS_FILE = Path(__file__).parent / "data" / "name_free_words.txt"
NAME_LIKE_STOP_WORDS = frozenset({"will", "may"})


@lru_cache(maxsize=1)
def name_free_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    lines = WORDS_FILE.read_text(encoding="utf-8").splitlines()
    own = {w.strip().lower() for w in lines if w.strip() and not w.startswith("#")}
    return frozenset((set(STOP_WORDS) - NAME_LIKE_STOP_WORDS) | own)


@lru_cache(maxsize=1)
def census_first_names() -> frozenset[str]:
    """US Census 1990 first names (male and female lists of the `names` package), lower-cased,
    less the ones that are also common or emotion words (May, Will, Hope, Joy, Young...)."""
    from privacy.gazetteer import CENSUS_FIRST, _census

    return frozenset(_census(CENSUS_FIRST) - name_free_words() - lexicon_terms() - NAME_LIKE_STOP_WORDS)


COMMON_ZIPF = 4.0  # wordfreq's Zipf scale: 4.0 is once per 100,000 English words


@lru_cache(maxsize=65536)
def is_frequent_word(lower: str) -> bool:
    """A frequent English word (wordfreq) that is not a census first name: "Funny", "Unfortunately",
    "Facebook" or "Chicago" capitalized are no reason to run NER; "Chris" or "David" still are."""
    from wordfreq import zipf_frequency

    return lower not in census_first_names() and zipf_frequency(lower, "en") >= COMMON_ZIPF
