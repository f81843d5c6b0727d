"""A worker hands back what filtering left behind before it loads spaCy to extract."""
from __future__ import annotations

import psutil

from filters.language import detect
from pipeline.worker_memory import hand_back_memory


def test_handing_back_memory_releases_the_language_model_which_reloads_when_needed_again():
    text = "I feel so guilty about missing my sister's graduation last weekend."
    before = detect(text)  # the model is loaded (or was already)
    rss = psutil.Process().memory_info().rss
    hand_back_memory()
    released = rss - psutil.Process().memory_info().rss
    assert released > 50 * 2**20, f"only {released / 2**20:.0f} MB handed back"
    assert detect(text) == before
