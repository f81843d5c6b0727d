"""Canonical-level accuracy (AccC) beside the paper's surface-level AccL."""
import json

from evaluation.scoring.canonical import canonical_accuracy, canonical_hits, canonical_scores
from evaluation.scoring.metrics import express_scores
from evaluation.scoring.parsing import parse_answer
from schemas.lexicon import default_decomposition
from schemas.vocabulary import default_vocabulary


def test_a_variant_of_the_gold_word_is_right_canonically_but_wrong_for_accl():
    pairs = [(["guilty", "sad"], ["guilt", "happy"])]
    assert express_scores(pairs, default_decomposition())["AccL"] == 0.0
    assert canonical_accuracy(pairs) == 0.5
    assert canonical_hits(["Worried"], ["worry"], default_vocabulary()) == 1


def test_invalid_rows_and_unmappable_predictions_count_as_wrong_over_all_masks():
    pairs = [(["scared", "tired"], ["scare"]),          # wrong length: both masks wrong
             (["sad"], None),                           # no list at all
             (["happy"], ["exhausted"]),                # prediction outside the vocabulary
             (["hospital"], ["hospital"]),              # gold is excluded: it can never be matched
             (["anxious"], ["anxiety"])]                # the only hit
    s = canonical_scores(pairs)
    assert (s["rows"], s["masks"], s["hits"]) == (5, 6, 1)
    assert s["AccC"] == 1 / 6 and s["gold_unmapped"] == 1 and s["pred_unmapped"] == 2
    assert canonical_accuracy([]) == 0.0


def test_released_gpt4o_answers_score_at_least_as_well_canonically(shared_reference):
    rows = [json.loads(line) for line in open(shared_reference / "segments_dev.jsonl")]
    pairs = [(r["labels"], parse_answer(r["gpt4o_output"])) for r in rows]
    accl = express_scores(pairs, default_decomposition())["AccL"]
    s = canonical_scores(pairs)
    assert s["gold_unmapped"] == 0 and s["masks"] == 1132
    assert s["AccC"] > accl
