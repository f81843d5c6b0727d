"""PII scrubbing: user handles, e-mail addresses, URLs and phone numbers become placeholders.

Applied to kept posts before extraction, so no release text carries them; `author` is blanked.
Order matters: e-mails before URLs (a domain inside an address), URLs before handles
(`reddit.com/u/name` becomes one [URL]).
"""
from __future__ import annotations

import re
from dataclasses import fields
from operator import attrgetter

import regex

from schemas.records import RawPost

EMAIL = regex.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
URL = regex.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"]"
    r"|\b(?:[\w-]+\.)+(?:com|org|net|io|co|uk|de|me|ly|gg|tv|be|info|edu|gov)\b"
    r"(?:/[^\s<>()\[\]]*[^\s<>()\[\].,;:!?'\"])?/?",
    regex.IGNORECASE,
)
HANDLE = regex.compile(r"(?<![\w])/?(?:u|user)/[\w-]{2,20}", regex.IGNORECASE)
PHONE = regex.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)|\d{2,4})[\s.-]?\d{3,4}[\s.-]?\d{3,4}(?![\w])"
)
_FIELD_VALUES = attrgetter(*(f.name for f in fields(RawPost)))  # in RawPost's positional order
PLACEHOLDERS = {"email": "[EMAIL]", "url": "[URL]", "user": "[USER]", "phone": "[PHONE]"}
# Cheap tests that must pass before a pattern can match: most posts hold no PII, and the full URL
# pattern (tried at every word) is the slowest step of a shard's filter pass without them.
# Every phone match ends in two runs of 3+ digits at most one separator apart.
_PHONE_HINT = regex.compile(r"\d{3}[\s.-]?\d{3}")
_TLD = r"\.(?:com|org|net|io|co|uk|de|me|ly|gg|tv|be|info|edu|gov)\b"
_TLD_HINT = re.compile(_TLD, re.IGNORECASE)
_TLD_HINT_LOWER = re.compile(_TLD)  # on lowered ASCII text: same matches, 3x cheaper than IGNORECASE


def _may_hold_url(text: str) -> bool:
    if "://" in text:
        return True
    if text.isascii():  # lower() folds ASCII exactly as IGNORECASE does; other scripts keep the slow path
        low = text.lower()
        return "www." in low or _TLD_HINT_LOWER.search(low) is not None
    return "www." in text.lower() or _TLD_HINT.search(text) is not None

def _phone(m: regex.Match) -> str:
    """Only digit runs of phone length (7-15 digits) are phone numbers; years and counts are not."""
    digits = sum(ch.isdigit() for ch in m.group(0))
    return "[PHONE]" if 7 <= digits <= 15 else m.group(0)

def scrub(text: str) -> str:
    """The text with every handle, e-mail, URL and phone number replaced by its placeholder."""
    if not text:
        return text
    if "@" in text:
        text = EMAIL.sub("[EMAIL]", text)
    if _may_hold_url(text):
        text = URL.sub("[URL]", text)
    if "/" in text:
        text = HANDLE.sub("[USER]", text)
    if _PHONE_HINT.search(text) is None:
        return text
    return PHONE.sub(_phone, text)

def scrub_post(post: RawPost) -> RawPost:
    """A copy of `post` with scrubbed text fields and no author.

    `text` is built from title and selftext (sources/reddit_json.py); no pattern spans the blank
    line between them, so its scrubbed form is rebuilt from theirs instead of scanned again."""
    title, selftext = scrub(post.title), scrub(post.selftext)
    if post.text == f"{post.title}\n\n{post.selftext}":
        text = f"{title}\n\n{selftext}"
    elif post.text == post.selftext:
        text = selftext
    elif post.text == post.title:
        text = title
    else:
        text = scrub(post.text)
    copy = RawPost(*_FIELD_VALUES(post))  # dataclasses.replace costs 4x more, per kept post
    copy.text, copy.title, copy.selftext, copy.author = text, title, selftext, ""
    return copy
