"""What apply must know before it removes anything: which posts the taken-down authors wrote (in the
raw posts the warehouse stored: shards' lines and posts), keyed fingerprints of every taken-down
post's texts (as releases published them and as the build stored them: whole, and title and body
alone), and which other posts hold one of those texts (reposts, crossposts, quotes: they are taken
down with it). All enter the ledger as `resolved` lines before any text is removed, so a rerun after
a kill, a later build and `verify` once the text is gone still know them."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pyarrow.parquet as pq

from common.matching.fingerprints import fingerprint
from common.matching.reddit_ids import post_key
from common.matching.takedowns import TakedownMatcher
from pipeline.shards import ShardPaths
from takedowns.shards import author_posts, stored_posts
from sources.dumps import iter_lines
from warehouse.layout import Warehouse
from warehouse.ledgers.takedowns import Takedown, TakedownLedger, TakedownSet

REPOST = "holds the text of a taken-down post (resolved by express takedown apply)"


def shard_folders(wh: Warehouse) -> list[Path]:
    """Every folder of stored build work: shards, and labels re-derived by rebuilds."""
    return sorted(p for pattern in ("*/shards/*", "*/relabel/*") for p in wh.runs.glob(pattern) if p.is_dir())


def _release_rows(wh: Warehouse) -> Iterator[tuple[str, str, str]]:
    """(post id, text, masked text) of every release row still on disk (withdrawn ones too)."""
    for release in wh.releases():
        for path in sorted(release.data.glob("*.parquet")) if release.data.is_dir() else []:
            t = pq.read_table(path, columns=["post_id", "text", "masked_text"])
            yield from zip(*(t[c].to_pylist() for c in ("post_id", "text", "masked_text")))


def texts_of(wh: Warehouse, posts: frozenset[str]) -> dict[str, set[str]]:
    """The texts of these posts the warehouse holds: published segments (text, masked text) of any
    release still having its files, and the posts as stored (whole, title, body)."""
    found: dict[str, set[str]] = {}
    for pid, text, masked in _release_rows(wh):
        if pid and post_key(pid) in posts:
            found.setdefault(post_key(pid), set()).update(x for x in (text, masked) if x)
    for folder in shard_folders(wh):
        for post in stored_posts(folder):
            if post_key(post.id) in posts:
                found.setdefault(post_key(post.id), set()).update(x for x in (post.text, post.title, post.selftext) if x)
    return found


def reposts(wh: Warehouse, matcher: TakedownMatcher) -> set[str]:
    """Posts not taken down by id or author that hold a taken-down text: a raw line (its fields, or
    a post it embeds), a stored post or a published segment."""
    found: set[str] = set()
    for folder in shard_folders(wh):
        if (lines := ShardPaths(folder).lines).exists():
            found |= {pid for _, line in iter_lines(lines) if (pid := _line_id(line, matcher))}
        for post in stored_posts(folder):
            if matcher.post_hit("", "", post.title, post.selftext, post.text):
                found.add(post_key(post.id))
    for pid, text, masked in _release_rows(wh):
        if pid and (matcher.text_hit(text) or matcher.text_hit(masked)):
            found.add(post_key(pid))
    return found - matcher.posts


def _line_id(line: bytes, matcher: TakedownMatcher) -> str:
    if not matcher.line_hit(line):
        return ""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return ""
    return post_key(str(obj.get("id", ""))) if isinstance(obj, dict) and obj.get("id") else ""


def resolve(wh: Warehouse) -> TakedownSet:
    """The ledger with what this warehouse adds to it: one `resolved` batch when anything is new
    (a post of a taken-down author, a fingerprint of a text not seen before, a repost). Its time is
    the latest request's, so resolving the same ledger in the same warehouse writes the same bytes."""
    ledger = TakedownLedger(wh.root)
    taken = ledger.current()
    if not taken:
        return taken
    key = ledger.key(create=True)
    assert key is not None
    entries = ledger.read()
    matcher = taken.matcher()
    by_author = author_posts(shard_folders(wh), matcher)
    posts = taken.posts | frozenset(by_author)
    known: dict[str, set[tuple]] = {}
    for e in entries:
        if e.kind == "resolved":
            known.setdefault(post_key(e.post_id), set()).update(tuple(t) for t in e.texts)
    stamp = max(e.time for e in entries if e.kind != "resolved")
    new, texts = [], texts_of(wh, posts)
    prints = {post: {fp for t in texts.get(post, ()) if (fp := fingerprint(key, t))} for post in sorted(posts)}
    for post in sorted(posts):
        fresh = prints[post] - known.get(post, set())
        if fresh or (post in by_author and post not in known):
            new.append(Takedown("resolved", "resolved by express takedown apply", stamp, "apply", post_id=post,
                                author_hmac=by_author.get(post, ""), texts=[list(fp) for fp in sorted(fresh)]))
    every = (*taken.fingerprints, *((p, fp) for p, fps in prints.items() for fp in sorted(fps)))
    found = TakedownMatcher(posts, taken.authors, tuple(dict.fromkeys(every)), key)
    new += [Takedown("resolved", REPOST, stamp, "apply", post_id=post)
            for post in sorted(reposts(wh, found) - set(known))]
    ledger.append(new)
    return ledger.current()

