"""The one spaCy loader: its layers multiply with numpy's BLAS (not blis), BLAS keeps one thread,
and the tags and entities are those of spaCy's default ops (bench/README.md has the speed)."""
from __future__ import annotations

import importlib.util

import pytest
import spacy
from threadpoolctl import threadpool_info

from common.spacy_model import BLAS_THREADS, MODEL, load_pipeline
from tests.fresh_python import fresh_python

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


def _layers_ops(nlp):
    return {(type(node.ops).__name__, getattr(node.ops, "use_blis", None))
            for _, pipe in nlp.pipeline if hasattr(pipe, "model") for node in pipe.model.walk()}


def test_loaded_layers_use_numpy_blas_with_one_thread():
    nlp = load_pipeline(MODEL, exclude=EXCLUDE)
    assert _layers_ops(nlp) == {("NumpyOps", False)}
    blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert blas, "no BLAS library found to limit"
    assert {lib["num_threads"] for lib in blas} == {BLAS_THREADS}


def test_tags_and_entities_equal_those_of_spacys_default_ops():
    ours = load_pipeline(MODEL, exclude=EXCLUDE)
    default = spacy.load(MODEL, exclude=EXCLUDE)
    assert ("NumpyOps", True) in _layers_ops(default)  # the comparison is with blis
    for a, b in zip(ours.pipe(SENTENCES), default.pipe(SENTENCES), strict=True):
        assert [t.tag_ for t in a] == [t.tag_ for t in b]
        assert [(e.start_char, e.end_char, e.label_) for e in a.ents] == \
               [(e.start_char, e.end_char, e.label_) for e in b.ents]
    assert any(e.label_ == "PERSON" for d in ours.pipe(SENTENCES) for e in d.ents)


def test_the_tagger_loads_without_importing_torch_which_stays_importable():
    """thinc imports torch when it is installed (the test extras install it): the loader hides it,
    so a fresh tagging process does not pay for it, and torch still imports afterwards."""
    assert importlib.util.find_spec("torch") is not None, "torch is not installed: this test needs the hf extra"
    code = """
import sys
from extractors.nlp import load_tagger
tags = [t.tag_ for t in load_tagger()("I feel so guilty about it.")]
assert tags[:3] == ["PRP", "VBP", "RB"], tags
assert "torch" not in sys.modules, "torch was imported"
import torch, thinc.compat
assert torch.tensor([1]).item() == 1 and not thinc.compat.has_torch
print("ok")
"""
    assert fresh_python(code, timeout=300).strip() == "ok"
