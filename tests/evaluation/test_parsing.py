"""Robust answer parsing: lists in many shapes, reasoning before the answer, INVALID on wrong counts."""
import pytest

from evaluation.scoring.metrics import express_scores
from evaluation.scoring.parsing import parse_answer, parse_ranked
from schemas.lexicon import default_decomposition


@pytest.mark.parametrize("answer, expected", [
    ('["Sad", "lonely"]', ["Sad", "lonely"]),
    ("('sad', 'lonely')", ["sad", "lonely"]),
    ("[sad, lonely]", ["sad", "lonely"]),
    ("```json\n[\"sad\", \"lonely\"]\n```", ["sad", "lonely"]),
    ("'sad', 'lonely'", ["sad", "lonely"]),
    ("1. sad\n2. lonely", ["sad", "lonely"]),
    ("sad, lonely.", ["sad", "lonely"]),
    ("Step 1: the writer was left alone.\nStep 2: so they felt down.\nFinal answer: sad, lonely", ["sad", "lonely"]),
    ("The writer lost a job, which hurts.\nSo: ['sad', 'lonely']", ["sad", "lonely"]),
    ("Thinking it over, they were probably upset with everyone around.\nsad, lonely", ["sad", "lonely"]),
    ("I cannot determine the emotions from this text.", None),
])
def test_answers_in_many_shapes_parse_into_word_lists(answer, expected):
    assert parse_answer(answer) == expected


def test_prose_refusal_and_wrong_count_are_invalid_rows():
    dec = default_decomposition()
    rows = [(["sad"], parse_answer("I am not able to help with that request.")),
            (["sad"], parse_answer("['sad', 'happy']")),
            (["sad"], parse_answer("Answer: ['sad']"))]
    s = express_scores(rows, dec)
    assert s["VRate"] == pytest.approx(1 / 3) and s["AccL"] == pytest.approx(1 / 3)


def test_ranked_answers_read_from_lists_or_json():
    assert parse_ranked([["sad", "upset"], ["lonely"]]) == [["sad", "upset"], ["lonely"]]
    assert parse_ranked('[["sad"]]') == [["sad"]]
    assert parse_ranked("['sad']") is None and parse_ranked(["sad"]) is None
