"""A warehouse with something of every kind a takedown must reach: release v1 of a small demo build,
an evaluation of it, its report and card, hand-review items and decisions, a cached answer, a stored
praw pull; and the takedowns (three posts of v1 and one author) with the texts they must take out."""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sources.dumps import iter_lines

REPO = Path(__file__).resolve().parents[2]
CONFIG = str(REPO / "configs" / "demo.toml")
POSTS = 200


@dataclass(frozen=True)
class Built:
    dump: Path
    root: Path  # the warehouse as built, never changed: tests work on copies
    posts: list[str]  # taken down by id (as given: with and without t3_, in another case)
    author: str
    authors_posts: list[str]
    texts: set[str]  # every text of the taken-down posts as published or stored

    @property
    def ids(self) -> set[str]:
        return {p.lower().removeprefix("t3_") for p in self.posts} | set(self.authors_posts)

    def copy(self, to: Path) -> Path:
        return relocated(self.root, to)


def relocated(root: Path, to: Path) -> Path:
    """A copy of a warehouse whose markers and manifests name the copy's own files (a run's shards
    are named by absolute path): a rebuild or apply in the copy never touches the original."""
    shutil.copytree(root, to, symlinks=True)
    for path in to.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".done"):
            text = path.read_text()
            if str(root) in text:
                path.write_text(text.replace(str(root), str(to)))
    return to


def raw_posts(dump: Path) -> list[dict]:
    out = []
    for _, line in iter_lines(dump):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            out.append(row)
    return out


def rows(root: Path, version: str = "v1") -> list[dict]:
    return [r for f in sorted((root / "express-demo" / version / "data").glob("*.parquet"))
            for r in pq.read_table(f).to_pylist()]


def _choose(root: Path, dump: Path) -> tuple[list[str], str, list[str]]:
    """Three posts of v1 whose text no other post repeats, and an author with another post of v1."""
    raw = raw_posts(dump)
    texts = [(p.get("title"), p.get("selftext")) for p in raw]
    unique = {p["id"] for p, t in zip(raw, texts) if texts.count(t) == 1}
    in_v1 = list(dict.fromkeys(r["post_id"] for r in rows(root)))
    posts = [p for p in in_v1 if p in unique][:3]
    by_author: dict[str, list[str]] = {}
    for p in raw:
        by_author.setdefault(p.get("author"), []).append(p["id"])
    author = next(a for a, ids in by_author.items()
                  if len(ids) > 1 and any(i in in_v1 and i not in posts for i in ids) and not set(ids) & set(posts))
    return [posts[0], f"t3_{posts[1]}", posts[2].upper()], author, by_author[author]


def _texts(root: Path, ids: set[str]) -> set[str]:
    found = {t for r in rows(root) if r["post_id"] in ids for t in (r["text"], r["masked_text"])}
    for f in root.glob("runs/*/shards/*/posts.parquet"):
        found |= {r["text"] for r in pq.read_table(f).to_pylist() if r["id"] in ids and r["text"]}
    return found


def _furnish(root: Path, dump: Path, ids: set[str], texts: set[str]) -> None:
    """What else a warehouse holds after some use (through the real commands where there is one)."""
    from flows.cli import main
    from evaluation.commands import evaluate
    from evaluation.run import EvalRequest
    from pipeline.release_docs import write_card, write_report
    from warehouse.layout import Warehouse

    wh = str(root)
    evaluate(wh, "express-demo/v1", EvalRequest("most-frequent", bootstrap=20).params())
    write_report(Warehouse.at(wh), "express-demo/v1")
    write_card(Warehouse.at(wh), "express-demo/v1", str(root / "cards" / "express-demo" / "v1"))
    items = root.parent / "items.jsonl"
    assert main(["review", "export", "--release", "express-demo/v1", "--out", str(items), "--warehouse", wh]) == 0
    decisions = root.parent / "decisions.jsonl"
    decisions.write_text("".join(json.dumps({**json.loads(line), "decision": "accept", "reviewer": "ann"}) + "\n"
                                 for line in items.read_text().splitlines()))
    assert main(["review", "import", str(decisions), "--warehouse", wh]) == 0
    answer = next(iter(texts))  # a chat model's cached answer that quotes a taken-down post
    (root / "cache" / "responses" / "ab").mkdir(parents=True)
    (root / "cache" / "responses" / "ab" / "ab01.json").write_text(json.dumps({"content": f"It says: {answer}"}))
    (root / "cache" / "responses" / "ab" / "ab02.json").write_text(json.dumps({"content": "[\"sad\"]"}))
    pulled = [p for p in raw_posts(dump) if p["id"] in ids] + raw_posts(dump)[:5]
    (root / "inputs" / "praw").mkdir(parents=True)
    (root / "inputs" / "praw" / "praw-test-0001.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pulled))


@pytest.fixture(scope="package")
def built(prefect_harness, tmp_path_factory) -> Built:
    from sources.demo import DemoSpec, write_demo_dump
    from tests.builds import build

    base = tmp_path_factory.mktemp("takedowns")
    dump = write_demo_dump(base / "in", DemoSpec(posts=POSTS))
    root = base / "built" / "wh"
    build([str(dump)], str(root), CONFIG, workers=0)
    posts, author, authors_posts = _choose(root, dump)
    ids = {p.lower().removeprefix("t3_") for p in posts} | set(authors_posts)
    texts = _texts(root, ids)
    _furnish(root, dump, ids, texts)
    return Built(dump, root, posts, author, authors_posts, texts)


def take_down(root: Path, built: Built) -> None:
    from flows.cli import main

    assert main(["takedown", "add", *[x for p in built.posts for x in ("--post", p)], "--author", built.author,
                 "--reason", "asked by the writers", "--warehouse", str(root)]) == 0


def apply(root: Path, purge: bool = False) -> dict:
    from flows.takedown import apply_flow

    return apply_flow(str(root), purge)


@pytest.fixture(scope="package")
def requested(built, tmp_path_factory) -> Path:
    """The built warehouse with the takedowns added (and so its hashing key made), not applied."""
    root = built.copy(tmp_path_factory.mktemp("requested") / "wh")
    take_down(root, built)
    return root


@pytest.fixture(scope="package")
def applied(requested, tmp_path_factory) -> tuple[Path, dict]:
    """The takedowns applied (withdrawn releases kept)."""
    root = relocated(requested, tmp_path_factory.mktemp("applied") / "wh")
    return root, apply(root)
