"""`express takedown sync` with real praw against the fake Reddit server on 127.0.0.1: each post of the
latest release is asked about by fullname, 100 a request; exactly those Reddit shows deleted or
removed, or no longer has, enter the ledger with the reason "deleted on Reddit"."""
from dataclasses import replace

import pytest

from common.parquet import ParquetSink
from schemas.config import GateConfig, Recipe
from schemas.records import EXAMPLES, Example
from sources.praw_source import make_reddit
from takedowns.sync import sync
from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import cfg_for, creds  # noqa: F401  (creds: fixture)
from warehouse.layout import Warehouse
from warehouse.releases.publish import publish_release
from warehouse.ledgers.takedowns import DELETED_ON_REDDIT, TakedownLedger

POSTS = 230  # three /api/info requests


@pytest.fixture
def warehouse(tmp_path):
    """A published release of POSTS posts (the gate off: what is checked here is the sync)."""
    wh = Warehouse.at(tmp_path / "wh")
    with ParquetSink(tmp_path / "ex.parquet", EXAMPLES) as sink:
        for i in range(POSTS):
            sink.write(Example(f"p{i:04d}", 0, "sub", 0, "I feel sad", "I feel <mask>", ["sad"], ["sad"],
                               ["family1"]).to_row())
    publish_release(tmp_path / "ex.parquet", wh, replace(Recipe(), gate=GateConfig(enabled=False)), {})
    return wh


def reddit_now() -> tuple[list[dict], set[str]]:
    """What the fake serves for the release's posts: most stand; some deleted by their writer, some
    removed by moderators, one whose account is gone but whose text stands; two are not served at all."""
    served, gone = [], set()
    for i in range(POSTS):
        post = {"id": f"p{i:04d}", "title": f"Post {i}", "selftext": "I feel sad", "author": f"writer{i}",
                "subreddit": "sub", "created_utc": 1700000000 + i}
        if i in (3, 120, 229):
            post.update(selftext="[deleted]", author="[deleted]")
            gone.add(f"t3_p{i:04d}")
        elif i in (7, 150):
            post.update(selftext="[removed]", removed_by_category="moderator")
            gone.add(f"t3_p{i:04d}")
        elif i == 11:
            post.update(author="[deleted]")  # the account left; the post stands
        if i in (40, 201):
            gone.add(f"t3_p{i:04d}")
            continue
        served.append(post)
    return served, gone


def test_sync_adds_exactly_the_posts_reddit_shows_deleted_or_removed(creds, warehouse):
    served, gone = reddit_now()
    with FakeReddit(served) as fake:
        fake.fail_on = {2: 429}  # the second request is rate-limited once
        waits = []
        cfg = cfg_for(fake, backoff_seconds=0.01)
        done = sync(warehouse, cfg, reddit=make_reddit(cfg), sleep=waits.append)
        asked = [r["params"]["id"].split(",") for r in fake.requests if r["path"].rstrip("/") == "/api/info"]
    assert set(done.gone) == gone and len(done.gone) == len(gone)
    assert waits and fake.errors_served == [429]
    assert all(len(ids) <= 100 for ids in asked) and len(asked) == 4  # 3 batches, one of them twice
    assert sorted({n for ids in asked for n in ids}) == sorted(f"t3_p{i:04d}" for i in range(POSTS))
    entries = TakedownLedger(warehouse.root).read()
    assert {e.post_id for e in entries} == gone
    assert {(e.kind, e.reason, e.source) for e in entries} == {("post", DELETED_ON_REDDIT, "sync")}


def test_a_second_sync_asks_only_about_posts_not_taken_down(creds, warehouse):
    served, gone = reddit_now()
    with FakeReddit(served) as fake:
        cfg = cfg_for(fake)
        sync(warehouse, cfg, reddit=make_reddit(cfg))
        before = len(fake.requests)
        again = sync(warehouse, cfg, reddit=make_reddit(cfg))
        asked = {n for r in fake.requests[before:] if r["path"].rstrip("/") == "/api/info"
                 for n in r["params"]["id"].split(",")}
    assert again.gone == [] and TakedownLedger(warehouse.root).version == 1
    assert asked and not asked & gone
