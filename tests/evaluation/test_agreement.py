"""`express agreement` and `evaluation.scoring.agreement` on rater files (the coefficients: tests/schemas)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from common.agreement import cohen_kappa
from evaluation.scoring.agreement import agreement, read_ratings

REPO = Path(__file__).resolve().parents[2]

# Krippendorff (2011), "Computing Krippendorff's alpha": 4 coders, 12 units, missing values; nominal alpha = 0.743.
KRIPP = ["1 2 3 3 2 1 4 1 2 . . .", "1 2 3 3 2 2 4 1 2 5 . 3", ". 3 3 3 2 3 4 2 2 5 1 .", "1 2 3 3 2 4 4 1 2 5 1 ."]


def _write_raters(tmp_path: Path) -> list[str]:
    coders = [row.split() for row in KRIPP]
    files = []
    for n, coder in enumerate(coders):
        f = tmp_path / f"rater{n}.csv"
        f.write_text("id,label\n" + "".join(f"u{i},{'' if v == '.' else v}\n" for i, v in enumerate(coder)))
        files.append(str(f))
    return files


def test_agreement_over_rater_files_handles_missing_ratings(tmp_path):
    files = _write_raters(tmp_path)
    result = agreement(files)
    assert round(result["krippendorff_alpha"], 3) == 0.743
    assert result["items"] == 12 and result["fleiss_items"] == 8  # units 1-8 are rated by all four coders
    first = result["pairs"][0]
    coders = [row.split() for row in KRIPP]
    both = [i for i in range(12) if coders[0][i] != "." and coders[1][i] != "."]
    assert first["items"] == len(both)
    assert first["cohen_kappa"] == pytest.approx(cohen_kappa([coders[0][i] for i in both], [coders[1][i] for i in both]))


def test_express_agreement_command_prints_all_three_statistics(tmp_path):
    files = _write_raters(tmp_path)
    out = subprocess.run([sys.executable, "-m", "flows.cli", "agreement", *files, "--json"],
                         capture_output=True, text=True, check=True, cwd=REPO)
    got = json.loads(out.stdout)
    assert len(got["pairs"]) == 6 and round(got["krippendorff_alpha"], 3) == 0.743
    text = subprocess.run([sys.executable, "-m", "flows.cli", "agreement", *files[:2]],
                          capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert "Cohen's kappa" in text and "Fleiss' kappa" in text and "Krippendorff's alpha" in text


def test_bad_rater_file_names_file_and_line(tmp_path):
    bad = tmp_path / "r.jsonl"
    bad.write_text('{"id": 1, "label": "sad"}\n{oops\n')
    with pytest.raises(ValueError, match=r"r.jsonl:2"):
        read_ratings(bad)


def test_bad_rater_csv_row_names_its_start_line_after_a_multi_line_field(tmp_path):
    bad = tmp_path / "r.csv"
    # lines: 1 header, 2-4 u1 (a quoted label over three lines), 5 blank, 6 u2, 7 u1 again
    bad.write_text('id,label\nu1,"sad\nreally\nsad"\n\nu2,happy\nu1,angry\n', newline="")
    with pytest.raises(ValueError, match=r"r\.csv:7: item 'u1' rated twice"):
        read_ratings(bad)
