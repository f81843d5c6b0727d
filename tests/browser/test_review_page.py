"""The review page in real Chromium: keys and buttons, undo, progress, resume after a restart of
the server; then import and stats, and the decisions re-deriving the masks of the posts."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from common.parquet import iter_rows
from flows.cli import main
from review.apply import ReviewIndex, apply_decisions
from review.ledger import Ledger
from tests.review.helpers import copy_demo

REPO = Path(__file__).resolve().parents[2]
SAMPLE = ["--sample", "6", "--seed", "1"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(root: Path, release: str, port: int):
    """`express review serve` as a user runs it, in its own process; stopped on exit."""
    cmd = [sys.executable, "-m", "flows.cli", "review", "serve", "--release", release, "--warehouse", str(root),
           "--port", str(port), *SAMPLE]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=2) as r:
                    assert r.status == 200
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"review serve did not start: {proc.stdout.read()}")
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _done(page, n: int) -> None:
    page.tab.wait_for_function("n => document.getElementById('done').textContent === String(n)", arg=n)


def _word(page) -> str:
    return page.tab.get_attribute("#word", "data-item-id")


def test_review_page_keys_buttons_undo_and_resume_after_restart(demo_build, page, tmp_path, capsys):
    root = tmp_path / "wh"
    rel = copy_demo(demo_build, root)
    release = f"{rel.dataset}/{rel.version}"
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    tab = page.tab
    with serving(root, release, port):
        tab.goto(url)
        tab.wait_for_selector("#word")
        assert tab.inner_text("#total") == "6" and tab.inner_text("#release") == release
        first = _word(page)
        mark = tab.inner_text("#word")
        assert mark and mark in tab.inner_text("#text")
        tab.keyboard.press("a")  # no reviewer yet: refused, nothing written
        tab.wait_for_function("document.getElementById('message').className === 'error'")
        assert Ledger(root, rel.dataset).version == 0
        tab.fill("#reviewer", "ana")
        tab.press("#reviewer", "Enter")
        tab.keyboard.press("a")
        _done(page, 1)
        tab.keyboard.press("r")
        _done(page, 2)
        tab.click("#skip")
        _done(page, 3)
        fourth = _word(page)
        tab.click("#accept")
        _done(page, 4)
        tab.keyboard.press("u")  # undo the accept: the 4th item is back
        _done(page, 3)
        assert _word(page) == fourth and "Undone" in tab.inner_text("#message")
        tab.click("#reject")
        _done(page, 4)
        # 1 accepted, 2 rejected: precision 1/3, Wilson [0.0615, 0.7923]
        assert tab.inner_text("#precision") == "0.333" and tab.inner_text("#interval") == "[0.061, 0.792]"
        assert tab.inner_text("#counts") == "1 accepted, 2 rejected, 1 skipped"
        fifth = _word(page)
        page.shot("review-page")
    entries = Ledger(root, rel.dataset).read()
    assert [e.decision for e in entries] == ["accept", "reject", "skip", "accept", "retract", "reject"]
    assert {e.reviewer for e in entries} == {"ana"} and entries[0].item_id == first
    assert all(e.source == f"serve:{release}" and e.time.endswith("Z") for e in entries)

    with serving(root, release, port):  # a new server process: the review resumes from the ledger
        tab.goto(url)  # same origin: the reviewer name comes back from localStorage
        tab.wait_for_selector("#word")
        _done(page, 4)
        assert tab.input_value("#reviewer") == "ana" and _word(page) == fifth
        assert tab.inner_text("#precision") == "0.333"
        tab.keyboard.press("u")  # undo works across the restart
        _done(page, 3)
        assert _word(page) == fourth
        tab.keyboard.press("r")
        _done(page, 4)
        tab.keyboard.press("a")
        _done(page, 5)
        page.shot("review-page-resumed")
        tab.keyboard.press("a")
        _done(page, 6)
        tab.wait_for_selector("#finished", state="visible")
        assert tab.is_hidden("#card") and tab.inner_text("#skipped-finished") == "1"
        page.shot("review-page-finished", full_page=False)
    assert page.external == [] and page.errors == []

    # a second reviewer works from an export; import, then stats of both
    export = tmp_path / "items.jsonl"
    assert main(["review", "export", "--release", release, "--warehouse", str(root), "--out", str(export), *SAMPLE]) == 0
    items = [json.loads(x) for x in export.read_text().splitlines()]
    assert [it["item_id"] for it in items][:5] == [first, items[1]["item_id"], items[2]["item_id"], fourth, fifth]
    ana = {e.item_id: e.decision for e in Ledger(root, rel.dataset).read() if e.decision != "retract"}
    bo = tmp_path / "bo.jsonl"
    bo.write_text("".join(json.dumps({"item_id": it["item_id"], "decision": "accept", "reviewer": "bo"}) + "\n"
                          for it in items))
    assert main(["review", "import", str(bo), "--warehouse", str(root)]) == 0
    capsys.readouterr()
    assert main(["review", "stats", "--release", release, "--json", "--warehouse", str(root)]) == 0
    [s] = json.loads(capsys.readouterr().out)
    # ana: accept, reject, skip, reject, accept, accept (in queue order); bo accepts all six.
    # consensus: items ana rejected are ties -> rejected; the skipped one is bo's accept.
    assert (s["overall"]["accepted"], s["overall"]["rejected"]) == (4, 2)
    assert s["reviewers"]["ana"]["skipped"] == 1 and s["agreement"]["pairs"][0]["items"] == 5

    # the next build: each post's masks, re-derived from the run's disclosures with the ledger
    index = ReviewIndex.from_ledger(Ledger(root, rel.dataset))
    run = root / "runs" / rel.manifest()["run_id"]
    texts = {r["id"]: r["text"] for f in demo_build["ingest"]["raw_posts"] for r in iter_rows(f, ["id", "text"])}
    rejected = {it["item_id"] for it in items if ana.get(it["item_id"]) == "reject"}
    posts = {it["post_id"] for it in items}
    gone, kept = set(), set()
    for row in iter_rows(run / "disclosures.parquet"):
        if row["post_id"] not in posts:
            continue
        masks = [d for d in row["disclosures"] if not d["negated"]]
        applied = apply_decisions(row["post_id"], texts[row["post_id"]], masks, index)
        gone |= {applied.matched[i] for i, d in enumerate(masks) if d in applied.rejected}
        kept |= {applied.matched[i] for i, d in enumerate(masks) if i in applied.matched and d in applied.kept}
    assert gone == rejected and len(rejected) == 2
    assert kept == {it["item_id"] for it in items} - rejected
