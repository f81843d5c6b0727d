"""The language filter's identifier holds its feature table as float32 (filters/language.py): its
scores must equal the stock py3langid identifier's bit for bit, so no post's decision changes."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from py3langid.langid import MODEL_FILE, LanguageIdentifier

from filters.language import detect, identifier

# letters of several scripts, emoji, punctuation and line breaks: seeded texts of 0-400 characters
ALPHABET = list("abcdefghijklmnopqrstuvwxyz ABCXYZ éàüßñçøå кошкаяж λόγος 中文日本語 한국어 ’'.,!?😬\n\t0123")
WORDS = ["I", "feel", "so", "guilty", "je", "me", "sens", "ich", "fühle", "mich", "schuldig", "me", "siento",
         "culpable", "мне", "стыдно", "lol", "u/x", "https://a.co", "**so**", "\u00a0"]


@pytest.fixture(scope="module")
def stock() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    chars = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 400))) for _ in range(n // 2)]
    words = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(n - n // 2)]
    return chars + words


def _same_bits(ours: LanguageIdentifier, stock: LanguageIdentifier, texts: list[str]) -> int:
    differing = 0
    for text in texts:
        a, b = ours._decide(text), stock._decide(text)
        differing += not np.array_equal(a.view(np.uint32), b.view(np.uint32))
    return differing


def test_float32_table_scores_equal_the_stock_identifier_bit_for_bit(stock):
    ours = identifier()
    assert ours.nb_ptc.dtype == np.float32 and stock.nb_ptc.dtype != np.float32  # the change is in place
    texts = _texts(3000, seed=17)
    assert _same_bits(ours, stock, texts) == 0
    decisions = [detect(t) for t in texts]
    assert decisions == [(str(lang), float(p)) for lang, p in (stock.classify(t[:1000]) for t in texts)]
    assert len({lang for lang, _ in decisions}) > 5  # the texts reach many languages, not one


def test_float32_table_scores_equal_the_stock_identifier_on_real_reddit_segments(stock, shared_reference):
    with open(shared_reference / "segments_dev.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    assert len(texts) > 500
    assert _same_bits(identifier(), stock, texts) == 0
