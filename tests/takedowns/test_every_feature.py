"""Takedowns after the other features were used (issue #61): a post with reposts and its author,
requests one after another on every shape of build (one shard, many, rebuilt, purged), a build after
a takedown, withdrawn releases read again, copies written outside the warehouse, raw forms of a text
planted where verify must find them, and a lost key. Every check reads the files itself."""
from __future__ import annotations

import bz2
import gzip
import json
import shutil
from pathlib import Path

import pytest
import zstandard

from flows.cli import main
from tests.takedowns.conftest import CONFIG, Built, apply, raw_posts, relocated, rows
from tests.takedowns.test_apply import holding_ids, holding_text

pytestmark = pytest.mark.slow  # demo builds and applies (tests/conftest.py)


def _reposted(built: Built, root: Path) -> tuple[dict, list[dict]]:
    """A post of v1 whose title and body other posts of the dump repeat under their own ids."""
    raw = raw_posts(built.dump)
    in_v1 = {r["post_id"] for r in rows(root)}
    for post in raw:
        copies = [p for p in raw if p["id"] != post["id"] and (p.get("title"), p.get("selftext")) ==
                  (post.get("title"), post.get("selftext"))]
        if post["id"] in in_v1 and copies and post["id"] not in built.ids and len(post["selftext"].split()) > 40:
            return post, copies
    raise AssertionError("the demo dump has no reposted post in v1")


def _fields(post: dict) -> set[str]:
    """Each text field alone, the whole text, as the dump wrote them and as read (entities decoded)."""
    import html

    title, body = post["title"], post["selftext"]
    return {body, html.unescape(body), f"{title}\n\n{body}", html.unescape(f"{title}\n\n{body}")} | (
        {title, html.unescape(title)} if len(title.split()) >= 12 else set())


def _take_down(root: Path, *posts: str, author: str | None = None) -> None:
    args = [x for p in posts for x in ("--post", p)] + (["--author", author] if author else [])
    assert main(["takedown", "add", *args, "--reason", "asked", "--warehouse", str(root)]) == 0


@pytest.fixture(scope="module")
def reposts_applied(built: Built, tmp_path_factory) -> tuple[Path, dict, list[dict], dict]:
    """The built warehouse with a reposted post (and the author of other posts) taken down and applied."""
    root = built.copy(tmp_path_factory.mktemp("reposts") / "wh")
    post, copies = _reposted(built, root)
    _take_down(root, post["id"], author=built.author)
    return root, post, copies, apply(root)


def test_a_reposts_text_leaves_every_file_field_by_field_and_verify_agrees(built: Built, reposts_applied, capsys):
    root, post, copies, done = reposts_applied
    assert holding_text(built.root / "runs", {post["selftext"]})  # the raw lines held the body as a field
    v1 = root / "express-demo" / "v1"
    assert holding_text(root, _fields(post), outside=(v1,)) == []
    ids = {post["id"], *(c["id"] for c in copies), *built.authors_posts}
    assert holding_ids(root, ids, outside=(v1, root / "takedowns")) == []
    resolved = [json.loads(x) for f in sorted((root / "takedowns" / "ledger").glob("*.jsonl"))
                for x in f.read_text().splitlines()]
    assert {c["id"] for c in copies} <= {r["post_id"] for r in resolved if r["kind"] == "resolved"}
    assert main(["takedown", "verify", "--warehouse", str(root)]) == 0
    assert "no taken-down post" in capsys.readouterr().out


@pytest.mark.parametrize("form", ["fields-under-another-id", "body-alone-txt", "gzip", "zstd", "bz2"])
def test_verify_finds_a_planted_copy_in_any_raw_form(reposts_applied, tmp_path, capsys, form):
    root, post, _, _ = reposts_applied
    root = relocated(root, tmp_path / "wh")
    line = json.dumps({"id": "zz9zz9", "author": "someone_else", "title": post["title"],
                       "selftext": post["selftext"]}) + "\n"
    planted = {"fields-under-another-id": ("inputs/praw/copy.jsonl", line.encode()),
               "body-alone-txt": ("reports/notes.txt", post["selftext"].encode()),
               "gzip": ("inputs/praw/copy.jsonl.gz", gzip.compress(line.encode())),
               "zstd": ("inputs/praw/RS_copy.zst", zstandard.ZstdCompressor().compress(line.encode())),
               "bz2": ("reports/notes.txt.bz2", bz2.compress(post["selftext"].encode()))}[form]
    path = root / planted[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(planted[1])
    assert main(["takedown", "verify", "--warehouse", str(root)]) == 2
    assert str(path) in capsys.readouterr().out


def test_a_build_after_a_takedown_writes_none_of_them_anywhere(built: Built, reposts_applied, tmp_path):
    from tests.builds import build

    root, post, copies, _ = reposts_applied
    root = relocated(root, tmp_path / "wh")
    out = build([str(built.dump)], str(root), CONFIG, workers=0)
    ids = {post["id"], *(c["id"] for c in copies), *built.authors_posts}
    funnel = out["ingest"]["funnel"]
    assert funnel["dropped"]["takedown"] == len(ids) and funnel["read"] == funnel["kept"] + sum(
        funnel["dropped"].values()) + funnel["malformed"]
    written = (root / "runs" / out["run_id"], root / "quarantine" / out["run_id"])
    for folder in written:
        assert holding_text(folder, _fields(post)) == [] and holding_ids(folder, ids, outside=()) == []
    assert not {post["id"], *(c["id"] for c in copies)} & {r["post_id"] for r in rows(root, out["release"]["version"])}


def _latest(root: Path) -> str:
    from warehouse.layout import Warehouse

    return Warehouse(root).versions("express-demo")[-1]


@pytest.fixture(scope="module")
def shapes(built: Built, tmp_path_factory) -> dict[str, Path]:
    """One warehouse per build shape (the build alone: nothing else made from it), each with v1
    (and more) published and nothing taken down."""
    from sources.demo import DemoSpec, write_demo_dump
    from tests.builds import build, rebuild

    base = tmp_path_factory.mktemp("shapes")
    out = {shape: base / shape / "wh" for shape in ("one-shard", "many-shards")}
    build([str(built.dump)], str(out["one-shard"]), CONFIG, workers=0)
    build([str(built.dump)], str(out["many-shards"]), CONFIG, shard_lines=60, workers=0)
    second = write_demo_dump(base / "in", DemoSpec(posts=40, seed=14, month="2024-02", first_id=10_000))
    out["rebuilt"] = relocated(out["one-shard"], base / "rebuilt" / "wh")
    rebuild([str(built.dump), str(second)], str(out["rebuilt"]), CONFIG, workers=0)
    out["purged"] = relocated(out["one-shard"], base / "purged" / "wh")
    _take_down(out["purged"], rows(out["purged"])[-1]["post_id"])
    apply(out["purged"], purge=True)
    return out


# Requests in a row per shape: each request is a post of the latest release, applied at once.
TABLE = [("one-shard", 3), ("many-shards", 3), ("rebuilt", 2), ("purged", 2)]


@pytest.mark.parametrize("shape, requests", TABLE, ids=[t[0] for t in TABLE])
def test_requests_one_after_another_each_publish_withdraw_and_leave_nothing(shapes, tmp_path, shape, requests):
    root = relocated(shapes[shape], tmp_path / "wh")
    gone: set[str] = set()
    for request in range(1, requests + 1):
        before = _latest(root)
        post = next(r["post_id"] for r in rows(root, before) if r["post_id"] not in gone)
        _take_down(root, post)
        gone.add(post)
        done = apply(root)
        now = _latest(root)
        assert done["published"] == {f"express-demo/{before}": f"express-demo/{now}"}, (request, done)
        assert not gone & {r["post_id"] for r in rows(root, now)}
        sidecars = {p.name.split(".")[0]: json.loads(p.read_text()) for p in (root / "express-demo").glob("*.withdrawn.json")}
        assert before in sidecars and now not in sidecars, request
        assert {s["successor"] for s in sidecars.values()} == {f"express-demo/{now}"}, request  # notes kept current
        applied = json.loads((root / "takedowns" / "applied.json").read_text())
        assert applied["version"] == len(list((root / "takedowns" / "ledger").glob("*.jsonl")))
        withdrawn = tuple(p.with_suffix("").with_suffix("") for p in (root / "express-demo").glob("*.withdrawn.json"))
        assert holding_ids(root, gone, outside=(*withdrawn, root / "takedowns")) == [], request
        assert main(["takedown", "verify", "--warehouse", str(root)]) == 0, request


def test_a_withdrawn_release_is_read_with_a_warning_and_nothing_is_written_from_it(built: Built, applied, tmp_path,
                                                                                    capsys):
    root = relocated(applied[0], tmp_path / "wh")
    wh = ["--warehouse", str(root)]
    assert main(["report", "--release", "express-demo/v1", *wh]) == 0
    err = capsys.readouterr().err
    assert "express-demo/v1 was withdrawn" in err and "use express-demo/v2" in err
    assert "was withdrawn" in (root / "reports" / "express-demo" / "v1" / "report.html").read_text()
    card = tmp_path / "card-v1"
    assert main(["card", "--release", "express-demo/v1", "--out", str(card), *wh]) == 0
    assert "withdrawn" in (card / "README.md").read_text() and not (card / "data").exists()
    for command in (["evaluate", "--release", "express-demo/v1", "--predictor", "most-frequent"],
                    ["export", "lm-eval", "--release", "express-demo/v1", "--out", str(tmp_path / "lm")],
                    ["review", "export", "--release", "express-demo/v1", "--out", str(tmp_path / "items.jsonl")]):
        assert main([*command, *wh]) == 2, command
        assert "use express-demo/v2" in capsys.readouterr().err
    assert not (tmp_path / "lm").exists() and not (tmp_path / "items.jsonl").exists()
    runs = set((root / "evaluations").iterdir())
    assert main(["evaluate", "--release", "express-demo/v1", "--predictor", "most-frequent", "--force", *wh]) == 0
    (run,) = set((root / "evaluations").iterdir()) - runs
    scored = {json.loads(x)["post_id"] for x in (run / "predictions.jsonl").read_text().splitlines()}
    assert scored and not scored & built.ids
    capsys.readouterr()
    assert main(["takedown", "verify", *wh]) == 0


def test_copies_written_outside_are_named_by_apply_and_read_by_verify_outside(built: Built, tmp_path, capsys):
    root = built.copy(tmp_path / "wh")
    wh = ["--warehouse", str(root)]
    card, lm = tmp_path / "hub-card", tmp_path / "lm-task"
    assert main(["card", "--release", "express-demo/v1", "--out", str(card), *wh]) == 0
    assert main(["export", "lm-eval", "--release", "express-demo/v1", "--out", str(lm), *wh]) == 0
    _take_down(root, *built.posts)
    done = apply(root)
    named = {Path(p).parent.parent if Path(p).parent.name == "data" else Path(p).parent for p in done["outside"]}
    assert {card, lm} <= named and str(built.root.parent / "items.jsonl") in done["outside"]  # conftest's export
    assert (card / "data").is_dir()  # never deleted: the user's to delete
    capsys.readouterr()
    assert main(["takedown", "verify", *wh]) == 0
    assert main(["takedown", "verify", "--outside", *wh]) == 2
    out = capsys.readouterr().out
    assert str(card) in out and str(lm) in out and "outside the warehouse" in out
    shutil.rmtree(card)
    shutil.rmtree(lm)
    assert main(["takedown", "verify", "--outside", "--json", *wh]) == 2  # the review items conftest exported
    assert [h["path"] for h in json.loads(capsys.readouterr().out)] == [str(built.root.parent / "items.jsonl")]


def test_a_lost_key_is_refused_by_every_takedown_command_and_never_remade(built: Built, requested, tmp_path,
                                                                          capsys):
    root = relocated(requested, tmp_path / "wh")
    key = root / "takedowns" / "key"
    key.unlink()
    wh = ["--warehouse", str(root)]
    for command in (["add", "--author", "someone", "--reason", "x"], ["add", "--post", "abc1", "--reason", "x"],
                    ["list"], ["apply"], ["verify"], ["sync"]):
        capsys.readouterr()
        assert main(["takedown", *command, *wh]) == 2, command
        err = capsys.readouterr().err
        assert str(key) in err and "restore the key" in err, command
        assert not key.exists()
    assert len(list((root / "takedowns" / "ledger").glob("*.jsonl"))) == 1  # nothing was added
    runs = set((root / "runs").iterdir())
    assert main(["build", "--input", str(built.dump), "--config", CONFIG, *wh]) == 2  # not honoured in part
    assert "restore the key" in capsys.readouterr().err and set((root / "runs").iterdir()) == runs
