"""Knowledge cutoffs (docs/live.md): from --cutoff, else the first entry of the cutoffs files naming the
model (none guessed); every metric split into rows posted before and after it, with the difference and
a bootstrap interval, or, when a side is short, a sentence instead of a number."""
import json
from pathlib import Path

import pytest

from evaluation.live.cutoffs import CUTOFFS_FILE, load_cutoffs, resolve_cutoff
from evaluation.outputs.report import write_report
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from evaluation.scoring.score_file import score_file
from evaluation.live.window import iso
from flows.cli import main
from schemas.config import LiveFields, utc_seconds
from schemas.lexicon import default_decomposition
from warehouse.layout import Warehouse

T0 = 1700000000  # the tiny release's post i was posted at T0 + i
METRICS = ("AccL", "AccV", "F1V", "VRate")


def test_the_shipped_file_gives_a_listed_models_cutoff_and_none_to_a_model_it_does_not_list():
    table = load_cutoffs()
    assert table.version and table.entries and all(e.source and e.stated for e in table.entries)
    mini = resolve_cutoff("gpt-4o-mini-2024-07-18")
    assert "'gpt-4o-mini*'" in mini["source"] and mini["stated"]
    assert "'*llama3.1*'" in resolve_cutoff("llama3.1:8b")["source"]  # Ollama's name
    unlisted = resolve_cutoff("smollm2")
    assert unlisted["cutoff"] is None and "'smollm2' is not in" in unlisted["source"] and "--cutoff" in unlisted["source"]
    assert resolve_cutoff("")["cutoff"] is None


def test_a_users_file_comes_before_the_shipped_one_and_cutoff_before_both(tmp_path):
    mine = tmp_path / "cutoffs.toml"
    mine.write_text('version = "mine-1"\n[[models]]\npattern = "gpt-4o*"\ncutoff = "2024-03-01"\n'
                    '[[models]]\npattern = "smol*"\ncutoff = "2024-06-01"\n')
    shipped = resolve_cutoff("gpt-4o")["cutoff"]
    assert resolve_cutoff("gpt-4o", cutoffs_file=str(mine))["cutoff"] == "2024-03-01" != shipped
    assert resolve_cutoff("SmolLM2-135M", cutoffs_file=str(mine))["cutoff"] == "2024-06-01"  # case-insensitive
    assert resolve_cutoff("gpt-4o", cutoff="2022-01-01", cutoffs_file=str(mine)) == \
        {"cutoff": "2022-01-01", "source": "--cutoff"}


@pytest.mark.parametrize(("entries", "said"), [
    ('[[models]]\npattern = "a*"\ncutoff = "2024-01-01"\n[[models]]\npattern = "b*"\ncutoff = "June"\n',
     "[[models]] #2 (b*) cutoff: 'June' is not a date"),
    ("models = 5\n", ": `models` must be [[models]] tables, got 5"),
    ('[[models]]\npattern = "a*"\ncutoff = "0001-01-01"\n', "[[models]] #1 (a*) cutoff: '0001-01-01' is out of range"),
    ('[[models]]\npattern = "a*"\ncutoff = "2024-01-01"\nstated = 2023\n',
     "[[models]] #1 (a*): `stated` must be a string, got 2023"),
], ids=["not-a-date", "models-a-number", "year-one", "stated-a-number"])
def test_a_bad_cutoffs_file_stops_evaluate_in_one_line_naming_the_file_and_the_entry(tiny_release, tmp_path,
                                                                                     capsys, entries, said):
    bad = tmp_path / "cutoffs.toml"
    bad.write_text(CUTOFFS_FILE.read_text().split("[[models]]")[0] + entries)
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--cutoffs", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "internal error" not in err
    assert f"{bad}{said}" in err or f"{bad} {said}" in err


def test_the_cutoffs_file_docs_live_md_shows_loads_as_it_is(tmp_path):
    """The page's example, copied into a file of one's own, is a cutoffs file the reader takes."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "live.md").read_text()
    example = []
    for line in page.split("one `[[models]]` table per entry:\n", 1)[1].splitlines():
        if line and not line.startswith("    "):  # the prose after the indented block
            break
        example.append(line.removeprefix("    "))
    assert "[[models]]" in example
    mine = tmp_path / "cutoffs.toml"
    mine.write_text("\n".join(example) + "\n")
    table = load_cutoffs(mine)
    assert table.version and [e.pattern for e in table.entries] == ["*llama-3.1*"]


def split_run(tiny_release, cutoff: int, min_rows: int):
    return evaluate_release(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"], EvalRequest(
        "context-lexicon", bootstrap=200, live=LiveFields(cutoff=iso(cutoff), cutoff_min_rows=min_rows)))


def side_scores(run, tmp_path: Path, keep) -> dict:
    """What `express score` says of the run's rows on one side: another path to the same numbers."""
    path = tmp_path / f"side-{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in read_run_predictions(run.path) if keep(p["created_utc"])))
    return score_file(path, default_decomposition())


def test_a_cutoff_between_the_rows_splits_every_metric_with_the_difference_and_its_interval(tiny_release, tmp_path):
    cutoff = T0 + 24
    run = split_run(tiny_release, cutoff, min_rows=3)
    split = json.loads((run.path / "analysis.json").read_text())["cutoff"]
    before = side_scores(run, tmp_path, lambda t: t < cutoff)
    after = side_scores(run, tmp_path, lambda t: t >= cutoff)
    assert split["before"]["rows"] == before["rows"] >= 3 and split["after"]["rows"] == after["rows"] >= 3
    for m in METRICS:
        assert split["before"][m] == pytest.approx(before[m]) and split["after"][m] == pytest.approx(after[m])
        diff = split["difference"][m]
        assert diff["value"] == pytest.approx(after[m] - before[m])
        lo, hi = diff["interval"]
        assert -1 <= lo <= hi <= 1
    assert any(split["difference"][m]["interval"][0] < split["difference"][m]["interval"][1] for m in METRICS)
    report = write_report(run.path).read_text()
    assert "## Before and after the knowledge cutoff" in report and f"Cutoff {iso(cutoff)} (--cutoff" in report
    for m in METRICS:
        d = split["difference"][m]
        assert f"| {d['value']:+.4f} | {d['interval'][0]:+.4f} to {d['interval'][1]:+.4f} |" in report


def test_a_side_without_rows_or_with_too_few_gives_a_sentence_instead_of_a_number(tiny_release):
    runs = {"none before": split_run(tiny_release, T0 - 86400, min_rows=3),
            "too few": split_run(tiny_release, T0 + 24, min_rows=1000)}
    said = {}
    for name, run in runs.items():
        split = json.loads((run.path / "analysis.json").read_text())["cutoff"]
        assert split["difference"] is None
        said[name] = split["note"]
        report = write_report(run.path).read_text()
        assert f"No difference is given: {split['note']}." in report and "| not told |" in report
    assert said["none before"].startswith(f"every row was posted on or after the cutoff {iso(T0 - 86400)}")
    assert said["too few"].startswith("too few rows to tell") and "1000 needed on each side" in said["too few"]


def test_a_run_without_a_cutoff_says_where_to_give_one(tiny_release):
    run = evaluate_release(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"],
                           EvalRequest("most-frequent", bootstrap=0))
    config = json.loads((run.path / "config.json").read_text())
    assert config["cutoff"]["cutoff"] is None and "cutoff" not in json.loads((run.path / "analysis.json").read_text())
    assert "No cutoff: the predictor has no model name; give --cutoff DATE." in write_report(run.path).read_text()
    assert utc_seconds("2024-02-01") == utc_seconds("2024-02-01T00:00:00Z") == utc_seconds("2024-02-01T01:00:00+01:00")
