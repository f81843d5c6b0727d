"""Quality against real EXPRESS data: exact spans on segments_dev.jsonl from ../shared (without it
these tests fail; `-m "not shared"` leaves them out on purpose: tests/conftest.py).

Since #52 the rules reach every gold span of dev (EXPRESS's family 1 gap takes any words, family 2
takes participles, misspelt intensifiers no longer block) at P 0.885; most extra finds are words the
authors' hand review left out ("I am alone / weak / calm", "I was careful"). The acceptance model
(#21) learns that review from dev gold. It is measured on posts it never saw: trained on fold A of
`extractors.quality.fold_of` (its C and threshold chosen inside A) it extracts fold B, and the
other way round; and, nearer the shipped model's training data, trained on 80 % of dev's posts
(`outer_score`) it scores the rest. Measured with acceptance-v4 (2026-12-06): fold A -> B
P 0.954 / R 0.980, B -> A P 0.971 / R 0.986, pooled P 0.963 / R 0.983; on 80 % (5 folds, seed
0) P 0.970 / R 0.985. The figures grow with the training share (90 %: P 0.9722 / R 0.9875,
bench/README.md). The shipped model is trained on all of dev, so its figures on dev are in-sample
only.
"""
import json

import pytest

from common.checksums import sha256_file
from extractors.acceptance import load_model
from extractors.acceptance_training import cross_fold, labelled_hits, outer_score, read_dev, train
from extractors.disclosures import DisclosureExtractor
from extractors.quality import fold_of, score_folds, score_reachable, score_spans

TARGET_PRECISION = 0.95  # #21, on the two fold_of folds
TARGET_RECALL = 0.985    # #52, for the shipped model (all of dev): asserted in-sample, floors below
# Measured by these tests' own scoring on segments_dev.jsonl, 2026-12-06 (tp/fp/fn in parentheses):
RULES_RECALL = 0.995             # the rules alone, all of dev: 1.000 (1132/146/0); each fold 1.000
RULES_PRECISION_FLOOR = 0.87     # 0.886 (reference forms, the default)
RULES_FOLD_PRECISION_FLOOR = 0.86  # 0.896 (fold A: 580/67/0) and 0.875 (fold B: 552/79/0)
EXTENDED_PRECISION_FLOOR = 0.82  # 0.835 (1132/224/0) with forms="extended"
CROSS_FOLD_RECALL_FLOOR = 0.975     # pooled 0.983 (1113/43/19)
CROSS_FOLD_PRECISION_FLOOR = 0.945  # each direction: 0.954 (train A, test B) and 0.971
CROSS_FOLD_DIRECTION_RECALL_FLOOR = 0.975  # each direction: 0.980 and 0.986
EIGHTY_PERCENT_PRECISION_FLOOR = 0.96  # 5 folds, seed 0: 0.970 (1115/34/17)
EIGHTY_PERCENT_RECALL_FLOOR = 0.978    # 0.985
IN_SAMPLE_PRECISION_FLOOR = 0.97    # the shipped model on the dev it was trained on: 0.992, R 0.995 (1126/9/6)


@pytest.fixture(scope="module")
def dev_rows(shared_reference):
    return [json.loads(line) for line in open(shared_reference / "segments_dev.jsonl", encoding="utf-8")]


@pytest.fixture(scope="module")
def dev_results(dev_rows, rules_extractor):
    """The rules alone on dev."""
    return dev_rows, list(rules_extractor.extract_many(r["text"] for r in dev_rows))


@pytest.fixture(scope="module")
def training_set(shared_reference, rules_extractor):
    rows, sha = read_dev(shared_reference / "segments_dev.jsonl")
    return labelled_hits(rows, rules_extractor, sha, "segments_dev.jsonl")


@pytest.fixture(scope="module")
def fold_models():
    return {}  # filled by `folds`: the model trained on each fold


@pytest.fixture(scope="module")
def folds(training_set, fold_models):
    return cross_fold(training_set, models=fold_models)


def test_dev_offsets_are_exact(dev_results):
    rows, found = dev_results
    assert sum(map(len, found)) > len(rows)
    for r, ds in zip(rows, found, strict=True):
        assert all(r["text"][d.start:d.end] == d.surface for d in ds)


def test_rules_recall_meets_target(dev_results):
    spans = score_spans(*dev_results, include_negated=True)
    assert spans.recall >= RULES_RECALL, spans


def test_rules_precision_stays_above_floor(dev_results):
    spans = score_spans(*dev_results, include_negated=True)
    assert spans.precision >= RULES_PRECISION_FLOOR, spans


def test_rules_precision_holds_on_both_folds(dev_results):
    for fold, score in score_folds(*dev_results).items():
        assert score.precision >= RULES_FOLD_PRECISION_FLOOR, (fold, score)


def test_extended_forms_add_finds_outside_the_reference_forms(dev_rows, dev_results, rules_extractor):
    """forms="extended" keeps every reference find and adds tagged ones (I'm feeling, I've been ...)."""
    extended_extractor = DisclosureExtractor(nlp=rules_extractor.nlp, forms="extended", acceptance="off")
    found = list(extended_extractor.extract_many(r["text"] for r in dev_rows))
    reference = score_spans(*dev_results, include_negated=True)
    extended = score_spans(dev_rows, found, include_negated=True)
    assert extended.tp >= reference.tp and extended.fp > reference.fp
    assert extended.precision >= EXTENDED_PRECISION_FLOOR, extended
    assert score_reachable(dev_rows, found) == reference  # untagged extended finds = reference finds


def test_cross_fold_acceptance_meets_the_target_on_the_pooled_test_folds(folds):
    pooled = folds["pooled"]
    assert pooled["with_model"]["precision"] >= TARGET_PRECISION, pooled
    assert pooled["with_model"]["recall"] >= CROSS_FOLD_RECALL_FLOOR, pooled
    assert pooled["with_model"]["fp"] < 0.6 * pooled["rules"]["fp"], pooled  # the review it learns


def test_cross_fold_acceptance_stays_above_floors_in_each_direction(folds):
    for name in ("train_A_test_B", "train_B_test_A"):
        f = folds[name]
        assert f["with_model"]["precision"] >= CROSS_FOLD_PRECISION_FLOOR, (name, f)
        assert f["with_model"]["recall"] >= CROSS_FOLD_DIRECTION_RECALL_FLOOR, (name, f)
        assert f["with_model"]["precision"] > f["rules"]["precision"] + 0.03, (name, f)


def test_models_trained_on_80_percent_of_dev_hold_their_floors_on_the_rest(training_set):
    """Trained as the shipped model is (choices inside its data) on 4 of 5 folds of dev's posts,
    each model scores the fifth (one seeded shuffle of the posts), pooled."""
    pooled = outer_score(training_set, 5, seeds=[0])
    assert pooled.tp + pooled.fn == training_set.gold_spans  # every gold span tested once
    assert pooled.precision >= EIGHTY_PERCENT_PRECISION_FLOOR and pooled.recall >= EIGHTY_PERCENT_RECALL_FLOOR, pooled


def test_cross_fold_figures_are_what_the_extractor_does_with_the_fold_model(dev_rows, folds, fold_models,
                                                                           rules_extractor):
    """The figures come from the training-side scoring; the extractor, given the model trained on
    fold B, must find exactly those spans on fold A."""
    model = fold_models["B"]
    part = [r for r in dev_rows if fold_of(r["post_id"]) == "A"]
    ex = DisclosureExtractor(nlp=rules_extractor.nlp, acceptance=model)
    got = score_spans(part, list(ex.extract_many(r["text"] for r in part)), include_negated=True)
    want = folds["train_B_test_A"]["with_model"]
    assert (got.tp, got.fp, got.fn) == (want["tp"], want["fp"], want["fn"])


def test_shipped_model_is_what_train_acceptance_makes_of_this_dev_file(training_set):
    """A change to the features or the training without a retrained model file fails here."""
    shipped = load_model()
    assert shipped.meta["training_data"]["sha256"] == training_set.sha256, \
        "../shared's segments_dev.jsonl is not the file the shipped model was trained on"
    fresh = train(training_set, shipped.version)
    assert fresh["threshold"] == pytest.approx(shipped.threshold, abs=1e-5) and fresh["C"] == shipped.meta["C"]
    assert sorted(fresh["features"]) == sorted(shipped.weights)
    assert max(abs(w - shipped.weights[f]) for f, w in zip(fresh["features"], fresh["coefficients"])) < 1e-5


def test_shipped_model_on_dev_keeps_recall_and_drops_most_extra_finds(dev_rows, extractor):
    """In-sample (the shipped model was trained on all of dev): a guard on the shipped file."""
    found = list(extractor.extract_many(r["text"] for r in dev_rows))
    spans = score_spans(dev_rows, found, include_negated=True)
    assert spans.recall >= TARGET_RECALL and spans.precision >= IN_SAMPLE_PRECISION_FLOOR, spans
    assert all(d.acceptance is not None and d.acceptance >= extractor.model.threshold for ds in found for d in ds)


def test_training_data_hash_is_the_dev_files(shared_reference, training_set):
    assert training_set.sha256 == sha256_file(shared_reference / "segments_dev.jsonl")
