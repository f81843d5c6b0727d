import json
import subprocess
import sys

import pytest

from evaluation.scoring.metrics import binary_f1, express_scores
from evaluation.scoring.parsing import parse_answer, parse_labels
from evaluation.scoring.score_file import score_file
from schemas.lexicon import default_decomposition

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("answer, expected", [
    ("['sad', 'angry']", ["sad", "angry"]),
    ('["sad"]', ["sad"]),
    ("Let me think. The writer lost a friend.\nAnswer: ['sad', 'lonely']", ["sad", "lonely"]),
    ("sad, lonely", ["sad", "lonely"]),
    ("", None),
    (None, None),
])
def test_answers_parse_into_lists(answer, expected):
    assert parse_answer(answer) == expected


def test_gold_labels_read_from_python_list_strings():
    assert parse_labels("['guilty', 'sad']") == ["guilty", "sad"]
    with pytest.raises(ValueError):
        parse_labels("guilty")


def test_wrong_length_answer_is_invalid_and_counts_as_wrong():
    dec = default_decomposition()
    s = express_scores([(["sad", "happy"], ["sad"]), (["happy"], ["happy"])], dec)
    assert s["VRate"] == 0.5 and s["masks"] == 3
    assert s["AccL"] == pytest.approx(1 / 3) and s["F1V"] == pytest.approx(1.0)


def test_all_zero_baseline_matches_only_zero_vector_golds_and_has_f1_zero():
    dec = default_decomposition()
    zero_word, emo_word = "okay", "happy"  # "okay" has the all-zero vector in the decomposition
    assert dec.vector(zero_word) == (0,) * 10 and any(dec.vector(emo_word))
    s = express_scores([([zero_word, emo_word], ["<none>", "<none>"])], dec)
    assert s["AccV"] == 0.5 and s["F1V"] == 0.0 and s["AccL"] == 0.0
    assert binary_f1((0,) * 10, (0,) * 10) == 0.0


def test_express_score_reproduces_released_gpt4o_numbers(shared_reference, tmp_path):
    rows = [json.loads(line) for line in open(shared_reference / "segments_dev.jsonl")]
    preds = tmp_path / "gpt4o.jsonl"
    preds.write_text("".join(json.dumps({"labels": r["labels"], "output": r["gpt4o_output"]}) + "\n" for r in rows))
    out = subprocess.run([sys.executable, "-m", "flows.cli", "score", "--predictions", str(preds)],
                         capture_output=True, text=True, check=True, cwd=REPO)
    got = json.loads(out.stdout)
    assert (got["rows"], got["masks"], got["VRate"]) == (685, 1132, 1.0)
    assert round(got["AccL"], 4) == 0.3375 and round(got["AccV"], 4) == 0.3993 and round(got["F1V"], 4) == 0.7168
    # the same answers through the output-field flag, straight from the reference file
    direct = score_file(shared_reference / "segments_dev.jsonl", default_decomposition(), output_field="gpt4o_output")
    assert direct == got


def test_score_reads_the_release_csv_format(tmp_path):
    csv_file = tmp_path / "p.csv"
    csv_file.write_text('labels,output\n"[\'sad\', \'happy\']","[\'sad\', \'joyful\']"\n')
    s = score_file(csv_file, default_decomposition())
    assert s["AccL"] == 0.5 and s["rows"] == 1


def test_bad_prediction_csv_row_names_its_start_line_after_a_multi_line_answer(tmp_path):
    csv_file = tmp_path / "p.csv"
    reasoning = "Let me think.\nThe writer failed an exam.\nAnswer: ['sad']"  # a chat answer over three lines
    # lines: 1 header, 2-4 the first row, 5 the row whose labels are not a list
    csv_file.write_text(f'labels,output\n"[\'sad\']","{reasoning}"\nsad,"[\'sad\']"\n', newline="")
    with pytest.raises(ValueError, match=r"p\.csv:5: "):
        score_file(csv_file, default_decomposition())
