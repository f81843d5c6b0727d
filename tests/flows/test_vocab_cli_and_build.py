"""`express vocab`, `express vocab check` and the vocabulary's place in a build."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from flows.cli import main
from schemas.vocabulary import default_path, default_vocabulary, vocabulary_version

REPO = Path(__file__).resolve().parents[2]


def test_vocab_prints_version_label_count_and_variant_counts(capsys):
    assert main(["vocab"]) == 0
    out = capsys.readouterr().out
    vocab = default_vocabulary()
    assert vocab.version in out and f"canonical labels: {len(vocab.labels)}" in out
    assert "guilty\t1\tguilt\n" in out
    assert "\nhospital\t" not in out and "  hospital\t" in out  # excluded words are listed apart, with a reason


def test_vocab_check_passes_on_the_shipped_file():
    out = subprocess.run([sys.executable, "-m", "flows.cli", "vocab", "check"], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == ""


def test_vocab_check_fails_naming_the_offending_rows(tmp_path, capsys):
    lines = default_path().read_text(encoding="utf-8").splitlines()
    bad = [("happi\thappi\tstem\tno\t" if ln.startswith("happi\t") else ln) for ln in lines if not ln.startswith("sad\t")]
    broken = tmp_path / "broken.tsv"
    broken.write_text("\n".join(bad) + "\n", encoding="utf-8")
    assert main(["vocab", "check", "--file", str(broken)]) == 2  # a user error (common/errors.py)
    out = capsys.readouterr().out.splitlines()
    happi_line = next(n for n, ln in enumerate(bad, start=1) if ln.startswith("happi\t"))
    assert f"{broken}:{happi_line}: 'happi': a stem cannot be a canonical label" in out
    assert any("'sad': lexicon string has no row" in ln for ln in out)
    assert any("'sadness': label 'sad' has no row of its own" in ln for ln in out)


def test_build_reports_unmapped_words_and_writes_the_vocabulary_version(demo_build):
    manifest = json.loads(Path(demo_build["release"]["manifest"]).read_text())
    assert manifest["vocabulary_version"] == vocabulary_version()
    report = json.loads(Path(demo_build["extract"]["unmapped_report"]).read_text())
    summary = demo_build["extract"]["unmapped"]
    assert report["masks"] == report["mapped"] + report["unmapped"] == summary["masks"]
    assert sum(w["count"] for w in report["words"]) == report["unmapped"] == sum(report["by_reason"].values())
    rows = [r for f in (Path(demo_build["release"]["path"]) / "data").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert sum(len(r["surfaces"]) for r in rows) == report["masks"] > 0
    # the labels as the vocabulary file gives them, read here with the csv module: a mapped surface
    # takes its row's label; an excluded or unknown one stays as written (lower-cased)
    with open(default_path(), newline="", encoding="utf-8") as fh:
        table = {r["surface"]: r["label"] for r in csv.DictReader(fh, delimiter="\t") if r["excluded"] == "no"}
    key = lambda s: " ".join(s.replace("\u2019", "'").lower().split())
    assert [r["labels"] for r in rows] == [[table.get(key(s), key(s)) for s in r["surfaces"]] for r in rows]
    collapsed = sum(table.get(key(s), key(s)) != key(s) for r in rows for s in r["surfaces"])
    assert collapsed > 0  # some surfaces are forms of another label: the check is not the identity
