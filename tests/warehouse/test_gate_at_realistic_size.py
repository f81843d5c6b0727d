"""The quality gate at realistic size: 25,000 examples of 100-300-word posts pass the gate and
publish with bounded memory (it used to die with DuckDB "Out of Memory" in the gate's chunks).

The bound is on what the allocator cannot change: the peak of the Python heap while publishing
(tracemalloc counts the bytes Python and numpy ask for, whatever malloc keeps or returns; the RSS
growth, which the allocator does change, is a benchmark figure: bench/gate.py, bench/README.md).
The publish runs in a fresh process, after a small release has loaded Great Expectations."""
import json
import os
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from common.parquet import ParquetSink
from schemas.config import GateConfig
from schemas.records import EXAMPLES, MASK
from sources.synthetic import synthetic_examples
from tests.fresh_python import run_until_idle
from warehouse.gate.suite import run_gate

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_N = 25_000
# The gate reads the texts `chunk_mb` at a time and hands GX only their checked facts, so the Python
# heap holds about one read of texts: measured 16.7 MB at chunk_mb 16 (8.7 at 4, 33.3 at 32) for
# 43 MB of texts and masked texts. The bound leaves a margin of half a read; a gate that held all
# the texts as Python strings at once (the old one pushed 20,000-row chunks of them through pandas
# into GX) breaks it.
CHUNK_MB = GateConfig.chunk_mb
MAX_PYTHON_HEAP_MB = 1.5 * CHUNK_MB

_CHILD = """
import json, sys, tracemalloc
from dataclasses import replace
from pathlib import Path
from schemas.config import GateConfig, Recipe
from schemas.records import EXAMPLES
from sources.synthetic import synthetic_examples
from warehouse.layout import Warehouse
from common.parquet import ParquetSink
from warehouse.releases.publish import publish_release

examples, root, chunk_mb = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
# synthetic rows were never scrubbed, and the small NER model reads some of their places and typos
# ("Austin", "Mnoey") as names: the gate checks the structured kinds here (names: tests/warehouse/test_gate_pii.py)
recipe = replace(Recipe(), gate=GateConfig(data_docs=False, chunk_mb=chunk_mb),
                 privacy=replace(Recipe().privacy, scrub_names=False))
with ParquetSink(root / "warm.parquet", EXAMPLES) as sink:
    for row in synthetic_examples(200, seed=99):
        sink.write(row)
publish_release(root / "warm.parquet", Warehouse.at(root / "warm-wh"), recipe, {})
tracemalloc.start()
release = publish_release(examples, Warehouse.at(root / "wh"), recipe, {})
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(json.dumps({"release": str(release.path), "python_heap_mb": peak / 2**20}))
"""


def _write_release_rows(path: Path, n: int) -> tuple[int, int]:
    """The examples file the build would hand to publish; returns the characters of its texts and
    of texts and masked texts together."""
    chars = both = 0
    with ParquetSink(path, EXAMPLES) as sink:
        for row in synthetic_examples(n, seed=16):
            chars += len(row["text"])
            both += len(row["text"]) + len(row["masked_text"])
            sink.write(row)
    return chars, both


@pytest.mark.timeout(3600)  # a hang is the child's guard's to catch; pytest's 600 s would catch a busy machine
def test_a_25000_example_release_of_realistic_posts_passes_the_gate_and_publishes_in_bounded_memory(tmp_path):
    src = tmp_path / "examples.parquet"
    chars, all_texts = _write_release_rows(src, EXAMPLES_N)
    words = pq.read_table(src, columns=["text"]).column("text").to_pylist()
    lengths = sorted(len(t.split()) for t in words)
    assert lengths[0] >= 100 and lengths[-1] <= 320 and 140 <= lengths[len(lengths) // 2] <= 170  # title + body
    assert chars / EXAMPLES_N > 800

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    # about a minute alone, several under load: no wall-clock limit, only the guard against a hang
    run = run_until_idle([sys.executable, "-c", _CHILD, str(src), str(tmp_path), str(CHUNK_MB)], cwd=REPO, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"publish child: {time.perf_counter() - t0:.1f} s, Python heap peak {out['python_heap_mb']:.1f} MB")

    release = Path(out["release"])
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["gate"]["success"] is True and manifest["gate"]["failures"] == []
    # long texts: read in pieces of at most chunk_mb (with their masked texts), not 20,000 rows at once
    assert manifest["gate"]["text_reads"] >= all_texts / (CHUNK_MB * 2**20) > 2
    assert manifest["gate"]["chunks"]["examples"] == 1  # without their texts, the rows make one GX run
    con = duckdb.connect()
    per_split = dict(con.execute(
        f"SELECT regexp_extract(filename, '(train|validation|test)-[0-9]+-of-[0-9]+[.]parquet$', 1) AS split, count(*) "
        f"FROM read_parquet('{release}/data/*.parquet', filename = true) GROUP BY split").fetchall())
    assert set(per_split) == {"train", "validation", "test"} and all(n > 0 for n in per_split.values())
    assert sum(per_split.values()) == EXAMPLES_N == sum(manifest["rows"].values())
    assert per_split == manifest["rows"]
    texts = con.execute(f"SELECT avg(length(text)), count(DISTINCT post_id) "
                        f"FROM read_parquet('{release}/data/*.parquet')").fetchone()
    assert texts[0] == pytest.approx(chars / EXAMPLES_N) and texts[1] == EXAMPLES_N
    assert all_texts / 2**20 > MAX_PYTHON_HEAP_MB  # holding every text would break the bound
    assert out["python_heap_mb"] < MAX_PYTHON_HEAP_MB, f"publishing held {out['python_heap_mb']:.1f} MB of Python objects"


def test_long_texts_are_read_in_byte_sized_pieces_that_report_what_one_batch_reports(tmp_path):
    """Text reads close at `chunk_mb` however few rows that is, GX chunks at `chunk_rows`; the
    cross-row facts streamed next to them stay aligned row for row across all those boundaries."""
    rows = list(synthetic_examples(160, seed=21))
    rows[5]["text"] += " write to jo@example.com"                          # PII
    rows[130] = {**rows[130], "post_id": rows[3]["post_id"]}                # id repeated chunks away
    rows[70] = {**rows[70], "masked_text": rows[70]["masked_text"] + f" {MASK}"}  # masks != labels
    files = {}
    for split, part in (("train", rows[:140]), ("test", rows[140:] + [{**rows[10], "segment_index": 1}])):
        with ParquetSink(tmp_path / f"{split}.parquet", EXAMPLES) as sink:
            for row in part:
                sink.write(row)
        files[split] = tmp_path / f"{split}.parquet"
    cfg = GateConfig(min_masks_for_distribution=0, data_docs=False)
    whole = run_gate(files, cfg, tmp_path / "whole")
    small = run_gate(files, GateConfig(min_masks_for_distribution=0, data_docs=False, chunk_mb=0.06, chunk_rows=40),
                     tmp_path / "small")
    assert whole.summary["chunks"]["examples"] == 1 and whole.summary["text_reads"] == 2  # a read per split
    assert small.summary["text_reads"] >= 6  # ~2 KB rows, 60 KB reads
    assert small.summary["chunks"]["examples"] >= 5  # 161 rows, at most 40 a GX run
    pick = lambda r: {f["check"]: (f["unexpected_count"], f["rows"], sorted(map(json.dumps, f["examples"])))
                      for f in r.summary["failures"]}
    assert pick(small) == pick(whole)
    assert set(pick(whole)) == {"no PII pattern left in text", "example ids (post_id, segment_index) unique",
                                "no post id in two splits", "number of <mask> tokens equals number of labels"}
    assert pick(whole)["example ids (post_id, segment_index) unique"][0] == 2
    assert pick(whole)["no post id in two splits"][0] == 2  # rows[10]'s post in train and in test
