"""Cheap regex prefilter: find the short text windows worth sending to spaCy.

A window is opened only where a disclosure trigger (feel/felt/feeling, I'm, Im, I am, I was,
I have/had/'ve/'d been) is followed, within the pattern's phrase length, by a lexicon word. On
real Reddit most text fails that test, so spaCy tags a small share of the words, and only
around the trigger (plus the sentence start when family 3 needs it).

Each window is as short as the rules allow (measured on the dev file, bench/history.md): it starts
at the "I" of the trigger (for feel/felt/feeling, the first "I" within WORDS_BEFORE_VERB words;
with none, only family 3 can use the site, and no window opens unless it can), and it ends
WORDS_AFTER_TERM words after the phrase's last lexicon word.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import regex

# One regex for all triggers; group `verb` opens families 1 and 3, group `be` family 2.
TRIGGER = regex.compile(
    r"\b(?:(?P<verb>feel|felt|feeling)"
    r"|(?P<be>i(?:[^\S\n]*['’][^\S\n]*m|m|[^\S\n]+am|[^\S\n]+was"
    r"|(?:[^\S\n]*['’][^\S\n]*ve|ve|[^\S\n]+have|[^\S\n]*['’][^\S\n]*d|[^\S\n]+had)[^\S\n]+been)))\b",
    regex.IGNORECASE,
)
# For ASCII text, lowercased once: the same triggers as two case-sensitive stdlib patterns, each
# starting with a literal ("fe", "i") that the scan looks for, the word boundary before it checked
# behind; [ \t\v\f\r] is what `regex` counts as [^\S\n] in ASCII (not \x1c-\x1f, which `re`
# would), and ASCII text has no curly apostrophe. An "i" is a trigger's only if the next character
# can start one of the forms ([ \t\x0b\x0c\r'mv]): that lookahead, checked before the lookbehind,
# sets most of a text's i's aside at once. Both scans cost a fraction of TRIGGER's (bench/history.md);
# tests/extractors/test_prefilter.py proves the spans equal.
_H_CHARS = r" \t\x0b\x0c\r"
_H = rf"[{_H_CHARS}]"
_VERB_LOWER = re.compile(r"fe(?<!\wfe)(?:el|lt|eling)\b")
_BE_LOWER = re.compile(
    rf"i(?=[{_H_CHARS}'mv])(?<!\wi)(?:{_H}*'{_H}*m|m|{_H}+am|{_H}+was|(?:{_H}*'{_H}*ve|ve|{_H}+have|{_H}*'{_H}*d|{_H}+had){_H}+been)\b")
# Sentence ends: terminal punctuation followed by space, or line breaks. The definition, and the
# same ends found faster as two stdlib scans that each start with what they look for (a mark, a
# line break), merged in `_sentence_ends`: the mark is consumed instead of looked behind at every
# position, and _WHITE is exactly what `regex` takes for \s (`re` adds \x1c-\x1f); the same ends as
# _SENT_END finds (tests/extractors/test_prefilter.py).
_SENT_END = regex.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\n+")
_WHITE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_MARK_END = re.compile(rf"[.!?…][\"'”’)\]]*[{_WHITE}]+")
_BREAKS = re.compile(r"\n\n*")
# Words as the phrase windows count them; a phrase stops at these characters.
_WORD = regex.compile(r"[\w'’]+(?:-[\w'’]+)*")
_STOP = regex.compile(r"[.!?;:()\[\]\n…]")
_PRONOUNISH = regex.compile(
    r"\b(?:i|me|my|mine|myself|we|us|our|you|your|he|him|his|she|her|it|its|they|them|their"
    r"|this|that|these|those|someone|somebody|everyone|everybody|nobody|anyone)\b",
    regex.IGNORECASE,
)
# A word that may hold the token "I" family 1 needs: spaCy splits "Im", "Ive", "Id", "Ima" into
# "I" + rest, and "so-I", "(I" at the punctuation (a superset: the window may start too early, never late).
_I_WORD = regex.compile(r"(?<![^\W_])i(?:m|ma|ve|d)?(?![^\W_])", regex.IGNORECASE)
# Phrase lengths of the paper (words after the trigger).
VERB_PHRASE = 4
BE_PHRASE = 3
WORDS_BEFORE_VERB = 5  # where "I" is looked for: "I" + up to 3 words + the verb, and one word more
WORDS_AFTER_TERM = 1  # words tagged after the phrase's last lexicon word (the tagger's right context)


def _sentence_ends(text: str) -> Iterator[tuple[int, int]]:
    """The spans _SENT_END matches in text, in order. A mark's end (its quotes and white space)
    may take in line breaks the other scan also found: those are skipped."""
    marks, breaks = _MARK_END.finditer(text), _BREAKS.finditer(text)
    mark, brk = next(marks, None), next(breaks, None)
    taken = 0  # where the last end yielded stops
    while mark is not None or brk is not None:
        if brk is None or (mark is not None and mark.start() < brk.start()):
            start, end = mark.start() + 1, mark.end()  # the mark itself ends the sentence before
            mark = next(marks, None)
        else:
            start, end = brk.span()
            brk = next(breaks, None)
            if start < taken:
                continue
        yield start, end
        taken = end


def sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) character spans of rough sentences; together they cover the text. Lazy: the
    text is scanned only as far as the spans are asked for."""
    start = 0
    for end_start, end_end in _sentence_ends(text):
        if end_start > start:
            yield start, end_start
        start = end_end
    if start < len(text):
        yield start, len(text)


class _SentenceOf:
    """The rough sentence around each of a text's triggers, asked for in text order: one lazy pass
    over the sentence spans, stopped after the last sentence asked for (`selects` asks for one)."""

    def __init__(self, text: str):
        self._spans = sentence_spans(text)
        self._current = next(self._spans, (0, len(text)))
        self._next = next(self._spans, None)

    def at(self, pos: int) -> tuple[int, int]:
        """The last span starting at or before pos (the first span when none does)."""
        while self._next is not None and self._next[0] <= pos:
            self._current, self._next = self._next, next(self._spans, None)
        return self._current


@dataclass(frozen=True, slots=True)
class Window:
    """A slice of one text to tag; `sentence_start` says family 3 may look at it."""

    start: int
    end: int
    sentence_start: bool


def _norm(word: str) -> str:
    return word.lower().replace("’", "'")


class Prefilter:
    """Selects tagging windows: a trigger followed within its phrase by a lexicon word."""

    def __init__(self, terms: Iterable[str]):
        self.terms = frozenset(t.lower() for t in terms if t)
        self.max_words = max((len(t.replace("-", " ").split()) for t in self.terms), default=1)

    def _lexicon_within(self, text: str, pos: int, limit: int, words: int) -> bool:
        """Is a lexicon word among the next `words` words after pos (same sentence)?"""
        stop = _STOP.search(text, pos, limit)
        end = stop.start() if stop else limit
        found = [_norm(m.group()) for _, m in zip(range(words), _WORD.finditer(text, pos, end))]
        for k, w in enumerate(found):
            if w in self.terms or w.split("-")[-1] in self.terms:
                return True
            if k + 1 < len(found) and f"{w} {found[k + 1]}" in self.terms:
                return True
        return False

    def windows(self, text: str) -> list[Window]:
        """Merged, sorted tagging windows of one text (empty for most non-disclosing texts)."""
        return _merge(list(self._sites(text)))

    def _sites(self, text: str, ends: bool = True) -> Iterator[tuple[int, int, bool]]:
        """(start, end, starts a sentence) of each trigger's window, in text order; with ends=False
        the end is not worked out (-1): whether a site opens does not depend on it."""
        sentences: _SentenceOf | None = None
        for m in _triggers(text):
            is_verb = m.verb is not None
            if not self._lexicon_within(text, m.end, min(len(text), m.end + 200),
                                        VERB_PHRASE if is_verb else BE_PHRASE):
                continue
            sentences = sentences or _SentenceOf(text)
            s_start, s_end = sentences.at(m.start)
            s_start = min(s_start, m.start)
            end = self._after(text, m.end, s_end, VERB_PHRASE if is_verb else BE_PHRASE) if ends else -1
            if is_verb:
                if m.verb == "feeling" and not _PRONOUNISH.search(text, s_start, m.start):
                    start = s_start  # family 3 needs the tags of the whole sentence prefix
                else:
                    start = self._subject(text, m.start, s_start)
                    if start < 0:
                        continue  # no "I" for family 1, and family 3 cannot apply
            else:
                start = m.start
            yield start, end, start == s_start

    @staticmethod
    def _subject(text: str, pos: int, floor: int) -> int:
        """Start of the first word that may hold "I" among the WORDS_BEFORE_VERB words before pos
        (not before floor), or -1."""
        words = list(_WORD.finditer(text, max(floor, pos - 40 * WORDS_BEFORE_VERB), pos))[-WORDS_BEFORE_VERB:]
        return next((w.start() for w in words if _I_WORD.search(w.group())), -1)

    def _after(self, text: str, pos: int, ceil: int, words: int) -> int:
        """Where the window after a trigger at pos ends: WORDS_AFTER_TERM words after the last word
        of the phrase (its first `words` words, up to a stop) that holds a lexicon word, plus one
        character, within the first `words` words and not after ceil."""
        found = [m for _, m in zip(range(words), _WORD.finditer(text, pos, ceil))]
        if not found:
            return pos
        stop = _STOP.search(text, pos, found[-1].end())
        phrase = [_norm(m.group()) for m in found if stop is None or m.end() <= stop.start()]
        last = len(found) - 1
        for k in range(len(phrase) - 1, -1, -1):
            if self._holds_term(phrase, k):
                last = min(len(found) - 1, k + WORDS_AFTER_TERM)
                break
        end = found[last].end()
        return min(ceil, end + 1 if end < ceil else end)

    def _holds_term(self, words: list[str], k: int) -> bool:
        """May words[k] hold (or end) a lexicon word? Wider than `_lexicon_within`: any part of a
        hyphenated word, and the second word of a two-word term, since spaCy tags those as tokens."""
        w = words[k]
        if w in self.terms or any(p in self.terms for p in w.split("-")):
            return True
        return k > 0 and f"{words[k - 1]} {w}" in self.terms

    def is_candidate(self, sentence: str) -> bool:
        return bool(self.windows(sentence))

    def selects(self, text: str) -> bool:
        """Would `windows(text)` open a window? The same sites, stopped at the first one, without
        their ends (this runs on every post of a dump)."""
        return next(self._sites(text, ends=False), None) is not None

    def candidates(self, text: str) -> Iterator[tuple[int, int]]:
        for w in self.windows(text):
            yield w.start, w.end


@dataclass(frozen=True, slots=True)
class Trigger:
    """One trigger in a text: its span, and for feel/felt/feeling the verb (lowercased; families 1
    and 3), None for the forms of "I am/was/have been" (family 2)."""

    start: int
    end: int
    verb: str | None


def _triggers(text: str) -> list[Trigger]:
    """TRIGGER's matches in text, in order (for ASCII text, via the cheaper scans above)."""
    if text.isascii():
        low = text.lower()
        found = [Trigger(m.start(), m.end(), m.group()) for m in _VERB_LOWER.finditer(low)]
        found += [Trigger(m.start(), m.end(), None) for m in _BE_LOWER.finditer(low)]
        return sorted(found, key=lambda t: t.start) if found else found  # the two never overlap
    return [Trigger(m.start(), m.end(), v.lower() if (v := m.group("verb")) else None) for m in TRIGGER.finditer(text)]


def _merge(sites: list[tuple[int, int, bool]]) -> list[Window]:
    out: list[Window] = []
    for start, end, at_start in sorted(sites):
        if out and start <= out[-1].end:
            last = out[-1]
            out[-1] = Window(last.start, max(last.end, end), last.sentence_start)
        else:
            out.append(Window(start, end, at_start))
    return out
