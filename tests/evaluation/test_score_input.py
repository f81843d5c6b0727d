"""`express score` and `express vocab score` on the files users hand them: renamed fields, another
lexicon, a spreadsheet's byte-order mark, and what must stop with an error naming the file (a
missing field or column, a file without a single prediction). Expected scores are worked by hand."""
import csv
import json

import pytest

from flows.cli import main
from schemas.lexicon import DIMS
from schemas.vocabulary import default_path
from tests.evaluation.test_independent_values import HAND, ROWS

SCORE_KEYS = ("AccL", "AccV", "F1V", "VRate", "rows", "masks")


def _jsonl(path, rows, labels="labels", output="output"):
    path.write_text("".join(json.dumps({labels: g, output: o}) + "\n" for g, o in rows), encoding="utf-8")
    return path


def _csv(path, rows, encoding="utf-8", header=("labels", "output")):
    with open(path, "w", newline="", encoding=encoding) as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows([repr(g), o] for g, o in rows)
    return path


def _scored(capsys, *args) -> dict:
    assert main(["score", *args]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _refused(capsys, command: list[str], *needles: str) -> str:
    """The command exits 2 with one stderr line holding every needle, and prints no scores."""
    assert main(command) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def test_a_csv_with_a_byte_order_mark_scores_as_without_it(tmp_path, capsys):
    path = _csv(tmp_path / "excel.csv", ROWS, encoding="utf-8-sig")
    assert path.read_bytes().startswith(b"\xef\xbb\xbflabels,")
    got = _scored(capsys, "--predictions", str(path))
    assert {k: got[k] for k in SCORE_KEYS} == pytest.approx(HAND, abs=1e-12)


@pytest.mark.parametrize("command", [["score"], ["vocab", "score"]], ids=["score", "vocab-score"])
def test_renamed_fields_are_read_with_labels_field_and_output_field(tmp_path, capsys, command):
    path = _jsonl(tmp_path / "renamed.jsonl", ROWS, labels="gold", output="answer")
    _refused(capsys, [*command, "--predictions", str(path)], f"{path}:1:", "'labels'")
    assert main([*command, "--predictions", str(path), "--labels-field", "gold", "--output-field", "answer"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["AccL"] == pytest.approx(HAND["AccL"], abs=1e-12)
    if command == ["score"]:
        assert {k: got[k] for k in SCORE_KEYS} == pytest.approx(HAND, abs=1e-12)
    csv_path = _csv(tmp_path / "renamed.csv", ROWS, header=("gold", "answer"))
    assert main([*command, "--predictions", str(csv_path), "--labels-field", "gold", "--output-field", "answer"]) == 0
    assert json.loads(capsys.readouterr().out)["AccL"] == pytest.approx(HAND["AccL"], abs=1e-12)


def test_lexicon_replaces_the_shipped_decomposition(tmp_path, capsys):
    """Every word of the hand table but 'blorp' gets the same vector: a vector hit wherever the
    answer is a known word, AccL unchanged. By hand: vector hits 1 + 2 + 0 (invalid row) + 0
    (blorp, the zero vector) + 2 = 5 of 9 masks; F1 1, 1, 1, 0, 1, 1 over the 6 masks of valid rows."""
    lexicon = tmp_path / "one-vector.csv"
    words = ["sad", "happy", "tired", "grateful", "angry", "afraid", "upset", "lonely"]
    lexicon.write_text("word," + ",".join(DIMS) + "\n" + "".join(f"{w},1" + ",0" * 9 + "\n" for w in words))
    path = _jsonl(tmp_path / "p.jsonl", ROWS)
    got = _scored(capsys, "--predictions", str(path), "--lexicon", str(lexicon))
    assert got == pytest.approx({**HAND, "AccV": 5 / 9, "F1V": 5 / 6}, abs=1e-12)
    assert _scored(capsys, "--predictions", str(path)) == pytest.approx(HAND, abs=1e-12)  # the shipped one


def test_vocab_score_counts_a_form_of_the_gold_label_right_canonically(tmp_path, capsys):
    """AccL counts exact words, AccC words that collapse to the same label in the vocabulary file
    (read here with the csv module, not with the code under test)."""
    with open(default_path(), newline="", encoding="utf-8") as fh:
        table = {r["surface"]: (r["label"] if r["excluded"] == "no" else None)
                 for r in csv.DictReader(fh, delimiter="\t")}
    assert table["guilt"] == table["guilty"] == "guilty" and table["sadness"] == table["sad"] == "sad"
    assert table["hospital"] is None and table["happy"] != table["angry"]
    rows = [(["guilty"], "['guilt']"),          # AccL 0, AccC 1
            (["sad"], "['sadness']"),           # 0, 1
            (["sad", "happy"], "sad, angry"),   # 1 + 0, 1 + 0
            (["scared"], "['hospital']")]       # 0, 0 (an excluded word maps to no label)
    path = _jsonl(tmp_path / "p.jsonl", rows)
    assert main(["vocab", "score", "--predictions", str(path)]) == 0
    got = json.loads(capsys.readouterr().out)
    assert (got["AccL"], got["AccC"], got["hits"], got["masks"], got["pred_unmapped"]) == (1 / 5, 3 / 5, 3, 5, 1)


@pytest.mark.parametrize("command", [["score"], ["vocab", "score"]], ids=["score", "vocab-score"])
@pytest.mark.parametrize("name,content", [
    ("empty.jsonl", ""),
    ("blank.jsonl", "\n\n"),
    ("empty.csv", ""),
    ("header-only.csv", "labels,output\n"),
], ids=["empty-jsonl", "blank-lines", "empty-csv", "header-only-csv"])
def test_a_file_without_predictions_is_an_error_not_a_score_of_zero(tmp_path, capsys, command, name, content):
    path = tmp_path / name
    path.write_text(content)
    _refused(capsys, [*command, "--predictions", str(path)], str(path), "no predictions")


def test_a_row_missing_a_field_or_a_csv_missing_a_column_names_the_file(tmp_path, capsys):
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"labels": ["sad"], "output": "sad"}) + "\n" + json.dumps({"labels": ["sad"]}) + "\n")
    _refused(capsys, ["score", "--predictions", str(jsonl)], f"{jsonl}:2:", "'output'")
    no_column = tmp_path / "p.csv"
    no_column.write_text("labels,answer\n\"['sad']\",sad\n")
    _refused(capsys, ["score", "--predictions", str(no_column)], str(no_column), "no column 'output'")
    _refused(capsys, ["score", "--predictions", str(tmp_path / "missing.jsonl")], "missing.jsonl")


def test_a_null_answer_is_an_error_naming_its_line_unless_a_run_says_its_request_failed(tmp_path, capsys):
    """A gap in a user's file is not a wrong answer; a run's failed request carries its error and
    counts as invalid, as the run scored it."""
    gap = tmp_path / "gap.jsonl"
    gap.write_text(json.dumps({"labels": ["sad"], "output": "['sad']"}) + "\n"
                   + json.dumps({"labels": ["happy"], "output": None}) + "\n", encoding="utf-8")
    _refused(capsys, ["score", "--predictions", str(gap)], f"{gap}:2:", "'output' is null")
    failed = tmp_path / "failed.jsonl"
    failed.write_text(json.dumps({"labels": ["sad"], "output": "['sad']"}) + "\n"
                      + json.dumps({"labels": ["happy"], "output": None, "error": "501 after 1 attempts"}) + "\n",
                      encoding="utf-8")
    scores = _scored(capsys, "--predictions", str(failed))
    assert scores["rows"] == 2 and scores["VRate"] == 0.5 and scores["AccL"] == 0.5


@pytest.mark.parametrize("command", [["score"], ["vocab", "score"]], ids=["score", "vocab-score"])
def test_a_row_without_gold_words_is_an_error_naming_its_line_not_a_score_of_zero_masks(tmp_path, capsys, command):
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text(json.dumps({"labels": ["sad"], "output": "['sad']"}) + "\n"
                     + json.dumps({"labels": [], "output": "[]"}) + "\n", encoding="utf-8")
    _refused(capsys, [*command, "--predictions", str(jsonl)], f"{jsonl}:2:", "'labels' is empty")
    csv_file = tmp_path / "p.csv"
    csv_file.write_text("labels,output\n\"[]\",sad\n", encoding="utf-8")
    _refused(capsys, [*command, "--predictions", str(csv_file)], f"{csv_file}:2:", "'labels' is empty")
