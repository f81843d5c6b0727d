"""Numbers that identify a person where Presidio's recognizers stop short: card numbers of any
grouping, phone numbers in any country's layout when a phone word is near, and dates of birth.

- Cards: 12-19 digits that pass the Luhn check, in one run or in groups split by one kind of
  separator (space, dash or dot). With a card word before them ("card", "visa", "cc", ...) any
  grouping counts; without one only the layouts cards are printed in (one run of 13-19 digits,
  groups of four, 4-6-5 / 4-6-4). A number after "+" is a phone number, not a card.
- Phones: 7-15 digits in groups (spaces, dashes, dots, a bracketed area code or "(0)", an
  extension), after a phone word within the same few words ("call me on", "Mobile:", "text",
  "whatsapp", "fax") or before "office" / "mobile" / "fax"; or any such number written with a
  leading "+" and a country code. Dates (2019-12-24, 24.12.2019) are never phones.
- Dates of birth: a full date (day, month and year, in digits or with a month name) after a birth
  cue ("born", "date of birth", "DOB", "birthday") in the same line, or right before "is my
  birthday". A year alone ("born in 1998") is kept.
"""
from __future__ import annotations

import re

import regex

from privacy.presidio import FoundSpans

# ---- cards ------------------------------------------------------------------------------------
_DIGIT_RUN = regex.compile(r"(?<![\p{L}\p{N}_.,/:+-])\d+(?:[ .-]\d+)*(?![\p{L}\p{N}_]|[.,-]\d)")
_GROUP = regex.compile(r"\d+")
_CARD_CUE = regex.compile(r"(?i)\b(?:cards?|cc|visa|master\s?card|amex|american\s+express|discover|maestro|debit"
                          r"|credit|cvv|pan)\b")
CUE_REACH = 40  # characters before a number where its cue is looked for


def luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_layout(lengths: list[int]) -> bool:
    """The layouts cards are printed in."""
    if len(lengths) == 1:
        return 13 <= lengths[0] <= 19
    if lengths in ([4, 6, 5], [4, 6, 4]):
        return True
    return len(lengths) >= 3 and all(n == 4 for n in lengths[:-1]) and 1 <= lengths[-1] <= 4


def find_cards(text: str) -> list[tuple[int, int]]:
    """Spans of card numbers; a run of digit groups may hold several, taken longest first from
    the left."""
    out = []
    for run in _DIGIT_RUN.finditer(text):
        groups = [m.span() for m in _GROUP.finditer(text, run.start(), run.end())]
        i = 0
        while i < len(groups):
            j = next((j for j in range(len(groups) - 1, i - 1, -1) if _is_card(text, groups[i:j + 1])), None)
            if j is None:
                i += 1
                continue
            out.append((groups[i][0], groups[j][1]))
            i = j + 1
    return out


def _is_card(text: str, groups: list[tuple[int, int]]) -> bool:
    start, end = groups[0][0], groups[-1][1]
    piece = text[start:end]
    digits = "".join(text[a:b] for a, b in groups)
    if not 12 <= len(digits) <= 19 or len({c for c in piece if not c.isdigit()}) > 1 or not luhn(digits):
        return False
    if text[max(0, start - 2):start].strip().endswith("+"):
        return False
    return _CARD_CUE.search(text, max(0, start - CUE_REACH), start) is not None or _card_layout(
        [b - a for a, b in groups])


def AnyGroupingCardRecognizer() -> FoundSpans:  # noqa: N802  (named as the recognizer the manifest lists)
    """Luhn-valid card numbers of 12-19 digits (see module doc), as CREDIT_CARD."""
    return FoundSpans("CREDIT_CARD", find_cards, 0.6, "AnyGroupingCardRecognizer")


# ---- phones -----------------------------------------------------------------------------------
_PHONE = regex.compile(r"(?<![\p{L}\p{N}_+/.:-])(?<!\d,)(?:\+|00)?\(?\d[\d ().\-\u00a0]{4,24}\d\)?"
                       r"(?:\s?(?:x|ext\.?|extension)\s?\d{1,5})?(?![\p{L}\p{N}_]|[.,-]\d)")
_PHONE_WORD = (r"phones?|tel|telephone|mobile|mob|cell|cellphone|call|calls|called|calling|ring|text|texts|texted"
               r"|sms|whatsapp|viber|signal|telegram|fax|office|desk|home|number|no|nr|contact|reach|dial|dialed"
               r"|dialled|answer|answering|voicemail|message|messages|hotline|helpline|landline|ext|extension")
_WORD_BEFORE = regex.compile(rf"(?i)\b(?:{_PHONE_WORD})\b")
_WORD_AFTER = regex.compile(r"(?i)^[\s,(-]{0,3}(?:office|mobile|cell|fax|home|work|desk|tel|phone)\b")
_DATE_SHAPE = regex.compile(r"\d{4}([-./])\d{1,2}\1\d{1,2}|\d{1,2}([-./])\d{1,2}\2(?:\d{4}|\d{2})")
PHONE_REACH = 48  # characters before a number where its phone word is looked for


def find_phones(text: str) -> list[tuple[int, int]]:
    out = []
    for m in _PHONE.finditer(text):
        start, end = m.span()
        value = m.group()
        if value.count("(") != value.count(")") or "  " in value:
            continue
        core = regex.sub(r"\s?(?:x|ext\.?|extension)\s?\d{1,5}$", "", value)
        digits = sum(c.isdigit() for c in core)
        if not 7 <= digits <= 15 or _DATE_SHAPE.fullmatch(core.strip("()")):
            continue
        plus = value.startswith("+") or value.startswith("00")
        if not (plus and digits >= 8):
            before = _WORD_BEFORE.search(text, max(0, start - PHONE_REACH), start) is not None
            if not before and not _WORD_AFTER.match(text[end:end + 16]):
                continue
        out.append((start, end))
    return out


def ContextPhoneRecognizer() -> FoundSpans:  # noqa: N802  (named as the recognizer the manifest lists)
    """Phone numbers near a phone word, or with a leading "+" (see module doc), as PHONE_CONTEXT."""
    return FoundSpans("PHONE_CONTEXT", find_phones, 0.45, "ContextPhoneRecognizer")


# ---- dates of birth ---------------------------------------------------------------------------
_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
          r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_DAY = r"(?:[012]?\d|3[01])(?:st|nd|rd|th)?"
_FULL_DATE = (rf"(?:\d{{4}}[-./]\d{{1,2}}[-./]\d{{1,2}}|\d{{1,2}}[-./]\d{{1,2}}[-./](?:\d{{4}}|\d{{2}})"
              rf"|{_DAY}(?:\s+of)?[\s-]{_MONTH},?[\s-](?:\d{{4}}|'\d{{2}})|{_MONTH}\s{_DAY},?\s\d{{4}})(?![\p{{L}}\p{{N}}])")
BIRTH_CUE = r"\b(?:born|birth\s?(?:day|date)?|date\s+of\s+birth|d\.?o\.?b\.?|b-?day)"
_DOB_AFTER_CUE = regex.compile(rf"(?i){BIRTH_CUE}(?:[^\n\d]{{0,40}}?)(?<![\p{{L}}\p{{N}}])(?P<date>{_FULL_DATE})")
_DOB_BEFORE_CUE = regex.compile(rf"(?i)(?<![\p{{L}}\p{{N}}])(?P<date>{_FULL_DATE})\s+(?:is|was)\s+(?:my|his|her|their|our)\s+"
                                r"(?:birthday|birth\s?date|date\s+of\s+birth|dob)\b")
BIRTH_HINT = re.compile(r"born|birth|dob|d\.?o\.?b|b-?day")  # over the lower-cased text: every birth cue holds one


def find_birth_dates(text: str) -> list[tuple[int, int]]:
    spans = {m.span("date") for m in _DOB_AFTER_CUE.finditer(text)}
    spans |= {m.span("date") for m in _DOB_BEFORE_CUE.finditer(text)}
    return sorted(spans)


def BirthDateRecognizer() -> FoundSpans:  # noqa: N802  (named as the recognizer the manifest lists)
    """Full dates after a birth cue (see module doc), as DATE_OF_BIRTH."""
    return FoundSpans("DATE_OF_BIRTH", find_birth_dates, 0.6, "BirthDateRecognizer")