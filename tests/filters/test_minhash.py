"""The near-duplicate signatures (filters.near_duplicates.MinHasher): estimates of Jaccard
similarity, the same values in every process, and words read as `\\w+` reads them."""
import random
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

from filters.near_duplicates import MinHasher, shingles, word_ids

REPO = Path(__file__).resolve().parents[2]


def _edited(rng: random.Random, words: list[str], share: float) -> str:
    out = list(words)
    for _ in range(int(len(out) * share)):
        out[rng.randrange(len(out))] = f"w{rng.randrange(10**6)}"
    return " ".join(out)


def test_signatures_estimate_the_jaccard_similarity_of_word_shingles():
    """Over 400 pairs of 150-word posts with 0-40 % of the words replaced, the share of equal
    values (128 permutations) is within 0.05 of the true shingle Jaccard on average, unbiased."""
    rng = random.Random(2)
    vocab = [f"v{k}" for k in range(3000)]
    hasher = MinHasher(128, 3)
    errors = []
    for _ in range(400):
        words = [rng.choice(vocab) for _ in range(150)]
        a, b = " ".join(words), _edited(rng, words, rng.uniform(0, 0.4))
        sa, sb = shingles(a, 3), shingles(b, 3)
        true = len(sa & sb) / len(sa | sb)
        errors.append(float(np.mean(hasher.signature(a) == hasher.signature(b))) - true)
    assert abs(np.mean(errors)) < 0.01 and np.mean(np.abs(errors)) < 0.05
    assert (hasher.signature("same words here") == hasher.signature("SAME words, here!")).all()  # case, marks


def test_every_process_computes_the_same_signature():
    """Shards are signed in worker processes and compared later: the constants must not depend on
    the process (no hash() salt, no RNG state)."""
    code = ("from filters.near_duplicates import MinHasher; "
            "print(MinHasher(64, 3).signature('I feel so guilty about it, again and again').tolist())")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(REPO), "PYTHONHASHSEED": "123"})
    here = MinHasher(64, 3).signature("I feel so guilty about it, again and again").tolist()
    assert eval(out.stdout) == here and len(set(here)) > 60


def test_words_are_what_backslash_w_finds_in_the_lower_cased_text_ascii_or_not():
    rng = random.Random(9)
    alphabet = [chr(c) for c in range(128)] + ["é", "ß", "😀", "日", "\u0301", "İ"]
    for k in range(3000):
        text = "".join(rng.choice(alphabet if k % 2 else alphabet[:128]) for _ in range(rng.randint(0, 40)))
        want = [zlib.crc32(w.encode("utf-8", "surrogatepass")) for w in re.findall(r"\w+", text.lower())]
        assert word_ids(text).tolist() == want, repr(text)
        words = re.findall(r"\w+", text.lower())
        if len(words) > 1:  # the shingles (what the Jaccard is of) read the same words
            assert shingles(text, 1) == {w.encode() for w in words}, repr(text)
