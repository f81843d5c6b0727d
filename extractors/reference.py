"""Which words the EXPRESS reference patterns can reach: the trigger forms that produced the labels.

The authors' script finds phrases with two regexes over `\\w+` words, run left to right without
overlap: "I" + up to 3 words + feel/felt/(am|was) feeling/had felt/have felt + up to 4 words,
and I'm/Im/I am/I was/I have been/I had been + up to 3 words (none starting with "feeling"),
words joined only by spaces and an optional comma. So "I'm feeling sad", "I don't feel sad",
"I've been sad" and "I *still* feel sad" are never labelled, and after "I feel lonely and I feel
afraid" the phrase "lonely and I feel" has used up the second trigger. With `forms="reference"` a
family 1 or 2 find counts only inside such a phrase; "extended" also keeps the others, tagged.

Two kinds of find never carry an EXPRESS label because of the script's offset faults: a word after
a comma or a run of white space in its phrase (the script re-joins the phrase's tokens with single
spaces, so the word's offset moves) and a family 3 find after the text's first sentence (that
sentence's offset is added twice). The rules find both at exact offsets (the patterns are
EXPRESS's, the faults are not); they are extended forms, so only `forms="extended"` keeps them.
Typography is normalised first (’ = ', odd spaces = space): that is no different form.
"""
from __future__ import annotations

import re
from bisect import bisect_right

import regex

REFERENCE = "reference"
EXTENDED = "extended"
FORMS = (REFERENCE, EXTENDED)
EXTENDED_TAG = "+extended_form"  # rule suffix of a find outside the reference phrases

_WORDS = r"\w+(?:\s*,?\s*\w+){0,%d}"
_NOT_FEELING = r"(?!feeling)"
FAMILY1 = regex.compile(
    r"\b[Ii]\b(?:\s+\w+){0,3}?\s+(?:feel|felt|am feeling|feeling|was feeling|had felt|have felt)"
    r"\s+(" + _WORDS % 3 + ")", regex.IGNORECASE | regex.VERSION0)
FAMILY2 = regex.compile(
    r"\b[Ii](?:'m|m| am| was| have been| had been)\b\s+(\b" + _NOT_FEELING + r"\w+\b"
    r"(?:\s*,?\s*\b" + _NOT_FEELING + r"\w+\b){0,2})", regex.IGNORECASE | regex.VERSION0)
# The same two patterns for ASCII text (after the typography below) lowercased once, as stdlib
# patterns that start with the literal "i" and check the word boundary behind it: in such text
# the only white space is " " and "\n", where `re` and `regex` agree, and case needs no folding.
# cheaper than the IGNORECASE scans (tests/extractors/test_forms.py proves the spans equal).
_FAMILY1_ASCII = re.compile(
    r"i(?<!\wi)\b(?:\s+\w+){0,3}?\s+(?:feel|felt|am feeling|feeling|was feeling|had felt|have felt)"
    r"\s+(" + _WORDS % 3 + ")")
_FAMILY2_ASCII = re.compile(
    r"i(?<!\wi)(?:'m|m| am| was| have been| had been)\b\s+(\b" + _NOT_FEELING + r"\w+\b"
    r"(?:\s*,?\s*\b" + _NOT_FEELING + r"\w+\b){0,2})")
# The words of a phrase before the labelled one as the script re-joined them: each followed by one
# space. A comma or a run of white space there moved its offset, and the word lost its label.
_REJOINED = re.compile(r"(?:\w+ )*")
# Where the text's first sentence ends: a run of . ! ? … (and closing quotes or brackets) before a
# space, or a line break.
SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s|\n")
# Typography only, same length: curly apostrophes, tabs, no-break and zero-width spaces.
_TYPOGRAPHY = str.maketrans({"’": "'", "‘": "'", **{c: " " for c in (
    "\u00a0\u200b\u200c\u200d\u2060\ufeff\u2009\u200a\u202f\u3000"
    + "".join(chr(c) for c in range(32) if chr(c) != "\n"))}})


class ReferenceReach:
    """The reference phrase spans of one text, per family, for membership tests of a word start."""

    def __init__(self, text: str):
        self._flat = flat = text.translate(_TYPOGRAPHY)  # same length: offsets stay exact
        if flat.isascii():
            low = flat.lower()
            self._spans = {"family1": _spans(_FAMILY1_ASCII, low), "family2": _spans(_FAMILY2_ASCII, low)}
        else:
            self._spans = {"family1": _spans(FAMILY1, flat), "family2": _spans(FAMILY2, flat)}
        end = SENTENCE_END.search(flat)
        self._first_sentence_end = end.start() if end else len(text)

    def reaches(self, pattern: str, start: int) -> bool:
        """Could the reference patterns of this family have labelled the word at `start`?"""
        spans = self._spans.get(pattern)
        if spans is None:  # family 3 works on tags of the sentence, like ours: the first sentence only
            return start < self._first_sentence_end
        starts, ends = spans
        k = bisect_right(starts, start) - 1
        return k >= 0 and start < ends[k] and _REJOINED.fullmatch(self._flat, starts[k], start) is not None


def _spans(rx: regex.Pattern[str] | re.Pattern[str], text: str) -> tuple[list[int], list[int]]:
    """Sorted, non-overlapping phrase (group 1) spans of a finditer from the text's start."""
    starts: list[int] = []
    ends: list[int] = []
    for m in rx.finditer(text):
        starts.append(m.start(1))
        ends.append(m.end(1))
    return starts, ends
