"""A worker hands back what filtering left behind before it loads spaCy to extract.

What is checked is what the allocator cannot change: nothing holds the language model or its
feature table any more, so their bytes are free. How much of that the RSS gives back depends on
malloc (glibc's trim); docs/scale.md says what a worker gains."""
from __future__ import annotations

import gc
import weakref

from filters.language import detect, identifier
from pipeline.worker_memory import hand_back_memory


def test_handing_back_memory_releases_the_language_model_which_reloads_when_needed_again():
    text = "I feel so guilty about missing my sister's graduation last weekend."
    before = detect(text)  # the model is loaded (or was already)
    model = identifier()
    held = model.nb_ptc.nbytes
    table = weakref.ref(model.nb_ptc)  # (the identifier itself takes no weak reference)
    del model
    hand_back_memory()
    assert table() is None, "something still holds the language model's feature table"
    assert held > 50 * 2**20  # the float32 feature table alone: what a worker no longer carries
    assert detect(text) == before
    assert identifier() is not None and identifier().nb_ptc.nbytes == held  # loaded again, the same


def test_the_language_model_is_released_even_after_a_step_setup_froze_it():
    """The step runner freezes what a setup loaded (pipeline/steps.py); the filters' language
    model is still freed by its teardown, as nothing else holds it."""
    text = "I am worried about the exam tomorrow and cannot sleep."
    detect(text)
    model = identifier()
    table = weakref.ref(model.nb_ptc)
    gc.freeze()
    try:
        del model
        hand_back_memory()
        assert table() is None, "the frozen language model's feature table is still held"
    finally:
        gc.unfreeze()
