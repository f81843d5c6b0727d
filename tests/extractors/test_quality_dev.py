"""Quality against real EXPRESS data: exact spans on segments_dev.jsonl (runs when ../shared exists).

Targets of issue #3: precision >= 0.95 and recall >= 0.98 (the authors' own masking code reaches
P 0.919 / R 0.983 here). Recall meets its target. Precision does not yet (0.914 with the default
reference trigger forms): most remaining extra finds are family 2 words ("I am alone/weak/calm/
comfortable") that the authors' unpublished adjective list or their hand review left out, and
phrases the reference code lost to its own offset faults (a comma before the word, family 3 after
the first sentence). The dev rows are 40 % of a sample whose other 60 % is a hidden test set, so
no word list is fitted to them. The target stays a strict xfail, so reaching it turns the suite
red until the marker is removed; floors guard against regressions meanwhile, on each fold too.
"""
import json

import pytest

from extractors.quality import score_folds, score_reachable, score_spans

TARGET_PRECISION = 0.95
TARGET_RECALL = 0.98
PRECISION_FLOOR = 0.90           # measured 0.914 (reference forms, the default)
FOLD_PRECISION_FLOOR = 0.89      # measured 0.924 (fold A) and 0.905 (fold B)
EXTENDED_PRECISION_FLOOR = 0.85  # measured 0.870 with forms="extended"


@pytest.fixture(scope="module")
def dev_rows(shared_reference):
    return [json.loads(line) for line in open(shared_reference / "segments_dev.jsonl", encoding="utf-8")]


@pytest.fixture(scope="module")
def dev_results(dev_rows, extractor):
    return dev_rows, list(extractor.extract_many(r["text"] for r in dev_rows))


def test_dev_offsets_are_exact(dev_results):
    rows, found = dev_results
    assert sum(map(len, found)) > len(rows)
    for r, ds in zip(rows, found):
        assert all(r["text"][d.start:d.end] == d.surface for d in ds)


def test_dev_recall_meets_target(dev_results):
    spans = score_spans(*dev_results, include_negated=True)
    assert spans.recall >= TARGET_RECALL, spans


def test_dev_precision_stays_above_floor(dev_results):
    spans = score_spans(*dev_results, include_negated=True)
    assert spans.precision >= PRECISION_FLOOR, spans


def test_dev_precision_holds_on_both_folds(dev_results):
    for fold, score in score_folds(*dev_results).items():
        assert score.precision >= FOLD_PRECISION_FLOOR, (fold, score)


def test_extended_forms_add_finds_outside_the_reference_forms(dev_rows, dev_results, extended_extractor):
    """forms="extended" keeps every reference find and adds tagged ones (I'm feeling, I've been ...)."""
    found = list(extended_extractor.extract_many(r["text"] for r in dev_rows))
    reference = score_spans(*dev_results, include_negated=True)
    extended = score_spans(dev_rows, found, include_negated=True)
    assert extended.tp >= reference.tp and extended.fp > reference.fp
    assert extended.precision >= EXTENDED_PRECISION_FLOOR, extended
    assert score_reachable(dev_rows, found) == reference  # untagged extended finds = reference finds


@pytest.mark.xfail(strict=True, reason="P 0.914 < 0.95: see module docstring")
def test_dev_precision_meets_target(dev_results):
    spans = score_spans(*dev_results, include_negated=True)
    assert spans.precision >= TARGET_PRECISION, spans
