"""End-to-end: the real Prefect flows on the demo corpus (built once per session)."""
import ast
import csv
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
import zstandard

REPO = Path(__file__).resolve().parents[2]


def _demo_dump_lines(demo_dump: Path) -> list[bytes]:
    """The demo dump's lines, decompressed here (not with the reader under test)."""
    return zstandard.ZstdDecompressor().decompressobj().decompress(demo_dump.read_bytes()).splitlines()


def _is_post(line: bytes) -> bool:
    try:
        row = json.loads(line)
    except ValueError:
        return False
    return isinstance(row, dict) and bool(row.get("id"))


def test_build_funnel_adds_up_and_is_in_the_manifest(demo_build, demo_dump):
    manifest = json.loads(Path(demo_build["release"]["manifest"]).read_text())
    f = manifest["funnel"]
    lines = _demo_dump_lines(demo_dump)
    assert f["read"] == len(lines) == f["kept"] + sum(f["dropped"].values()) + f["malformed"]
    assert f["malformed"] == sum(not _is_post(line) for line in lines) > 0
    for reason in ("deleted", "removed", "nsfw", "bot", "duplicate", "no_disclosure", "only_negated"):
        assert f["dropped"].get(reason, 0) > 0, reason
    assert f["kept"] == sum(manifest["rows"].values())
    assert manifest["inputs"][0]["sha256"] and manifest["code_version"]
    quarantine = pq.read_table(Path(demo_build["ingest"]["quarantine"])).to_pylist()
    assert sum(1 for q in quarantine if q["stage"] == "ingest") == f["read"] - demo_build["ingest"]["funnel"]["kept"]
    assert all(q["source_line"] > 0 for q in quarantine)
    # posts dropped at extraction are quarantined by id: their text stays stored once, in raw_posts
    extract_q = pq.read_table(Path(demo_build["ingest"]["quarantine"]).with_name("extract.parquet")).to_pylist()
    raw_ids = {i for p in demo_build["ingest"]["raw_posts"] for i in pq.read_table(p, columns=["id"]).column("id").to_pylist()}
    assert len(extract_q) == sum(demo_build["extract"]["funnel"]["dropped"].values()) > 0
    assert all(q["raw"] is None and q["post_id"] in raw_ids for q in extract_q)


def test_release_masks_match_labels_and_author_never_published(demo_build):
    rel = Path(demo_build["release"]["path"])
    split_files = sorted((rel / "data").glob("*.parquet"))
    assert [p.name.split("-")[0] for p in split_files] == ["test", "train", "validation"]
    rows = 0
    for split_file in split_files:
        t = pq.read_table(split_file)
        assert "author" not in t.column_names
        for row in t.to_pylist():
            assert row["masked_text"].count("<mask>") == len(row["labels"]) == row["n_masks"] >= 1
            rows += 1
    assert rows == sum(json.loads((rel / "manifest.json").read_text())["rows"].values()) > 0


def test_duckdb_and_datasets_read_the_release(demo_build):
    rel = Path(demo_build["release"]["path"])
    manifest = json.loads((rel / "manifest.json").read_text())
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{rel}/data/*.parquet')").fetchall()[0][0]
    assert n == sum(manifest["rows"].values())
    from datasets import load_dataset

    files = {s: str(rel / "data" / f"{s}-00000-of-00001.parquet") for s in ("train", "validation", "test")}
    ds = load_dataset("parquet", data_files=files)
    assert {s: ds[s].num_rows for s in files} == manifest["rows"]


def test_an_evaluation_stores_a_run_whose_metrics_match_express_score(demo_build):
    from evaluation.commands import evaluate
    from evaluation.run import EvalRequest

    rel = demo_build["release"]
    out = evaluate(demo_build["warehouse"], f"{rel['dataset']}/{rel['version']}", EvalRequest("most-frequent").params())
    run = Path(out["path"])
    stored = json.loads((run / "metrics.json").read_text())
    assert stored == out["metrics"] and stored["rows"] == json.loads(Path(rel["manifest"]).read_text())["rows"]["test"]
    cli = subprocess.run([sys.executable, "-m", "flows.cli", "score", "--predictions", str(run / "predictions.jsonl")],
                         capture_output=True, text=True, check=True, cwd=REPO)
    assert json.loads(cli.stdout) == stored
    assert stored == pytest.approx(_scored_by_hand(run / "predictions.jsonl"), abs=1e-12)  # a second implementation
    assert 0 < stored["AccL"] < 1 and stored["VRate"] == 1.0


def _scored_by_hand(predictions: Path) -> dict:
    """AccL, AccV, F1V, VRate as docs/evaluation.md defines them, written apart from evaluation/:
    vectors read from the shipped CSV with the csv module, the answer (a Python list from
    most-frequent) read with ast.literal_eval."""
    with open(REPO / "schemas" / "data" / "lexicon-decomposition.csv", newline="") as fh:
        vectors = {r.pop("word").lower(): tuple(int(float(v)) for v in r.values()) for r in csv.DictReader(fh)}
    zero = (0,) * 10
    rows = valid = masks = valid_masks = word_hits = vector_hits = 0
    f1_sum = 0.0
    for line in predictions.read_text().splitlines():
        row = json.loads(line)
        gold, answer = [g.lower() for g in row["surfaces"]], ast.literal_eval(row["output"])
        rows, masks = rows + 1, masks + len(gold)
        if not isinstance(answer, list) or len(answer) != len(gold):
            continue
        valid, valid_masks = valid + 1, valid_masks + len(gold)
        for g, p in zip(gold, (str(a).lower() for a in answer), strict=True):
            gv, pv = vectors.get(g, zero), vectors.get(p, zero)
            word_hits += g == p
            vector_hits += gv == pv
            tp = sum(a and b for a, b in zip(gv, pv, strict=True))
            wrong = sum(a != b for a, b in zip(gv, pv, strict=True))
            f1_sum += 2 * tp / (2 * tp + wrong) if tp else 0.0
    return {"AccL": word_hits / masks, "AccV": vector_hits / masks, "F1V": f1_sum / valid_masks,
            "VRate": valid / rows, "rows": rows, "masks": masks}
