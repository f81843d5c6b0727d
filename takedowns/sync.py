"""`express takedown sync`: does each post of the latest release still stand on Reddit? Reddit is
asked through praw (`/api/info`, 100 fullnames a call, praw pacing by the rate-limit headers); a post
it no longer knows, or shows deleted or removed (the build's own DeletedFilter decides), enters the
ledger with the reason "deleted on Reddit"."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow.parquet as pq

from common.matching.reddit_ids import post_key
from filters.reddit import DeletedFilter
from pipeline.results import AssembleResult
from pipeline.steps import read_marker
from schemas.config import SourcesConfig
from sources.praw_source import Scraper, make_reddit
from sources.reddit_json import NotAPost, post_from_json
from warehouse.layout import Warehouse
from warehouse.releases.release import Release
from warehouse.ledgers.takedowns import DELETED_ON_REDDIT, TakedownLedger

GONE = ("deleted", "removed")  # DeletedFilter's reasons for a post whose text Reddit took away


@dataclass
class Synced:
    """What a sync asked and found."""

    asked: dict[str, int] = field(default_factory=dict)  # release -> posts asked about
    gone: list[str] = field(default_factory=list)  # fullnames added to the ledger
    version: int = 0


def fullnames(wh: Warehouse, release: Release) -> list[str]:
    """The fullnames of a release's posts: `t1_` for a comment (the run that built it says which
    posts were), `t3_` otherwise."""
    ids: dict[str, None] = {}
    for path in release.split_files().values():
        ids.update(dict.fromkeys(pq.read_table(path, columns=["post_id"])["post_id"].to_pylist()))
    comments = set()
    done = read_marker(wh.run_dir(release.manifest().get("run_id", "")), "assemble")
    for shard in AssembleResult.from_marker(done).shard_list if done else []:
        if shard.posts.exists():
            t = pq.read_table(shard.posts, columns=["id", "kind"])
            comments |= {i for i, k in zip(t["id"].to_pylist(), t["kind"].to_pylist()) if k == "comment"}
    return [f"{'t1' if i in comments else 't3'}_{post_key(i)}" for i in ids]


def gone(answer: dict[str, Any] | None) -> bool:
    """Is a post deleted or removed, by what Reddit answers for it now (None: it no longer knows it)?"""
    if answer is None:
        return True
    try:
        post = post_from_json({**answer, "id": answer.get("id") or "x"}, source="praw")
    except NotAPost:
        return True  # no text left at all
    return DeletedFilter().check(post) in GONE


def sync(wh: Warehouse, cfg: SourcesConfig, datasets: list[str] | None = None,
         reddit: Any = None, sleep: Callable[[float], None] | None = None) -> Synced:
    """Ask Reddit about the posts of each dataset's latest release not taken down yet; add those
    gone. `reddit`: a praw client (default: the recipe's, credentials from praw's own sources)."""
    ledger = TakedownLedger(wh.root)
    taken = ledger.current().posts
    out = Synced()
    names: dict[str, None] = {}  # each post once, in release order
    for dataset in sorted(datasets or {r.root.parent.name for r in wh.releases()}):
        versions = wh.versions(dataset)
        if not versions:
            raise FileNotFoundError(f"no release of dataset '{dataset}' in warehouse {wh.root}")
        release = Release.at(wh.release_dir(dataset, versions[-1]))
        asked = [n for n in fullnames(wh, release) if post_key(n) not in taken]
        out.asked[release.release_id] = len(asked)
        names.update(dict.fromkeys(asked))
    if names:
        scraper = Scraper(reddit or make_reddit(cfg), cfg, **({"sleep": sleep} if sleep else {}))
        answers = scraper.info(list(names))
        out.gone = [n for n in names if gone(answers.get(n))]
    out.version = ledger.add(out.gone, reason=DELETED_ON_REDDIT, source="sync") if out.gone else ledger.version
    return out
