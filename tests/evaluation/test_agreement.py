"""Agreement statistics against textbook examples, and `express agreement` on rater files."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.agreement import agreement, cohen_kappa, fleiss_kappa, krippendorff_alpha_nominal, read_ratings

REPO = Path(__file__).resolve().parents[2]

# Fleiss (1971) as worked in most textbooks: 10 items, 14 raters, 5 categories; kappa = 0.210.
FLEISS_TABLE = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
# Krippendorff (2011), "Computing Krippendorff's alpha": 4 coders, 12 units, missing values; nominal alpha = 0.743.
KRIPP = ["1 2 3 3 2 1 4 1 2 . . .", "1 2 3 3 2 2 4 1 2 5 . 3", ". 3 3 3 2 3 4 2 2 5 1 .", "1 2 3 3 2 4 4 1 2 5 1 ."]


def test_cohen_kappa_on_the_two_by_two_textbook_table():
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 -> p_o 0.7, p_e 0.5, kappa 0.4
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == 1.0


def test_fleiss_kappa_on_the_fleiss_1971_example():
    assert round(fleiss_kappa(FLEISS_TABLE), 3) == 0.210
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[1, 1], [3, 0]])


def test_krippendorff_alpha_on_the_krippendorff_2011_example():
    coders = [row.split() for row in KRIPP]
    units = [[c[i] for c in coders if c[i] != "."] for i in range(12)]
    assert round(krippendorff_alpha_nominal(units), 3) == 0.743


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
