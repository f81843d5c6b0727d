"""The gate's PII patterns (schemas/expectations/pii.json) are written for speed: each starts with a
character the regex engine scans for and checks the context with look-arounds. These tests prove
they find exactly the texts the plain, readable forms (pii.json version 1) find."""
import random
import re

import pytest

from schemas.expectations import pii_patterns

READABLE = {  # pii.json version 1: what each pattern means
    "reddit_user": r"(?<![A-Za-z0-9_/])/?u/[A-Za-z0-9_-]{3,20}",
    "email": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    "url": r"(?:[Hh][Tt][Tt][Pp][Ss]?://|\b[Ww][Ww][Ww]\.)\S+",
    "phone": r"(?<!\d)(?:\+?\d{1,3}[\s.-]?)?\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4}(?!\d)",
}

CASES = [  # (text, the patterns that must match it)
    ("I feel sad, ask u/someone_else", {"reddit_user"}),
    ("see /u/abc for more", {"reddit_user"}),
    ("at the start: u/abcdef", {"reddit_user"}),
    ("a menu/abc and xu/abcd and //u/abcd are not handles", set()),
    ("u/ab is too short", set()),
    ("mail jo.doe+x@mail.example.co.uk now", {"email"}),
    ("jo@localhost and @someone and a@b.c are not addresses", set()),
    ("see https://example.org/x", {"url"}),
    ("HTTP://EXAMPLE.ORG", {"url"}),
    ("go to www.example.org today", {"url"}),
    ("WwW.Example.org", {"url"}),
    ("awww.yes and http:// alone and www. alone are not links", set()),
    ("call 555-123-4567 or (555) 123 4567", {"phone"}),
    ("+1 555.123.4567", {"phone"}),
    ("ids 1234555-123-4567 and 555-123-45678 are not numbers to call", set()),
    ("I feel so guilty about it (#1234)", set()),
    ("email jo@example.com, site http://x.io, u/someone, 555 123 4567",
     {"email", "url", "reddit_user", "phone"}),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_each_pii_pattern_finds_what_it_names_and_nothing_else(text, expected):
    found = {name for name, p in pii_patterns().items() if re.search(p, text)}
    assert found == expected
    assert {name for name, p in READABLE.items() if re.search(p, text)} == expected


def test_fast_pii_patterns_match_exactly_the_texts_the_readable_ones_match():
    """Random strings over alphabets dense in the patterns' characters and fragments."""
    fast = {name: re.compile(p) for name, p in pii_patterns().items()}
    assert fast.keys() == READABLE.keys()
    plain = {name: re.compile(p) for name, p in READABLE.items()}
    pieces = list("uU/_-.@%+ ()aZ09 51\t\n:wWhHtTpPsSx\u00a0\u017f") + [
        "http://", "https://", "HTTPS://", "www.", "WwW.", "u/", "/u/", "@", ".com", "555", "1234", "+1 ", "(555) "]
    seps = ["", "", " ", "-", ".", "(", ")", ") ", "+", "x", "\t", "\u00a0"]
    rng = random.Random(20261130)

    def phone_like() -> str:  # digit groups of 1-5 between separators
        groups = ("".join(rng.choice("0123456789") for _ in range(rng.choice((1, 2, 3, 3, 3, 4, 4, 5))))
                  for _ in range(rng.randint(1, 5)))
        return rng.choice(seps) + "".join(g + rng.choice(seps) for g in groups)

    hits = dict.fromkeys(READABLE, 0)
    for k in range(30_000):
        text = phone_like() if k % 3 == 0 else "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        for name in READABLE:
            expected = plain[name].search(text) is not None
            assert (fast[name].search(text) is not None) == expected, (name, text)
            hits[name] += expected
    assert all(n > 100 for n in hits.values()), hits  # every pattern was exercised on matching texts too
