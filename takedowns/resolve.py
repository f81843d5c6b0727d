"""What apply must know before it removes anything: which posts the taken-down authors wrote (in the
raw posts the warehouse stored: shards' lines and posts) and keyed fingerprints of every taken-down
post's text (as releases published it and as the build stored it). Both enter the ledger as
`resolved` lines before any text is removed, so a rerun after a kill, and `verify` once the text is
gone, still know them."""
from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from common.reddit_ids import post_key
from pipeline.takedown_shards import author_posts, stored_posts
from warehouse.fingerprints import fingerprint
from warehouse.layout import Warehouse
from warehouse.takedowns import Takedown, TakedownLedger, TakedownSet, read_key, taken_down_mask


def shard_folders(wh: Warehouse) -> list[Path]:
    """Every folder of stored build work: shards, and labels re-derived by rebuilds."""
    return sorted(p for pattern in ("*/shards/*", "*/relabel/*") for p in wh.runs.glob(pattern) if p.is_dir())


def texts_of(wh: Warehouse, posts: frozenset[str]) -> dict[str, set[str]]:
    """The texts of these posts the warehouse holds: published segments (text, masked text) of any
    release still having its files, and the posts as stored."""
    found: dict[str, set[str]] = {}
    for release in wh.releases():
        for path in sorted(release.data.glob("*.parquet")) if release.data.is_dir() else []:
            t = pq.read_table(path, columns=["post_id", "text", "masked_text"])
            t = t.filter(taken_down_mask(t["post_id"], posts))
            for pid, text, masked in zip(*(t[c].to_pylist() for c in ("post_id", "text", "masked_text"))):
                found.setdefault(post_key(pid), set()).update(x for x in (text, masked) if x)
    for folder in shard_folders(wh):
        for post in stored_posts(folder):
            if post.id and post.text and post_key(post.id) in posts:
                found.setdefault(post_key(post.id), set()).add(post.text)
    return found


def resolve(wh: Warehouse) -> TakedownSet:
    """The ledger with what this warehouse adds to it: one `resolved` batch when anything is new
    (a post of a taken-down author, a fingerprint of a text not seen before). Its time is the
    latest request's, so resolving the same ledger in the same warehouse writes the same bytes."""
    ledger = TakedownLedger(wh.root)
    taken = ledger.current()
    if not taken:
        return taken
    entries = ledger.read()
    matcher = taken.author_matcher()
    by_author = author_posts(shard_folders(wh), matcher)
    posts = taken.posts | frozenset(by_author)
    known: dict[str, set[tuple]] = {}
    for e in entries:
        if e.kind == "resolved":
            known.setdefault(post_key(e.post_id), set()).update(tuple(t) for t in e.texts)
    key = read_key(wh.takedowns, create=True)
    stamp = max(e.time for e in entries if e.kind != "resolved")
    new, texts = [], texts_of(wh, posts)
    for post in sorted(posts):
        prints = {fp for t in texts.get(post, ()) if (fp := fingerprint(key, t))} - known.get(post, set())
        if prints or (post in by_author and post not in known):
            new.append(Takedown("resolved", "resolved by express takedown apply", stamp, "apply", post_id=post,
                                author_hmac=by_author.get(post, ""), texts=[list(fp) for fp in sorted(prints)]))
    ledger.append(new)
    return ledger.current()

