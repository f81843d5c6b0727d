"""bench/extract.py's ceiling of a model's ranking: the best precision one threshold gives while
keeping a share of gold, with hits of equal probability kept or dropped together."""
import pytest

from bench.extract import best_precision_at


def test_the_best_threshold_keeps_the_recall_asked_for_and_never_splits_a_tie():
    scored = [(0.9, True), (0.8, False), (0.7, True), (0.6, True), (0.5, False), (0.4, True)]
    assert best_precision_at(scored, gold_spans=4, recall=0.75) == pytest.approx(3 / 4)  # down to 0.6
    assert best_precision_at(scored, gold_spans=4, recall=1.0) == pytest.approx(4 / 6)
    assert best_precision_at(scored, gold_spans=5, recall=1.0) == 0.0  # a gold span no hit reached
    tied = [(0.9, True), (0.5, True), (0.5, False), (0.5, False)]
    assert best_precision_at(tied, gold_spans=2, recall=1.0) == pytest.approx(2 / 4)
