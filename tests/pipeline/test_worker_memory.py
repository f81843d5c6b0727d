"""A worker hands back what filtering left behind before it loads spaCy to extract.

What is checked is what the allocator cannot change: nothing holds the language model or its
feature table any more, so their bytes are free. How much of that the RSS gives back depends on
malloc (glibc's trim); docs/scale.md says what a worker gains."""
from __future__ import annotations

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
