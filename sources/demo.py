"""Built-in demo corpus: deterministic, offline, Reddit-like submissions from our own templates.

It covers the three disclosure pattern families, negations, look-alike non-disclosures,
deleted/removed posts, NSFW, AutoModerator, exact duplicates and a few malformed lines, and is
written as a Pushshift-style `RS_YYYY-MM.zst` dump so the real reader path is exercised.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

TEMPLATES = Path(__file__).parent / "data" / "demo_templates.toml"


@dataclass(frozen=True)
class DemoSpec:
    posts: int = 3000
    seed: int = 13
    month: str = "2024-01"
    malformed: int = 6
    first_id: int = 0  # a later month's dump numbers its posts on, so ids stay unique across dumps
    pii: float = 0.0  # share of posts given a sentence with personal data (the scrubber's work)


def _templates() -> dict[str, Any]:
    with open(TEMPLATES, "rb") as fh:
        return tomllib.load(fh)


def _fill(rng: random.Random, t: dict[str, Any], template: str) -> str:
    e, e2 = rng.sample(t["emotions"], 2)
    return template.format(i=rng.choice(t["intensifiers"]), e=e, e2=e2)


def _body(rng: random.Random, t: dict[str, Any], pii: float = 0.0) -> str:
    """A post of filler sentences with 0-3 disclosures and some look-alikes mixed in."""
    sentences = rng.sample(t["fillers"], rng.randint(3, 7))
    kind = rng.random()
    n_disclosures = 0 if kind < 0.25 else rng.randint(1, 3)
    for _ in range(n_disclosures):
        family = rng.choice(("family1", "family1", "family2", "family2", "family3"))
        sentences.insert(rng.randrange(len(sentences) + 1), _fill(rng, t, rng.choice(t[family])))
    if rng.random() < 0.3:
        sentences.insert(rng.randrange(len(sentences) + 1), _fill(rng, t, rng.choice(t["negated"])))
    if rng.random() < 0.5:
        sentences.insert(rng.randrange(len(sentences) + 1), _fill(rng, t, rng.choice(t["non_disclosures"])))
    if pii and rng.random() < pii:  # no draw at all by default: the pinned demo corpus stays as it is
        handle = f"{rng.choice(t['pii_handles'])}{rng.randrange(100)}"
        sentences.insert(rng.randrange(len(sentences) + 1), rng.choice(t["pii"]).format(h=handle))
    return " ".join(sentences)


def demo_records(spec: DemoSpec = DemoSpec()) -> list[dict[str, Any] | str]:
    """The demo dump's lines in order: dicts for posts, strings for deliberately malformed lines."""
    rng = random.Random(spec.seed)
    t = _templates()
    year, month = (int(x) for x in spec.month.split("-"))
    base_ts = int(datetime(year, month, 1, tzinfo=timezone.utc).timestamp())
    out: list[dict[str, Any] | str] = []
    for n in range(spec.posts):
        post: dict[str, Any] = {
            "id": f"d{spec.first_id + n:06x}",
            "subreddit": rng.choice(t["subreddits"]),
            "author": f"user_{rng.randrange(10_000)}",
            "created_utc": base_ts + n * 600,
            "title": rng.choice(t["titles"]),
            "selftext": _body(rng, t, spec.pii),
            "over_18": False,
            "score": rng.randint(0, 500),
            "stickied": False,
            "distinguished": None,
        }
        roll = rng.random()
        if roll < 0.08:
            post["selftext"], post["author"] = rng.choice(("[deleted]", "[removed]")), "[deleted]"
        elif roll < 0.11:
            post["over_18"] = True
            post["subreddit"] = rng.choice(t["nsfw_subreddits"])
        elif roll < 0.13:
            post["author"], post["selftext"] = "AutoModerator", t["automod"]
            post["distinguished"], post["stickied"] = "moderator", True
        elif roll < 0.17 and n > 10:
            earlier = out[rng.randrange(max(1, len(out) - 50), len(out))]
            if isinstance(earlier, dict):  # a repost: same text, new id and author
                post["title"], post["selftext"] = earlier["title"], earlier["selftext"]
        out.append(post)
    for k in range(spec.malformed):  # broken lines at fixed, spread-out positions
        pos = (k + 1) * len(out) // (spec.malformed + 1)
        out.insert(pos, ('{"id": "broken%d", "title": "cut off' % k) if k % 2 == 0 else "not json at all")
    return out


def write_demo_dump(directory: str | Path, spec: DemoSpec = DemoSpec()) -> Path:
    """Write the demo corpus as `RS_<month>.zst` in `directory` and return its path."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"RS_{spec.month}.zst"
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in demo_records(spec)]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(zstandard.ZstdCompressor(level=3).compress(data))
    return path
