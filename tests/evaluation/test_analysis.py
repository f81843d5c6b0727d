"""Extended measures, hand-computed on a 3-row example with a 4-word decomposition."""
import math

import numpy as np
import pytest

from evaluation.scoring.analysis import analyse, canonical_mapper, jensen_shannon
from evaluation.scoring.stats import bootstrap_intervals, cohens_d_paired, paired_test
from schemas.lexicon import Decomposition

SAD = (0, 0, 0, 0, 0, 1, 0, 0, 0, 1)
HAPPY = (0, 0, 0, 0, 1, 0, 0, 0, 1, 0)
ANGRY = (1, 0, 0, 0, 0, 0, 0, 0, 0, 1)
DEC = Decomposition({"sad": SAD, "happy": HAPPY, "glad": HAPPY, "angry": ANGRY})
ROWS = [
    (["sad", "happy"], ["sad", "glad"], [["sad", "angry"], ["glad", "happy"]]),
    (["angry"], ["sad"], [["sad", "happy", "angry"]]),
    (["sad"], None, [["x"]]),  # an invalid row: its mask counts as wrong everywhere
]


@pytest.fixture(scope="module")
def result():
    return analyse(ROWS, DEC, bootstrap=200, seed=1)


def test_hamming_canonical_and_top_k_accuracy_divide_by_all_masks(result):
    assert result["masks"] == 4 and result["invalid_rows"] == 1
    assert result["Hamming"] == pytest.approx((1 + 1 + 0.8 + 0) / 4)
    assert result["canonical_mapping"] == canonical_mapper()[0]
    assert result["canonical_accuracy"] == pytest.approx(1 / 4)  # only sad/sad; "glad" is not in the vocabulary
    variants = analyse([(["guilt", "Guilty"], ["guilty", "guilt"], None)], DEC, bootstrap=0, seed=1)
    assert variants["canonical_accuracy"] == 1.0  # one concept, two surface words
    assert result["top_k"] == {"1": 0.25, "3": 0.75, "5": 0.75}


def test_per_dimension_precision_recall_f1_over_valid_masks(result):
    dims = result["per_dimension"]
    assert dims["anger"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1}
    assert dims["sadness"]["precision"] == 0.5 and dims["sadness"]["recall"] == 1.0
    assert dims["sadness"]["f1"] == pytest.approx(2 / 3)
    assert dims["negative"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2}
    assert dims["trust"]["support"] == 0


def test_confusions_pair_human_labels_with_what_the_model_said(result):
    pairs = {(c["gold"], c["predicted"]): c["count"] for c in result["confusions"]}
    assert pairs == {("happy", "glad"): 1, ("angry", "sad"): 1}



def test_per_gold_word_accl_counts_invalid_masks_and_lists_the_wrong_answers(result):
    assert result["labels"] == [
        {"gold": "sad", "masks": 2, "hits": 1, "AccL": 0.5, "invalid": 1, "wrong": []},  # the invalid row's mask
        {"gold": "angry", "masks": 1, "hits": 0, "AccL": 0.0, "invalid": 0, "wrong": [["sad", 1]]},
        {"gold": "happy", "masks": 1, "hits": 0, "AccL": 0.0, "invalid": 0, "wrong": [["glad", 1]]}]


def test_distribution_measures_entropy_top_share_and_jensen_shannon(result):
    human, model = result["distribution"]["human"], result["distribution"]["model"]
    assert human["entropy_bits"] == pytest.approx(1.5) and human["top_share"] == 0.5
    assert model["entropy_bits"] == pytest.approx(-(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3))
    assert model["top"][0] == ["sad", 2] and model["top_share"] == pytest.approx(2 / 3)
    kl_p = 0.5 * math.log2(0.5 / (7 / 12)) + 2 * 0.25 * math.log2(0.25 / 0.125)
    kl_q = (2 / 3) * math.log2((2 / 3) / (7 / 12)) + (1 / 3) * math.log2((1 / 3) / (1 / 6))
    assert result["distribution"]["jensen_shannon_bits"] == pytest.approx((kl_p + kl_q) / 2)
    from scipy.spatial.distance import jensenshannon

    p, q = [0.5, 0.25, 0.25, 0], [2 / 3, 0, 0, 1 / 3]
    assert result["distribution"]["jensen_shannon_bits"] == pytest.approx(jensenshannon(p, q, base=2) ** 2)
    from collections import Counter

    assert jensen_shannon(Counter(a=3), Counter(a=1)) == 0.0 and jensen_shannon(Counter(a=1), Counter(b=1)) == pytest.approx(1.0)


def _rows(n: int, rate: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    hits = (rng.random(n) < rate).astype(float)
    return {"masks": np.ones(n), "word_hits": hits, "vector_hits": hits, "f1_sum": hits,
            "valid": np.ones(n), "hamming_sum": hits}


def test_bootstrap_intervals_are_seeded_and_cover_the_estimate():
    rows = _rows(300, 0.4, seed=3)
    a, b = bootstrap_intervals(rows, 300, seed=7), bootstrap_intervals(rows, 300, seed=7)
    assert a == b
    point = rows["word_hits"].mean()
    lo, hi = a["AccL"]
    assert lo < point < hi and hi - lo < 0.15
    assert bootstrap_intervals(rows, 300, seed=8)["AccL"] != a["AccL"]


def test_paired_tests_detect_a_consistent_difference_and_not_an_identical_run():
    assert cohens_d_paired(np.array([1.0, 2.0, 3.0])) == pytest.approx(2.0)
    a = _rows(60, 0.3, seed=1)["word_hits"]
    same = paired_test(a, a.copy())
    assert same["wilcoxon_p"] == 1.0 and same["cohens_d"] == 0.0
    better = np.maximum(a, _rows(60, 0.6, seed=2)["word_hits"])
    diff = paired_test(a, better)
    assert diff["wilcoxon_p"] < 0.05 and diff["cohens_d"] > 0 and diff["mean_b"] > diff["mean_a"]
