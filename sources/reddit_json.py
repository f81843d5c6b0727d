"""Turn one Reddit JSON object (dump line or API payload) into a RawPost.

Dump fields drift by month (strings vs ints, missing keys), so every field is read leniently;
only a missing id or an object with no text at all makes a record malformed. Title and body are
decoded here, once, to what the author typed (sources/reddit_text.py): every later step sees that.
"""
from __future__ import annotations

from typing import Any

from schemas.records import RawPost
from sources.reddit_text import author_text


class NotAPost(ValueError):
    """The object cannot become a RawPost; the message is the quarantine reason."""


_EXACT = 2**53  # ints up to this size survive int(float(v)) unchanged
# the top-level fields read as strings (besides crosspost_parent_list): the dump reader's fast
# parser re-reads a line with a float in one of them (sources/dumps.py)
STRING_FIELDS = ("id", "title", "selftext", "body", "subreddit", "author", "distinguished", "removed_by_category",
                 "link_id", "_express_source", "crosspost_parent")


def _int(value: Any) -> int:
    if type(value) is int and -_EXACT <= value <= _EXACT:
        return value  # the usual case, without the float round trip
    if value is None:
        return 0  # a missing field, without raising and catching a TypeError
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):  # OverflowError: inf, 1e400, "Infinity", 10**400
        return 0


def _str(value: Any) -> str:
    if type(value) is str:
        return value
    return "" if value is None else str(value)


# Sources whose text Reddit sent unescaped: praw asks for raw_json=1 (sources/reddit_text.py).
RAW_JSON_SOURCES = frozenset({"praw"})


def _bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    if isinstance(value, str):
        return value.strip().lower() in {"true", "1", "yes"}
    return bool(value)


def post_from_json(obj: Any, *, source: str, source_file: str = "", source_line: int = 0) -> RawPost:
    """Build a RawPost from a submission (title/selftext) or comment (body/link_id)."""
    if not isinstance(obj, dict):
        raise NotAPost("not_an_object")
    get = obj.get  # once per post: this runs for every line of a dump
    post_id = _str(get("id")).strip()
    if not post_id:
        raise NotAPost("missing_id")
    is_comment = "body" in obj and "title" not in obj
    source = _str(get("_express_source")) or source
    escaped = source not in RAW_JSON_SOURCES
    title = author_text(_str(get("title")), escaped)
    selftext = author_text(_str(get("body") if is_comment else get("selftext")), escaped)
    if is_comment or not title or title.isspace():  # a blank title adds nothing, not a leading blank line
        text = selftext
    else:  # isspace(), unlike strip(), copies nothing: "" and all-space bodies alike leave the title alone
        text = f"{title}\n\n{selftext}" if selftext and not selftext.isspace() else title
    if "title" not in obj and "selftext" not in obj and "body" not in obj:
        raise NotAPost("no_text_fields")
    # positional, in RawPost's field order (this runs for every line of a dump: keywords cost a
    # good share of it); tests/sources/test_dump_fidelity.py checks that each field lands in its own
    return RawPost(
        post_id,  # id
        text,
        _str(get("subreddit")),
        _str(get("author")),
        _int(get("created_utc")),
        title,
        selftext,
        _bool(get("over_18")),
        _int(get("score")),
        _str(get("distinguished")),
        _bool(get("stickied")),
        _str(get("removed_by_category")),
        "comment" if is_comment else "submission",  # kind
        _str(get("link_id")),
        source,
        source_file,
        source_line,
        _int(get("retrieved_on") or get("retrieved_utc")),
        _crosspost_parent(obj),
    )


def _crosspost_parent(obj: dict[str, Any]) -> str:
    """`crosspost_parent` when present, else the first entry of `crosspost_parent_list` (field drift)."""
    if "crosspost_parent" not in obj and "crosspost_parent_list" not in obj:
        return ""  # most posts: two dict lookups, no string work
    parent = _str(obj.get("crosspost_parent")).strip()
    if parent:
        return parent
    parents = obj.get("crosspost_parent_list")
    if isinstance(parents, list) and parents:
        first = parents[0]
        if isinstance(first, dict):
            return _str(first.get("name") or (f"t3_{first['id']}" if first.get("id") else "")) or "t3_?"
        return "t3_?"
    return ""
