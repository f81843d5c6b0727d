"""Offline baselines: what each predicts and that they learn from the train split."""
import json

import pytest

from evaluation.scoring.parsing import parse_answer
from evaluation.predictors.base import Item, PredictorOptions, TrainItem
from evaluation.predictors.registry import get_predictor
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # fits and runs the baselines on releases (tests/conftest.py)

TRAIN = [TrainItem.from_row({"post_id": f"t{i}", "masked_text": "I feel <mask>.", "surfaces": [w]})
         for i, w in enumerate(["sad", "sad", "happy", "angry", "sad", "happy"])]


def item(text: str) -> Item:
    return Item.from_row({"post_id": "x", "masked_text": text})


def test_most_frequent_answers_the_train_prior_and_ranks_the_rest():
    p = get_predictor("most-frequent", PredictorOptions(top_k=2))
    p.fit(TRAIN)
    ex = item("I was <mask> and <mask>.")
    assert parse_answer(p.predict(ex)) == ["sad", "sad"]
    assert p.ranked(ex) == [["sad", "happy"]] * 2


def test_context_lexicon_uses_the_nearest_emotion_word_elsewhere_then_the_prior():
    p = get_predictor("context-lexicon", PredictorOptions(top_k=3))
    p.fit(TRAIN)
    ex = item("I was so angry at him. Later I felt <mask>. Next day, <mask> again, and I was happy.")
    assert parse_answer(p.predict(ex)) == ["angry", "happy"]
    assert p.ranked(ex)[0] == ["angry", "happy", "sad"]
    assert parse_answer(p.predict(item("Nothing here, just <mask>."))) == ["sad"]  # the prior
    # words like "like" are in the lexicon but never a label, so they are not offered
    assert parse_answer(p.predict(item("I like it but I feel <mask>."))) == ["sad"]


def test_all_zero_baseline_has_accv_from_zero_vector_golds_only_and_f1v_zero(tiny_release):
    run = evaluate_release(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"], EvalRequest("all-zero"))
    assert run.metrics["F1V"] == 0.0 and run.metrics["AccL"] == 0.0 and run.metrics["VRate"] == 1.0
    assert run.metrics["AccV"] == 0.0  # every tiny label is an emotion word with a non-zero vector


def test_tfidf_classifier_learns_from_train_and_beats_the_prior_on_tiny(tiny_release):
    wh = Warehouse.at(tiny_release["warehouse"])
    prior = evaluate_release(wh, tiny_release["release"], EvalRequest("most-frequent"))
    clf = evaluate_release(wh, tiny_release["release"], EvalRequest("tfidf-logreg"))
    assert clf.metrics["AccL"] > prior.metrics["AccL"] + 0.2
    config = json.loads((clf.path / "config.json").read_text())
    assert config["setting"] == "-" and config["predictor_details"]["trained_masks"] > 0
    preds = list(read_run_predictions(clf.path))
    assert all(len(p["ranked"]) == len(p["surfaces"]) for p in preds)
    analysis = json.loads((clf.path / "analysis.json").read_text())
    assert analysis["top_k"]["5"] >= analysis["top_k"]["1"] == pytest.approx(clf.metrics["AccL"])


def test_hf_fill_mask_without_a_model_folder_says_so():
    with pytest.raises(ValueError, match="needs --model"):
        get_predictor("hf-fill-mask")
