"""`express takedown apply` on a real warehouse: v1 is built, three of its posts and one author are
taken down and applied; v2 lacks them, v1 is withdrawn, `verify` is clean, and no file under the
warehouse but withdrawn v1 holds their text (with --purge-releases, none at all). A later build of
the same dump drops them with the reason `takedown`; a rebuild drops them from the shards it reuses.
A killed apply run again gives the same warehouse; the weekly rebuild syncs with Reddit when asked.
One module, so that the build they share is made once (pytest-xdist hands out whole modules)."""
from __future__ import annotations

import html
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.cli import main
from sources.dumps import iter_lines
from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import creds  # noqa: F401  (creds: fixture)
from tests.takedowns.conftest import CONFIG, REPO, Built, apply, raw_posts, relocated, rows, take_down
from tests.takedowns.kill import HOLD, env, snapshot
from warehouse.releases.catalog import connect
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # demo builds, applies and apply processes killed (tests/conftest.py)


def contents(path: Path) -> str:
    """A file as text, whatever its kind, decoded independently of the code under test."""
    if path.suffix == ".parquet":
        return json.dumps(pq.read_table(path).to_pylist(), default=str, ensure_ascii=False)
    if path.name.endswith(".zst"):
        return b"\n".join(line for _, line in iter_lines(path)).decode("utf-8", "replace")
    return path.read_bytes().decode("utf-8", "replace")


def holding_text(root: Path, texts: set[str], outside: tuple[Path, ...] = ()) -> list[str]:
    """Files under `root` (but `outside`) holding one of `texts` as written, JSON-escaped or HTML-escaped."""
    forms = {f for t in texts for f in (t, json.dumps(t)[1:-1], json.dumps(t, ensure_ascii=False)[1:-1],
                                       html.escape(t))}
    return [str(p) for p in sorted(root.rglob("*"))
            if p.is_file() and not any(p.is_relative_to(o) for o in outside) and any(f in contents(p) for f in forms)]


def holding_ids(root: Path, ids: set[str], outside: tuple[Path, ...]) -> list[str]:
    quoted = {f'"{q}{i}"' for i in ids for q in ("", "t3_")}
    return [str(p) for p in sorted(root.rglob("*"))
            if p.is_file() and not any(p.is_relative_to(o) for o in outside) and any(q in contents(p) for q in quoted)]


def test_v2_lacks_them_names_its_parent_and_v1_is_withdrawn(built: Built, applied, capsys):
    root, done = applied
    v1, v2 = rows(root, "v1"), rows(root, "v2")
    gone = [r for r in v1 if r["post_id"] in built.ids]
    assert gone and not [r for r in v2 if r["post_id"] in built.ids]
    assert sorted(map(json.dumps, v2)) == sorted(json.dumps(r) for r in v1 if r["post_id"] not in built.ids)
    m = json.loads((root / "express-demo" / "v2" / "manifest.json").read_text())
    assert m["parent_version"] == "v1" and m["parent"] == "express-demo/v1" and m["gate"]["success"]
    assert sum(m["takedowns"]["rows_removed"].values()) == len(gone)
    assert m["takedowns"]["posts_removed"] == len({r["post_id"] for r in gone})
    assert m["funnel"]["dropped"]["takedown"] == len({r["post_id"] for r in gone})
    assert done["published"] == {"express-demo/v1": "express-demo/v2"} and done["kept"] == ["express-demo/v1"]
    record = json.loads((root / "express-demo" / "v1.withdrawn.json").read_text())
    assert record["successor"] == "express-demo/v2" and record["rows"] == len(gone)
    assert main(["releases", "--warehouse", str(root)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert "withdrawn" in listed[0] and "express-demo/v1" in listed[0] and "withdrawn" not in listed[1]
    with connect(root) as con:
        latest = con.execute("SELECT count(*) FROM express_demo_latest_test").fetchone()[0]
    assert latest == pq.ParquetFile(root / "express-demo" / "v2" / "data" / "test-00000-of-00001.parquet").metadata.num_rows


def test_no_file_but_withdrawn_v1_holds_their_text_and_verify_is_clean(built: Built, applied, capsys):
    root, _ = applied
    v1 = root / "express-demo" / "v1"
    assert len(holding_text(built.root / "runs", built.texts)) >= 3  # the check finds them where they were
    assert holding_text(root, built.texts, outside=(v1,)) == []
    assert holding_ids(root, built.ids, outside=(v1, root / "takedowns")) == []
    assert main(["takedown", "verify", "--warehouse", str(root)]) == 0
    assert "no taken-down post" in capsys.readouterr().out


def test_the_ledger_keeps_the_author_only_as_a_keyed_hash(built: Built, applied):
    root, _ = applied
    ledger = "".join(p.read_text() for p in sorted((root / "takedowns" / "ledger").glob("*.jsonl")))
    assert built.author.lower() not in ledger.lower()
    resolved = [json.loads(x) for x in ledger.splitlines() if json.loads(x)["kind"] == "resolved"]
    assert {r["post_id"] for r in resolved if r.get("author_hmac")} == set(built.authors_posts)


def test_every_other_file_is_rewritten_without_them(built: Built, applied):
    root, done = applied
    run = next((root / "evaluations").iterdir())
    before = next((built.root / "evaluations").iterdir())
    kept = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    was = [json.loads(x) for x in (before / "predictions.jsonl").read_text().splitlines()]
    assert len(kept) == len(was) - done["evaluation_rows"] > 0 and done["evaluation_rows"] > 0
    assert json.loads((run / "metrics.json").read_text())["rows"] == len(kept)  # scored again from what is left
    assert json.loads((run / "config.json").read_text())["takedowns"]["rows_removed"] == done["evaluation_rows"]
    assert not (root / "cache" / "responses" / "ab" / "ab01.json").exists()
    assert (root / "cache" / "responses" / "ab" / "ab02.json").exists()
    pulled = [json.loads(x)["id"] for x in (root / "inputs" / "praw" / "praw-test-0001.jsonl").read_text().splitlines()]
    assert pulled and not set(pulled) & built.ids
    items = (root / "reviews" / "express-demo" / "items.jsonl").read_text()
    assert items and not any(f'"{i}"' in items for i in built.ids)
    report = (root / "reports" / "express-demo" / "v1" / "report.html").read_text()
    assert "was withdrawn" in report and (root / "reports" / "express-demo" / "v2" / "report.html").exists()
    card = root / "cards" / "express-demo" / "v1"
    assert not (card / "data").exists() and "withdrawn" in (card / "README.md").read_text()
    assert (root / "cards" / "express-demo" / "v2" / "data").is_dir()
    funnel = json.loads(next(root.glob("runs/*/extract_funnel.json")).read_text())
    assert funnel["read"] == funnel["kept"] + sum(funnel["dropped"].values()) + funnel["malformed"]
    assert funnel["dropped"]["takedown"] >= len({r["post_id"] for r in rows(built.root) if r["post_id"] in built.ids})


def test_verify_fails_naming_a_leftover(built: Built, applied, tmp_path, capsys):
    root = built.copy(tmp_path / "wh")
    take_down(root, built)
    assert main(["takedown", "verify", "--warehouse", str(root)]) == 2  # nothing applied yet
    capsys.readouterr()
    done, _ = applied
    leftover = done / "reports" / "notes.md"
    text = sorted(built.texts, key=len)[-1]
    try:
        leftover.write_text(f"A note quoting a post:\n\n> {text.upper()}\n")
        assert main(["takedown", "verify", "--warehouse", str(done)]) == 2
        out = capsys.readouterr()
        assert str(leftover) in out.out and str(leftover) in out.err
    finally:
        leftover.unlink()


def test_with_purge_releases_no_file_holds_their_text(built: Built, applied, tmp_path):
    root = relocated(applied[0], tmp_path / "wh")  # applied before, purged now
    done = apply(root, purge=True)
    assert done["purged"] == ["express-demo/v1"] and not (root / "express-demo" / "v1" / "data").exists()
    assert (root / "express-demo" / "v1" / "manifest.json").exists()
    assert holding_text(root, built.texts) == []
    with connect(root) as con:
        views = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert not {v for v in views if v.startswith("express_demo_v1_")} and "express_demo_v2_test" in views


def test_a_later_build_of_the_same_dump_drops_them_for_takedown(built: Built, applied, tmp_path):
    from tests.builds import build

    root = built.copy(tmp_path / "wh")
    take_down(root, built)
    out = build([str(built.dump)], str(root), CONFIG, workers=0)
    in_dump = {p["id"] for p in raw_posts(built.dump)} & built.ids
    assert out["ingest"]["funnel"]["dropped"]["takedown"] == len(in_dump) == len(built.ids)
    quarantined = pq.read_table(out["ingest"]["quarantine"]).to_pylist()
    dropped = [r for r in quarantined if r["reason"] == "takedown"]
    assert len(dropped) == len(in_dump) and all(r["post_id"] is None and r["raw"] is None for r in dropped)
    assert not [r for r in rows(root, out["release"]["version"]) if r["post_id"] in built.ids]
    assert holding_text(root / "runs" / out["run_id"], built.texts) == []


def test_a_rebuild_drops_new_takedowns_from_the_shards_it_reuses(built: Built, applied, tmp_path):
    """A post, and an author whose posts only the stored raw lines name (a kept post's author is
    blanked), taken down after v2: the rebuild honours both in the shard it reuses."""
    from sources.demo import DemoSpec, write_demo_dump
    from tests.builds import rebuild

    root = relocated(applied[0], tmp_path / "wh")
    in_v2 = [r["post_id"] for r in rows(root, "v2")]
    by_author: dict[str, list[str]] = {}
    for p in raw_posts(built.dump):
        by_author.setdefault(p["author"], []).append(p["id"])
    author = next(a for a, ids in by_author.items() if set(ids) & set(in_v2) and in_v2[0] not in ids)
    gone = {in_v2[0], *by_author[author]}
    assert main(["takedown", "add", "--post", in_v2[0], "--author", author, "--reason", "a second request",
                 "--warehouse", str(root)]) == 0
    (shard,) = [p for p in root.glob("runs/*/shards/*") if p.is_dir()]
    read = {r["post_id"] for name in ("examples", "quarantine-extract")
            for r in pq.read_table(shard / f"{name}.parquet").to_pylist()}
    before = json.loads((shard / "extract.done").read_text())["funnel"]["dropped"]["takedown"]
    second = write_demo_dump(tmp_path / "in", DemoSpec(posts=40, seed=14, month="2024-02", first_id=10_000))
    out = rebuild([str(built.dump), str(second)], str(root), CONFIG, workers=0)
    assert out["release"]["version"] == "v3" and out["parent"] == "express-demo/v2"
    assert not gone & {r["post_id"] for r in rows(root, "v3")}
    after = json.loads((shard / "extract.done").read_text())["funnel"]["dropped"]["takedown"]
    assert after == before + len(gone & read) and len(gone & read) >= 2
    assert not gone & set(pq.read_table(shard / "posts.parquet")["id"].to_pylist())  # a relabel finds none


@pytest.mark.parametrize("held_at", ["extract.done", "v2"], ids=["mid-rewrite-of-a-shard", "before-v2-lands"])
def test_a_killed_apply_run_again_gives_the_same_warehouse(requested, applied, tmp_path, capsys, held_at):
    root = relocated(requested, tmp_path / "wh")
    flag = tmp_path / "held"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, held_at, str(flag), "takedown", "apply",
                             "--warehouse", str(root)], cwd=REPO, env=env(), start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 300
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert flag.exists(), proc.stderr.read().decode() if proc.poll() is not None else "never held"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    if held_at == "extract.done":  # the kill landed half-way through a folder's change
        assert list(root.glob("runs/*/shards/*/.commit-journal.json"))
    else:  # the release was written but not yet in place
        assert list(root.glob("express-demo/.tmp-v2-*")) and not (root / "express-demo" / "v2").exists()
    capsys.readouterr()
    assert main(["takedown", "apply", "--warehouse", str(root)]) == 0  # the same command, again
    said = capsys.readouterr().out
    assert "withdrawn express-demo/v1" in said and "withdrawn releases keep their files: express-demo/v1" in said
    assert not list(root.rglob(".commit-journal.json")) and not list(root.glob("express-demo/.tmp-*"))
    assert snapshot(root) == snapshot(applied[0])


def test_the_weekly_rebuild_syncs_then_applies_what_reddit_deleted(creds, built, tmp_path):
    from flows.deployments import scheduled_rebuild_flow

    root = relocated(built.root, tmp_path / "wh")
    in_v1 = {r["post_id"] for r in rows(root)}
    served = [{**p, "selftext": "[deleted]", "author": "[deleted]"} if p["id"] == min(in_v1) else p
              for p in raw_posts(built.dump) if p["id"] in in_v1]
    with FakeReddit(served) as fake:
        recipe = tmp_path / "weekly.toml"
        recipe.write_text(open(CONFIG).read().replace('timezone = "UTC"', 'timezone = "UTC"\nsync_takedowns = true')
                          + f'\n[sources]\noauth_url = "{fake.url}"\nreddit_url = "{fake.url}"\n')
        out = scheduled_rebuild_flow([str(built.dump)], str(root), str(recipe))
        asked = sum(r["path"].rstrip("/") == "/api/info" for r in fake.requests)
    assert asked == -(-len(in_v1) // 100)  # 100 fullnames a request
    latest = Warehouse(root).versions("express-demo")[-1]
    assert latest != "v1" and min(in_v1) not in {r["post_id"] for r in rows(root, latest)}
    assert json.loads((root / "express-demo" / "v1.withdrawn.json").read_text())["successor"] == f"express-demo/{latest}"
    assert out["takedowns"]["withdrawn"].keys() == {"express-demo/v1"}
    ledger = [json.loads(x) for p in sorted((root / "takedowns" / "ledger").glob("*.jsonl"))
              for x in p.read_text().splitlines()]
    assert [(e["post_id"], e["reason"]) for e in ledger if e["kind"] == "post"] == [(f"t3_{min(in_v1)}",
                                                                                      "deleted on Reddit")]
