"""How the runtime loads spaCy (pieces `openblas`, `hidden_imports`): its layers multiply with
numpy's BLAS (not blis) with one BLAS thread, the tags and entities are those of spaCy's default
ops, and torch is not imported; plainly loaded, it is."""
from __future__ import annotations

import importlib.util

import pytest
from threadpoolctl import threadpool_info

from common.spacy_model import MODEL, load_pipeline
from flows.runtime.models import BLAS_THREADS, loading
from tests.fresh_python import environ_without, fresh_python

pytestmark = pytest.mark.slow  # loads spaCy pipelines, some in fresh interpreters (tests/conftest.py)

SENTENCES = [
    "I feel so guilty about what I said to my sister last night.",
    "Honestly I'm scared that the interview went badly and they will never call back.",
    "Im kinda nervous tbh, felt really lonely after moving to Denver with Maria.",
    "I have been anxious for weeks; my boss John keeps asking about the report.",
    "We were all furious when the flight to Chicago got cancelled again.",
    "I was overwhelmed, relieved and a bit embarrassed, all at once.",
]
EXCLUDE = ["parser", "attribute_ruler", "lemmatizer", "senter"]


def _layers_ops(nlp, pipes=("tok2vec", "tagger", "ner")):
    return {(type(node.ops).__name__, getattr(node.ops, "use_blis", None))
            for name, pipe in nlp.pipeline if name in pipes for node in pipe.model.walk()}


def test_layers_loaded_by_the_runtime_use_numpy_blas_with_one_thread():
    with loading():
        nlp = load_pipeline(MODEL, exclude=EXCLUDE)
    # the tagger's layers, where the model passes spend their time (NER resizes its output layer
    # under spaCy's own choice of ops, and steps through its transitions in spaCy's Cython code)
    assert _layers_ops(nlp, ("tok2vec", "tagger")) == {("NumpyOps", False)}
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert blas, "no BLAS library found to limit"
    assert {lib["num_threads"] for lib in blas} == {BLAS_THREADS}


def test_tags_and_entities_equal_those_of_spacys_default_ops():
    with loading():
        ours = load_pipeline(MODEL, exclude=EXCLUDE)
    default = load_pipeline(MODEL, exclude=EXCLUDE)
    assert ("NumpyOps", True) in _layers_ops(default)  # the comparison is with blis
    for a, b in zip(ours.pipe(SENTENCES), default.pipe(SENTENCES), strict=True):
        assert [t.tag_ for t in a] == [t.tag_ for t in b]
        assert [(e.start_char, e.end_char, e.label_) for e in a.ents] == \
               [(e.start_char, e.end_char, e.label_) for e in b.ents]
    assert any(e.label_ == "PERSON" for d in ours.pipe(SENTENCES) for e in d.ents)


TAGGER = """
import sys
from flows.runtime.models import loading
from extractors.nlp import load_tagger
with loading():
    tagger = load_tagger()
tags = [t.tag_ for t in tagger("I feel so guilty about it.")]
assert tags[:3] == ["PRP", "VBP", "RB"], tags
print("torch" in sys.modules)
import torch
assert torch.tensor([1]).item() == 1
"""


def test_the_tagger_loads_without_importing_torch_which_stays_importable():
    """thinc imports torch when it is installed (the test extras install it): the runtime hides
    it, so a fresh tagging process does not pay for it, and torch still imports afterwards."""
    assert importlib.util.find_spec("torch") is not None, "torch is not installed: this test needs the hf extra"
    assert fresh_python(TAGGER, env=environ_without("EXPRESS_PLAIN"), timeout=300).split()[-1] == "False"


def test_plainly_the_tagger_imports_torch():
    """The test above would notice the piece gone."""
    assert fresh_python(TAGGER, env={**environ_without("EXPRESS_PLAIN"), "EXPRESS_PLAIN": "1"},
                        timeout=300).split()[-1] == "True"
