"""Reddit's escaped text through the real build: a dump whose titles and bodies carry HTML entities
publishes what the authors typed, at exact offsets, and a praw pull of the same posts publishes the
same release (tests/sources/reddit_shapes.py: posts in Reddit's shapes, written for these tests)."""
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.cli import main as express
from schemas.records import MASK
from tests.fakes.reddit_server import FakeReddit
from tests.sources.reddit_shapes import COMMENTS, ENTITIES, POSTS, dump_lines, served_comments, served_submissions

pytestmark = pytest.mark.slow  # two builds

TYPED_ENTITY = {"rt3"}  # its author typed `&lt;` in Markdown: published as typed (test_dump_fidelity.py)
RECIPE = """[sources]
kind = "{kind}"
listing = "new"
subreddits = ["offmychest"]
include_comments = true
oauth_url = "{url}"
reddit_url = "{url}"
backoff_seconds = 0.01
max_backoff_seconds = 0.05

[splits]
train = 0.0
validation = 0.0
test = 1.0
"""


def _release(out: list[str]) -> tuple[list[dict], Path]:
    manifest = Path(out[-1])
    rows = [r for f in sorted(manifest.parent.glob("data/*.parquet")) for r in pq.read_table(f).to_pylist()]
    return sorted(rows, key=lambda r: (r["post_id"], r["segment_index"])), manifest


def _build(tmp: Path, name: str, kind: str, url: str, capsys, inputs: list[Path]) -> tuple[list[dict], Path]:
    config = tmp / f"{name}.toml"
    config.write_text(RECIPE.format(kind=kind, url=url))
    args = ["build", "--warehouse", str(tmp / name), "--config", str(config)]
    for path in inputs:
        args += ["--input", str(path)]
    assert express(args) == 0
    return _release(capsys.readouterr().out.strip().splitlines())


def test_a_dump_with_entities_publishes_typed_text_and_a_praw_pull_the_same_release(
        prefect_harness, tmp_path, capsys, monkeypatch):
    for key, value in (("praw_client_id", "cid"), ("praw_client_secret", "secret"), ("praw_user_agent", "express-tests")):
        monkeypatch.setenv(key, value)
    keep = [p for p in POSTS if p["id"] not in TYPED_ENTITY]
    lines = [line for line in dump_lines() if json.loads(line)["id"] not in TYPED_ENTITY]
    rs, rc = tmp_path / "RS_2024-04.ndjson", tmp_path / "RC_2024-04.ndjson"
    rs.write_bytes(b"\n".join(lines[:len(keep)]) + b"\n")
    rc.write_bytes(b"\n".join(lines[len(keep):]) + b"\n")
    assert b"&amp;#x200B;" in rs.read_bytes() and b"&gt;" in rc.read_bytes()

    with FakeReddit([s for s in served_submissions() if s["id"] not in TYPED_ENTITY], served_comments()) as fake:
        dumped, manifest = _build(tmp_path, "dump", "dumps", fake.url, capsys, [rs, rc])
        pulled, _ = _build(tmp_path, "praw", "praw", fake.url, capsys, [])

    assert {r["post_id"] for r in dumped} == {p["id"] for p in keep + COMMENTS}
    for row in dumped:
        published = row["text"] + row["masked_text"]
        assert not [e for e in ENTITIES if e in published], row["post_id"]
        assert "\u200b" not in published and "\u00a0" not in published
        pieces = row["masked_text"].split(MASK)  # the text is the masked text with the words put back
        assert "".join(a + b for a, b in zip(pieces, [*row["surfaces"], ""])) == row["text"]
    texts = {r["post_id"]: r["text"] for r in dumped if r["segment_index"] == 0}
    run = manifest.parent.parent.parent / "runs" / json.loads(manifest.read_text())["run_id"]
    for found in pq.read_table(run / "disclosures.parquet").to_pylist():  # the run's offsets, in the decoded text
        assert all(texts[found["post_id"]][d["start"]:d["end"]] == d["surface"] for d in found["disclosures"])
    assert texts["rt1"].startswith("Opinions & Advice: I'm so scared of the dark <3")
    assert [(r["post_id"], r["text"], r["masked_text"], r["labels"]) for r in pulled] == \
        [(r["post_id"], r["text"], r["masked_text"], r["labels"]) for r in dumped]
