"""Posts in Reddit's own shapes, written for these tests from Reddit's documented formats (no real post).

Reddit's JSON escapes `&`, `<` and `>` in `title`, `selftext` and `body` unless the client asks for
`raw_json=1`; some records also carry `&quot;` and `&#39;`. Its editor writes an empty paragraph as
`&#x200B;` and a no-break space as `&nbsp;`: Markdown references, so a dump holds them escaped again
(`&amp;#x200B;`). A quote line starts with `>` (`&gt;` in a dump).

Each post is given three ways: `typed` (the Markdown the author's client sent, as praw reads it with
raw_json=1), `dump` (the line a Pushshift or Arctic-Shift dump holds, escaped by hand here, not by
our code) and `read` (what the reader must make of either: entities decoded once, the editor's
invisible characters gone or a plain space, any other Markdown as written).
"""
from __future__ import annotations

import json
from typing import Any

ENTITIES = ("&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#x200B;")

BASE = {"subreddit": "offmychest", "over_18": False, "score": 12, "stickied": False}

POSTS: list[dict[str, Any]] = [
    {
        "id": "rt1", "author": "lamp_keeper", "created_utc": 1712000001,
        "typed": {
            "title": "Opinions & Advice: I'm so scared of the dark <3",
            "selftext": "I'm so scared of the dark since we moved & I can't say why.\n\n&#x200B;\n\n"
                        "**Edit:** my sister <3 says it gets better.\n\n&#x200B;\n\nI feel so grateful for her.",
        },
        "dump": {
            "title": "Opinions &amp; Advice: I&#39;m so scared of the dark &lt;3",
            "selftext": "I'm so scared of the dark since we moved &amp; I can't say why.\n\n&amp;#x200B;\n\n"
                        "**Edit:** my sister &lt;3 says it gets better.\n\n&amp;#x200B;\n\nI feel so grateful for her.",
        },
        "read": "Opinions & Advice: I'm so scared of the dark <3\n\n"
                "I'm so scared of the dark since we moved & I can't say why.\n\n\n\n"
                "**Edit:** my sister <3 says it gets better.\n\n\n\nI feel so grateful for her.",
    },
    {
        "id": "rt2", "author": "quiet_harbour", "created_utc": 1712000002,
        "typed": {
            "title": "My friend wrote \"I am fine\" and I believed her",
            "selftext": "> I feel so lonely these days, don't worry about me\n\nThat is what she sent me.\n\n"
                        "Now I feel guilty that I never called.&nbsp;I was too busy with work & school.",
        },
        "dump": {
            "title": "My friend wrote &quot;I am fine&quot; and I believed her",
            "selftext": "&gt; I feel so lonely these days, don't worry about me\n\nThat is what she sent me.\n\n"
                        "Now I feel guilty that I never called.&amp;nbsp;I was too busy with work &amp; school.",
        },
        "read": "My friend wrote \"I am fine\" and I believed her\n\n"
                "> I feel so lonely these days, don't worry about me\n\nThat is what she sent me.\n\n"
                "Now I feel guilty that I never called. I was too busy with work & school.",
    },
    {
        "id": "rt3", "author": "tidal_note", "created_utc": 1712000003,
        "typed": {
            "title": "Writing &lt; in Markdown",
            "selftext": "I typed &lt; on purpose: I'm nervous about code blocks like `a < b && c > d`.",
        },
        "dump": {
            "title": "Writing &amp;lt; in Markdown",
            "selftext": "I typed &amp;lt; on purpose: I'm nervous about code blocks like `a &lt; b &amp;&amp; c &gt; d`.",
        },
        "read": "Writing &lt; in Markdown\n\n"
                "I typed &lt; on purpose: I'm nervous about code blocks like `a < b && c > d`.",
    },
]

COMMENTS: list[dict[str, Any]] = [
    {
        "id": "rc1", "author": "night_owl", "created_utc": 1712000100, "link_id": "t3_rt1", "parent_id": "t3_rt1",
        "typed": {"body": ">I feel so grateful for her.\n\nSame here & honestly I'm so relieved I'm not alone <3"},
        "dump": {"body": "&gt;I feel so grateful for her.\n\nSame here &amp; honestly I'm so relieved I'm not alone &lt;3"},
        "read": ">I feel so grateful for her.\n\nSame here & honestly I'm so relieved I'm not alone <3",
    },
]


def _fields(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in ("typed", "dump", "read")}


def dump_lines() -> list[bytes]:
    """The posts and comments as dump lines (submissions first, as RS then RC files are read)."""
    return [json.dumps({**BASE, **_fields(p), **p["dump"]}).encode() for p in POSTS + COMMENTS]


def served_submissions() -> list[dict[str, Any]]:
    """The submissions as a Reddit server holds them (typed Markdown; it escapes without raw_json)."""
    return [{**BASE, **_fields(p), **p["typed"]} for p in POSTS]


def served_comments() -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in COMMENTS:
        out.setdefault(c["link_id"][3:], []).append({**_fields(c), "subreddit": BASE["subreddit"], **c["typed"]})
    return out


def expected_texts() -> dict[str, str]:
    return {p["id"]: p["read"] for p in POSTS + COMMENTS}
