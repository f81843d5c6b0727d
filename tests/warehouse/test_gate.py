"""The quality gate: GX really validates, failures publish nothing and say what failed where."""
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from common.parquet import ParquetSink
from schemas.config import GateConfig, Recipe
from schemas.records import EXAMPLES, Example
from warehouse.releases import catalog
from warehouse.releases.catalog import list_views
from schemas.vocabulary import Vocabulary
from warehouse.gate.suite import js_divergence, run_gate
from warehouse.layout import Warehouse
from warehouse.releases.publish import GateFailed, publish_release

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

WORDS = ("sad", "happy", "guilty", "scared", "tired", "lonely", "proud", "calm")
EXPECTATIONS = Path(__file__).resolve().parents[2] / "schemas" / "expectations"
SUITE_FILE = lambda name: json.loads((EXPECTATIONS / f"{name}.json").read_text())  # the suite as shipped


def _ex(pid, seg, word, text=None, masked=None, labels=None):
    text = text or f"Today I feel {word} about it."
    return Example(pid, seg, "sub", 0, text, masked or text.replace(word, "<mask>"), [word], labels or [word], ["family1"])


def _write(path, examples):
    with ParquetSink(path, EXAMPLES) as sink:
        for e in examples:
            sink.write(e.to_row())
    return path


def _good(n=40):
    return [_ex(f"p{i}", 0, WORDS[i % len(WORDS)]) for i in range(n)]


def _failures_by_check(summary):
    return {f["check"]: f for f in summary["failures"]}


def test_bad_examples_fail_the_gate_and_publish_nothing(tmp_path):
    bad = _good() + [
        _ex("x1", 0, "sad", text="I feel sad, mail me at jo@example.com"),          # PII: e-mail
        _ex("x2", 0, "sad", text="I feel sad, see https://example.org/x"),          # PII: URL
        _ex("x3", 0, "sad", text="I feel sad says u/someone_else"),                 # PII: user handle
        _ex("x4", 0, "happy", masked="I feel <mask> and <mask>"),                   # 2 masks, 1 label
        _ex("x5", 0, "blorptastic"),                                                # label not in vocabulary
        _ex("p1", 0, "happy"),                                                      # duplicate id
    ]
    wh = Warehouse.at(tmp_path / "wh")
    with pytest.raises(GateFailed) as err:
        publish_release(_write(tmp_path / "ex.parquet", bad), wh, Recipe(), {"funnel": {}})
    msg = str(err.value)
    assert "nothing published" in msg
    assert "no PII pattern left in text" in msg and "jo@example.com" in msg
    assert "number of <mask> tokens equals number of labels" in msg
    assert "every label in the vocabulary" in msg and "blorptastic" in msg
    assert "(post_id, segment_index) unique" in msg
    # nothing published: no version, no temporary folder, no catalog view
    assert wh.versions("express") == [] and not list(wh.dataset_dir("express").glob("v*"))
    assert not list(wh.dataset_dir("express").glob(".tmp-*"))
    assert list_views(wh) == []
    # the GX results are kept for inspection, outside the release tree
    results = json.loads((err.value.results_dir / "results.json").read_text())
    checks = _failures_by_check(results["summary"])
    assert checks["no PII pattern left in text"]["unexpected_count"] == 3
    assert checks["every label in the vocabulary"]["unexpected_count"] == 1
    assert checks["number of <mask> tokens equals number of labels"]["unexpected_count"] == 1
    assert any(r["success"] is False for gx in results["gx"] for r in gx["results"])


def test_post_in_two_splits_label_share_and_vocabulary_are_checked_by_gx(tmp_path):
    train = _write(tmp_path / "train.parquet", _good())
    test = _write(tmp_path / "test.parquet", [_ex("p3", 1, "sad")] + [_ex(f"t{i}", 0, "sad") for i in range(30)])
    vocab = Vocabulary.from_labels("tiny", "0", frozenset(WORDS) - {"calm"})
    result = run_gate({"train": train, "test": test}, GateConfig(max_label_share=0.5, min_masks_for_distribution=0,
                                                                 data_docs=False), tmp_path / "gate", vocabulary=vocab)
    checks = _failures_by_check(result.summary)
    assert not result.success
    assert checks["no post id in two splits"]["unexpected_count"] == 2  # p3 in train and in test
    assert checks["no single label above the configured share"]["examples"] == [
        {"label": "sad", "share": pytest.approx(36 / 71)}]
    assert {"post_id": "p3", "segment_index": 1} in [
        {k: e[k] for k in ("post_id", "segment_index")} for e in checks["no post id in two splits"]["examples"]]
    assert checks["every label in the vocabulary"]["unexpected_count"] == 5  # "calm" rows
    assert result.summary["vocabulary"] == {"name": "tiny", "version": "0", "size": 7}


def test_label_drift_against_the_parent_release_is_bounded(tmp_path):
    files = {"test": _write(tmp_path / "t.parquet", _good())}
    same = Counter({w: 5 for w in WORDS})
    shifted = Counter({"sad": 100, "happy": 1})
    ok = run_gate(files, GateConfig(min_masks_for_distribution=0, data_docs=False), tmp_path / "g1", parent=("v1", same))
    bad = run_gate(files, GateConfig(max_js_divergence=0.1, min_masks_for_distribution=0, data_docs=False), tmp_path / "g2",
                   parent=("v1", shifted))
    assert ok.success and ok.summary["label_js_divergence"] == pytest.approx(0.0, abs=1e-9)
    assert not bad.success
    assert "label-distribution drift" in bad.message()
    assert bad.summary["label_js_divergence"] == pytest.approx(js_divergence(Counter({w: 5 for w in WORDS}), shifted))


def test_passing_gate_results_and_data_docs_are_stored_in_the_release(tmp_path):
    wh = Warehouse.at(tmp_path / "wh")
    rel = publish_release(_write(tmp_path / "ex.parquet", _good(80)), wh, Recipe(), {"funnel": {}})
    m = rel.manifest()
    assert m["gate"]["success"] and m["gate"]["results"] == "gate/results.json"
    gx = json.loads((rel.path / "gate" / "results.json").read_text())["gx"]
    assert {r["expectation_config"]["type"] for g in gx for r in g["results"]} >= {
        "expect_column_values_to_not_be_null", "expect_column_pair_values_to_be_equal",
        "expect_column_values_to_be_in_set", "expect_column_values_to_be_between"}
    assert (rel.path / "gate" / "data_docs" / "index.html").exists()
    assert m["vocabulary"]["name"] == "express-vocabulary" and m["parent_version"] is None


def test_test_only_mode_puts_every_example_in_test(tmp_path):
    recipe = replace(Recipe(), splits=replace(Recipe().splits, test_only=True), gate=GateConfig(enabled=False))
    wh = Warehouse.at(tmp_path / "wh")
    rel = publish_release(_write(tmp_path / "ex.parquet", _good(50)), wh, recipe, {})
    assert rel.manifest()["rows"] == {"test": 50} and rel.manifest()["split_mode"] == "test_only"
    assert list(rel.split_files()) == ["test"]
    con = catalog.connect(wh)
    assert con.execute("SELECT count(*) FROM express_v1_test").fetchone()[0] == 50


def test_label_share_bound_is_skipped_below_the_minimum_number_of_masks(tmp_path):
    lopsided = _write(tmp_path / "t.parquet", [_ex(f"p{i}", 0, "sad" if i % 3 else "happy") for i in range(30)])
    small = run_gate({"test": lopsided}, GateConfig(max_label_share=0.5, data_docs=False), tmp_path / "g1")
    assert small.success and small.summary["distribution_checks"].startswith("skipped: 30 masks")
    strict = run_gate({"test": lopsided}, GateConfig(max_label_share=0.5, min_masks_for_distribution=30, data_docs=False),
                      tmp_path / "g2")
    assert not strict.success and "no single label above the configured share" in json.dumps(strict.summary["failures"])


def test_gate_in_small_chunks_reports_what_one_batch_reports(tmp_path):
    """Row-level tables reach GX in chunks (bounded memory): failures, counts and the cross-row
    checks (an id repeated in another chunk, a post in two splits) come out as from one batch."""
    train = _write(tmp_path / "train.parquet", _good(30) + [
        _ex("x1", 0, "sad", text="I feel sad, mail me at jo@example.com"),
        _ex("p2", 0, "happy"),                                                   # id repeated 28 rows later
        _ex("x5", 0, "blorptastic")])
    test = _write(tmp_path / "test.parquet", [_ex(f"t{i}", 0, "calm") for i in range(12)] + [
        _ex("x9", 0, "sad", text="I feel sad, see https://example.org/x"), _ex("p7", 1, "sad")])
    files = {"train": train, "test": test}
    cfg = GateConfig(min_masks_for_distribution=0, max_label_share=1.0, data_docs=False)
    whole = run_gate(files, cfg, tmp_path / "whole")
    chunked = run_gate(files, replace(cfg, chunk_rows=7), tmp_path / "chunked")
    assert not whole.success and not chunked.success
    (examples_suite,) = [s for s in whole.summary["suites"] if s["table"] == "examples"]
    assert examples_suite["statistics"]["evaluated_expectations"] == len(SUITE_FILE("examples")["expectations"]) > 0
    for got in (whole, chunked):
        checks = _failures_by_check(got.summary)
        assert set(checks) == {"no PII pattern left in text", "no PII pattern left in masked_text",
                               "example ids (post_id, segment_index) unique", "no post id in two splits",
                               "every label in the vocabulary"}
        assert checks["no PII pattern left in text"]["unexpected_count"] == 2
        assert checks["example ids (post_id, segment_index) unique"]["unexpected_count"] == 2
        assert checks["no post id in two splits"]["unexpected_count"] == 2  # p7 in train and in test
        assert checks["every label in the vocabulary"]["rows"] == 47
    pick = lambda r: {f["check"]: (f["unexpected_count"], f["rows"], round(f["unexpected_percent"], 6))
                      for f in r.summary["failures"]}
    assert pick(chunked) == pick(whole)
    gx = json.loads((tmp_path / "chunked" / "results.json").read_text())["gx"]
    assert gx[0]["meta"]["chunks"] == 7  # 47 example rows / 7
    # rows are gathered across the split files (the texts, read per split file, do not reach GX)
    assert whole.summary["chunks"] == {"examples": 1, "labels": 1} and whole.summary["text_reads"] == 2


def test_an_examples_chunk_hashes_and_carries_the_texts_facts_not_the_texts():
    """GX fingerprints every batch with pandas' hash and pickles the whole chunk when a column cannot
    be hashed (label arrays could not); the texts themselves never reach GX, their checked facts do."""
    import pandas as pd
    import pyarrow as pa

    from warehouse.gate.suite import _checked_facts, _frame

    table = pa.Table.from_pylist([e.to_row() for e in _good(8)], schema=EXAMPLES)
    facts = pa.table({"n_rows_of_id": [1] * 8, "n_splits_of_post": [1] * 8})
    frame = _frame([_checked_facts(table, facts, "train", None)], examples=True)
    assert len(pd.util.hash_pandas_object(frame, index=True)) == 8
    assert frame["labels"].tolist() == [tuple(e.labels) for e in _good(8)]
    assert "text" not in frame and "masked_text" not in frame
    assert frame["text_chars"].tolist() == [len(e.text) for e in _good(8)]
    assert frame["masked_text_chars"].tolist() == [len(e.masked_text) for e in _good(8)]
