"""Street addresses -> [ADDRESS]: a house number with a street name, and what follows it in a
postal address (unit, town, region, postal code, country), in a sentence or an address block.

A street is found by one of these shapes (the words are privacy/data/address_words.txt):
- number, name, street type: "12 Baker Street", "221b Elm Rd", "4 Rue de la Paix";
- name with a street type or a street suffix, then number: "Lindenstraße 4", "Erzsébet tér 5",
  "ul. Polna 3", "Rua do Sol 12";
- post-office and military boxes: "P.O. Box 12", "PSC 1234, Box 5678", "APO AE 09001";
- after an address cue ("my address is", "lives at", "moved to"), a name and a number;
- in a block of short lines, a line of a name and a number followed by a town, postal code or
  country line.
Then the span runs on over units ("Apt. 4"), towns, regions, postal codes and country names,
separated by commas or line breaks, while they look like parts of an address. A number alone, or
a name and a number with nothing that says street ("Room 101", "Chapter 11", "iPhone 12"), is not
an address.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import regex

from privacy.gazetteer import place_names
from privacy.presidio import FoundSpans
from privacy.word_files import read_sections

WORDS_FILE = Path(__file__).parent / "data" / "address_words.txt"


@lru_cache(maxsize=1)
def address_words() -> dict[str, tuple[str, ...]]:
    """The sections of the word file: after, before, suffix, unit, cue."""
    return read_sections(WORDS_FILE)


def _alternation(words: tuple[str, ...]) -> str:
    """A regex alternation of the words, longest first; a final dot is optional."""
    parts = []
    for w in sorted(set(words), key=len, reverse=True):
        if w.endswith(".") and len(w) > 2:  # "st." or "st"; a one-letter one keeps its dot ("u.")
            parts.append(regex.escape(w[:-1]) + r"\.?")
        else:
            parts.append(regex.escape(w))
    return "(?:" + "|".join(parts) + ")"


_NUM = r"\d{1,5}[A-Za-z]?(?:[-/]\d{1,4}[A-Za-z]?)?"
_PARTICLE = (r"(?:de|da|do|dos|das|del|dei|degli|delle|della|di|du|des|van|von|der|den|ten|ter|la|le|el|al|y|of"
             r"|the|am|an|auf|im|zum|zur)")
_UNIT_WORD = r"(?i:apt|apartment|suite|ste|unit|flat|floor|fl|room|rm|bldg|building|box)\b"
# a capitalized word (not a unit word: "Elm Rd Apt. 4") or an ordinal ("5th")
_CAP = rf"(?:(?!{_UNIT_WORD})\p{{Lu}}[\p{{L}}\p{{M}}'’.-]*|\d{{1,3}}(?:st|nd|rd|th))"
_PLACE_WORD = rf"(?!{_UNIT_WORD})\p{{Lu}}[\p{{L}}\p{{M}}'’-]*"
_S = r"[ \t]"  # a space within a line: a street name never runs over a line break
_NAME = rf"(?:{_PARTICLE}{_S})?{_CAP}(?:{_S}(?:{_PARTICLE}{_S}){{0,2}}{_CAP}){{0,3}}"
_END = r"(?![\p{L}\p{N}])"
_POSTAL = (r"(?:\d{4,6}(?:-\d{3,4})?|[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|[A-Z]\d[A-Z]\s?\d[A-Z]\d"
           r"|[A-Z]{1,2}-\d{4,5})")
_PLACE = rf"(?:{_PLACE_WORD}(?:[ -](?:{_PARTICLE} )?{_PLACE_WORD}){{0,3}}(?: \([\p{{L}} ]+\))?)"
_LINE_LEAD = r"[^\p{L}\p{N}\n]*"  # what starts a line of a quoted or bulleted block: "> ", "- ", "* "
_SEPARATOR = rf"(?:\s*,\s*|[ \t]*\n{_LINE_LEAD}|[ \t]+)"
_STOP_NAMES = regex.compile(r"(?i)^(?:hours?|days?|weeks?|months?|years?|minutes?|mins?|seconds?|times?|miles?|km|kms"
                            r"|kilometer|kilometers|kilometres?|blocks?|steps?|feet|foot|meters?|metres?|laps?|stops?"
                            r"|the|a|an|on|in|at|of|my|our|your|his|her|their|and|or|to|for|with|from|down|up|along"
                            r"|across|past|by|i|it|is|was|this|that)$")


@lru_cache(maxsize=1)
def _patterns() -> dict[str, regex.Pattern]:
    w = address_words()
    after, before, suffix = _alternation(w["after"]), _alternation(w["before"]), _alternation(w["suffix"])
    unit, cue = _alternation(w["unit"]), _alternation(w["cue"])
    unit_id = r"(?:[A-Za-z]?\d{1,5}[A-Za-z]?|[A-Za-z])"  # "4", "3B", "B": a unit's number or letter
    lead = rf"(?:(?i:{unit}){_S}?{unit_id}\.?,?{_S})?(?:\d{{1,5}}{_S})?"  # "Apt. 5, 12 Elm St", "2 14 Elm St"
    street = "|".join([
        rf"{lead}{_NUM},?{_S}(?P<name1>{_NAME}){_S}(?i:{after}){_END}(?:{_S}{_NUM}{_END})?",
        rf"{lead}{_NUM},?{_S}(?i:{before}){_S}{_NAME}(?:,?{_S}{_NUM}{_END})?",
        rf"{lead}(?:(?:{_NAME}){_S})?(?:\p{{Lu}}[\p{{L}}\p{{M}}'’-]*(?i:{suffix})|(?P<name3>\p{{Lu}}[\p{{L}}\p{{M}}'’.-]*){_S}(?i:{after})){_END},?{_S}{_NUM}\.?{_END}",
        rf"(?<![\p{{L}}])(?i:{before}){_S}{_NAME},?{_S}{_NUM}{_END}",
        rf"{lead}(?P<name2>{_NAME}),?{_S}{_NUM}\.?,?[\s>]*(?=(?<![\p{{L}}])(?i:{unit}){_S}?{unit_id}{_END})",  # a name and number before a unit
        rf"{lead}{_NUM},?{_S}(?P<name4>{_NAME}),?[\s>]*(?=(?<![\p{{L}}])(?i:{unit}){_S}?{unit_id}{_END})",  # a number and name before a unit
        rf"{lead}(?i:p\.?{_S}?o\.?{_S}?box{_S}\d{{1,6}}|(?:psc|cmr|unit){_S}\d{{1,5}},?{_S}(?:box{_S}\d{{1,5}})"
        rf"|(?:usns|uss|usnv|uscgc){_S}\p{{Lu}}[\p{{L}}\p{{M}}'’-]+|(?:apo|fpo|dpo){_S}(?:aa|ae|ap){_S}\d{{5}})",
    ])
    return {
        "street": regex.compile(rf"(?<![\p{{L}}\p{{N}}])(?:{street})"),
        "corner": regex.compile(rf"(?i:(?:the\s)?corner\sof)\s(?P<a>[^,.;!?\n]{{3,60}}?)\s(?i:and)\s(?P<b>(?:{_PARTICLE}\s)?{_NAME})"),
        "cue": regex.compile(rf"(?i:\b{cue})\b[\s:]*(?:(?:the|a|an)\s)?(?:[a-z]+\s){{0,4}}?"
                             rf"(?P<span>(?:{_NUM}{_S})?{_NAME},?{_S}{_NUM}{_END})"),
        "unit": regex.compile(rf"\.?[ \t]*(?:\n{_LINE_LEAD})?,?[ \t]*(?<![\p{{L}}\p{{N}}])(?i:{unit}|\#)\s?{unit_id}\.?{_END}"),
        "postal": regex.compile(rf"{_POSTAL}{_END}"),
        "postal_in": regex.compile(rf"(?<![\p{{L}}\p{{N}}]){_POSTAL}{_END}"),
        "place": regex.compile(rf"(?:(?:{_PLACE})(?:,?{_S}(?:[A-Z]{{2,3}}))?(?:,?{_S}{_POSTAL})?|{_POSTAL}(?:{_S}{_PLACE})?){_END}(?!\s*:)"),
        "separator": regex.compile(_SEPARATOR),
        "block_line": regex.compile(rf"^{_LINE_LEAD}(?:{_NUM}{_S})?(?P<name>{_NAME}),?{_S}{_NUM}\.?[ \t]*$", regex.MULTILINE),
    }


@lru_cache(maxsize=1)
def _plain_name(name: str) -> bool:
    """Could this be a street's name, not a count's unit and the words after it ("3 Hours On The
    Road", "3 blocks down main street")?"""
    words = name.split()
    return not _STOP_NAMES.match(words[0]) and not all(_STOP_NAMES.match(w) for w in words)


def _extend(text: str, end: int, spaced: bool) -> int:
    """The end of the address that runs on after `end`: units, then towns, regions, postal codes
    and countries after a comma or a line break (after a plain space only while they are postal
    codes, upper-case towns, countries or follow a unit)."""
    pats = _patterns()
    after_unit = False
    for _ in range(6):
        m = pats["unit"].match(text, end)
        if m:
            end, after_unit = m.end(), True
            continue
        sep = pats["separator"].match(text, end)
        if not sep:
            break
        piece = pats["place"].match(text, sep.end())
        if not piece or not piece.group().strip():
            break
        value = piece.group()
        if "\n" not in sep.group() and "," not in sep.group():
            if not (after_unit or spaced or value.isupper() or pats["postal"].fullmatch(value)
                    or value.lower() in place_names()):
                break
        if _STOP_NAMES.match(value.split()[0]):
            break
        end, after_unit = piece.end(), False
    return end


def find_addresses(text: str, windows: list[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """[start, end) of each street address in the text, merged where they touch. The patterns run
    only on the windows around numbers that could belong to a street (address_windows); `windows`
    = [(0, len(text))] scans the whole text (the tests compare both)."""
    spaced = True  # may an address run on after a plain space ("12 Elm St Leeds")?
    if text.islower():  # "i live at 12 elm street": read as if each word were capitalized, and
        text, spaced = _capitalized(text), False  # then only commas and line breaks join its parts
    pats = _patterns()
    spans = []
    for lo, hi in address_windows(text) if windows is None else windows:
        for m in pats["street"].finditer(text, lo, hi):
            name = m.group("name1") or m.group("name2") or m.group("name3") or m.group("name4")
            if name is not None and not _plain_name(name):
                continue
            spans.append((m.start(), _extend(text, m.end(), spaced=spaced)))
        for m in pats["corner"].finditer(text, lo, hi):
            if any(c.isdigit() for c in m.group("a")) or any(m.start() <= a < m.end() for a, _ in spans):
                spans.append((m.start(), _extend(text, m.end(), spaced=False)))
        for m in pats["cue"].finditer(text, lo, hi):
            spans.append((m.start("span"), _extend(text, m.end("span"), spaced=spaced)))
        for m in pats["block_line"].finditer(text, lo, hi):
            if not _plain_name(m.group("name")):
                continue
            end = _extend(text, m.end(), spaced=False)
            if "\n" in text[m.end():end] and _postal_or_country(text[m.end():end]):  # runs on into such lines
                lead = regex.match(_LINE_LEAD, m.group()).end()
                spans.append((m.start() + lead, end))
    spans += [m.span("code") for m in _POSTAL_CUE.finditer(text)]
    return _merge(spans, text)


def _capitalized(text: str) -> str:
    """The text with the first letter of each word upper-cased, at the same offsets."""
    return _WORD_START.sub(lambda m: m.group().upper() if len(m.group().upper()) == 1 else m.group(), text)


_WORD_START = regex.compile(r"(?<![\p{L}\p{N}'’])\p{Ll}")
# a postal code after its name: "zip code is 10115", "Postcode: LS6 2AB"
_POSTAL_CUE = regex.compile(rf"(?i:\b(?:zip(?:\s?code)?|post\s?code|postal\s+code))\s*(?i:is\s+|:\s*|=\s*)?(?P<code>{_POSTAL}){_END}")
_POSTAL_WORD = re.compile(r"zip|post\s?code|postal\s+code")


def has_postal_cue(text: str) -> bool:
    """Does the text name a postal code ("zip code", "postcode")? Then it may hold one alone."""
    return _POSTAL_WORD.search(text.lower()) is not None


WINDOW_BEFORE, WINDOW_AFTER = 100, 80  # characters around a street number where a pattern may match


def address_windows(text: str) -> list[tuple[int, int]]:
    """Merged pieces of text around the numbers that could be part of a street address: a number
    right before a capitalized word, a street-type or unit word or another number ("12 Elm",
    "4 rue", "2 14"), or right after a capitalized word or a street-type, suffix or unit word
    ("Lindenstraße 4", "Erzsébet tér 5", "Box 12"); and around a ship's name of a military address.
    Every address pattern needs one of these, so the patterns need not scan the rest (most
    numbers in posts are ages, years, times and counts)."""
    out: list[tuple[int, int]] = []
    for m in _NUMBER.finditer(text):
        s, e = m.span()
        if not (_street_word_after(text, e) or _street_word_before(text, s)):
            continue
        _add(out, max(0, s - WINDOW_BEFORE), min(len(text), e + WINDOW_AFTER))
    for m in _SHIP.finditer(text):
        _add(out, m.start(), min(len(text), m.end() + WINDOW_AFTER))
    return out


def _street_word_after(text: str, e: int) -> bool:
    """Is the word after a number capitalized (not "I"), a number, "#" or a word that starts a
    street or a unit ("rue", "Apt")?"""
    n = len(text)
    if e < n and text[e] == ",":
        e += 1
    while e < n and text[e] in " \t":
        e += 1
    if e >= n:
        return False
    c = text[e]
    if c.isdigit() or c == "#":
        return True
    end = e
    while end < n and not text[end].isspace():
        end += 1
    word = text[e:end]
    if c.isupper():
        return word.rstrip(".,;:!?") != "I"
    return word.rstrip(",;:!?").lower() in _street_words()["before_number"]


def _street_word_before(text: str, s: int) -> bool:
    """Is the word before a number capitalized, an ordinal ("5th"), or a word that ends a street
    or a unit ("tér", "u.", "box", "Lindenstraße")?"""
    b = s
    while b > 0 and text[b - 1] in " \t,":
        b -= 1
    start = b
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    word = text[start:b]
    if not word:
        return False
    if word[0].isupper():
        return True
    lower = word.lower()
    words = _street_words()
    if lower in words["after_number"] or lower.rstrip(".") in words["after_number"]:
        return True
    return lower[:1].isdigit() and lower.rstrip(".")[-2:] in ("st", "nd", "rd", "th")


@lru_cache(maxsize=1)
def _street_words() -> dict[str, frozenset[str]]:
    """Lower-cased words that may come right before a street number (a street type, a unit) or
    right after one (a street type written first, a unit)."""
    w = address_words()
    plain = lambda words: {x for x in words} | {x.rstrip(".") for x in words}  # noqa: E731
    return {"after_number": frozenset(plain(w["after"]) | plain(w["unit"]) | plain(w["suffix"])),
            "before_number": frozenset(plain(w["before"]) | plain(w["unit"]))}


def _add(windows: list[tuple[int, int]], lo: int, hi: int) -> None:
    if windows and lo <= windows[-1][1]:
        windows[-1] = (windows[-1][0], max(hi, windows[-1][1]))
    else:
        windows.append((lo, hi))


_NUMBER = regex.compile(r"(?<![\p{L}\p{N}])\d{1,6}(?:st|nd|rd|th|[A-Za-z])?(?![\p{L}\p{N}])")
_SHIP = regex.compile(r"(?i)\bus(?:ns|s|nv|cgc)[ \t]")


def _postal_or_country(text: str) -> bool:
    """Does an address block's continuation hold a unit, a postal code or a country?"""
    pats = _patterns()
    if pats["unit"].search(text) or pats["postal_in"].search(text):
        return True
    return any(line.strip(" \t>,").lower() in place_names() for line in text.splitlines())


def _merge(spans: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Touching spans merged; a sentence's full stop after a long last word is left out."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if text[end - 1:end] == "." and len(text[start:end - 1].rsplit(None, 1)[-1]) > 3:
            end -= 1
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def AddressRecognizer() -> FoundSpans:  # noqa: N802  (named as the recognizer the manifest lists)
    """Street addresses (see module doc) as STREET_ADDRESS."""
    return FoundSpans("STREET_ADDRESS", find_addresses, 0.6, "AddressRecognizer")
