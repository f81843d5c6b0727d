"""Numbers that identify a person where Presidio's recognizers stop short: card numbers of any
grouping, phone numbers in any country's layout when a phone word is near, dates of birth, and
personal ID numbers (licence, passport, national insurance, account, member) after their cue.

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
- ID numbers: a code right after an ID cue and its fillers ("passport no.", "NI number:",
  "member #"; privacy/data/id_cues.txt), of 4+ digits or of letters and 3+ digits; a code of
  letters and 5+ digits further on in the cue's sentence or after "number is"; and UK National
  Insurance numbers by their format. A year, a quantity ("1500 karma"), a price, a decimal, a
  time or a date stays. Cues are looked for only before the text's digit runs.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import regex

from privacy.presidio import FoundSpans
from privacy.word_files import read_sections

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

# ---- personal ID numbers ----------------------------------------------------------------------
ID_CUES_FILE = Path(__file__).parent / "data" / "id_cues.txt"
ID_REACH = 48  # characters after a cue where a far code (letters and 5+ digits) is looked for
_CODE_GROUP = regex.compile(r"[A-Za-z0-9]+")
_CODE_SEP = regex.compile(r"[ -](?=[A-Za-z0-9])")
_QUANTITY_AFTER = regex.compile(r"(?i)\s*(?:%|(?:k|m|x|a|an|per|dollars?|bucks|euros?|pounds?|usd|eur|gbp|people|users"
                                r"|members|followers|subscribers|karma|posts|comments|times|hours|days|weeks|months"
                                r"|years|words|points|upvotes|views|miles|km|kg|lbs?)\b)")
_NUMBER_AFTER = regex.compile(r"[.,:/]\d")
_SENTENCE_END = regex.compile(r"[.!?](?:\s|$)|\n")
# UK National Insurance numbers (HMRC's published format): two prefix letters (not D, F, I, Q,
# U, V; the second not O; not BG, GB, KN, NK, NT, TN, ZZ), six digits, a suffix A-D
_NINO = regex.compile(r"(?<![\p{L}\p{N}])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                      r" ?(?:\d\d ?\d\d ?\d\d|\d{3} ?\d{3}) ?[A-D](?![\p{L}\p{N}])")


@lru_cache(maxsize=1)
def _id_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(the cue before a number, the fillers after a cue, the weak cue "number is"), stdlib `re`:
    the cues are looked for only in the few dozen characters before each digit run."""
    words = read_sections(ID_CUES_FILE)

    def alt(entries):
        return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(set(entries), key=len, reverse=True))

    acronyms = [w.upper() for w in words["acronym"]]
    cue = re.compile(rf"(?<![^\W_])(?:(?i:{alt(words['word'])})(?i:['’]?s)?|(?:{alt(acronyms)})s?)(?![^\W_])")
    fillers = re.compile(rf"(?:[\s:#=(.-]+|(?i:{alt(words['filler'])})(?![^\W_])|['’]s)*")
    weak = re.compile(r"(?<![^\W_])(?i:number)(?:\s+(?i:is|was|reads)|\s*[:#=])[\s:#=]*")  # "number 23 with 4" is no ID
    return cue, fillers, weak


def digit_runs(text: str) -> Iterator[tuple[int, int]]:
    r"""(start, end) of each run of digits (any Unicode digit, as `\d`), in order."""
    if not text.isascii():
        yield from (m.span() for m in _DIGIT_RUN_RE.finditer(text))
        return
    marks = text.encode("ascii").translate(_ZEROS)
    start = marks.find(b"0")
    while start >= 0:
        end = marks.find(b" ", start)
        if end < 0:
            yield start, len(marks)
            return
        yield start, end
        start = marks.find(b"0", end)


_DIGIT_RUN_RE = re.compile(r"\d+")
# ASCII digits -> "0", every other byte -> " ": in an ASCII text the runs of "0" are the digit runs,
# found with bytes.find (memchr), cheaper than a `\d+` scan
_ZEROS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
ID_LOOKBACK = 96  # characters before a digit run where an ID cue is looked for


def id_cue_regions(text: str) -> list[tuple[int, int]]:
    """The pieces of text before its digit runs (ID_LOOKBACK characters each, merged) that hold an
    ID cue; only cues found here count (find_id_numbers), so a text without one is skipped. A
    piece is first split into words and checked for a cue's first word (a set lookup), much
    cheaper than the cue pattern."""
    cue, _, weak = _id_patterns()
    firsts = _id_first_words()
    regions: list[tuple[int, int]] = []
    runs = list(digit_runs(text))
    for k, (lo, hi) in enumerate(runs):
        if hi - lo < 3 and not (k and lo - runs[k - 1][1] <= 3 or k + 1 < len(runs) and runs[k + 1][0] - hi <= 3):
            continue  # a code holds a run of 3+ digits or runs close together: "2 kids", "23F" are none
        start = max(0, lo - ID_LOOKBACK)
        if regions and start <= regions[-1][1]:
            regions[-1] = (regions[-1][0], lo)
        else:
            regions.append((start, lo))
    out = []
    for a, b in regions:
        if text.isascii() and firsts.isdisjoint(_LOWER_WORD.findall(text[a:b].lower())):
            continue
        if cue.search(text, a, b) or weak.search(text, a, b):
            out.append((a, b))
    return out


_LOWER_WORD = re.compile(r"[a-z]+")


@lru_cache(maxsize=1)
def _id_first_words() -> frozenset[str]:
    """The first words of the cues and "number", lower case, with their plurals: every cue match
    starts with one of them, so a piece of ASCII text without any holds no cue."""
    words = read_sections(ID_CUES_FILE)
    firsts = {_LOWER_WORD.match(w.lower()).group() for w in (*words["word"], *words["acronym"])} | {"number"}
    return frozenset(firsts | {w + "s" for w in firsts})


def has_id_number_hint(text: str, digits: str) -> bool:
    """May find_id_numbers find anything? A NINO-shaped code near the digits, or an ID cue before them."""
    if not digits or _CODE_DIGITS.search(digits) is None:
        return False  # every code holds three digits in a row or two runs close together
    return _NINO.search(digits) is not None or bool(id_cue_regions(text))


_CODE_DIGITS = re.compile(r"\d\d\d|\d\D{1,3}\d")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _code_at(text: str, pos: int) -> tuple[int, int, int, bool] | None:
    """(start, end, digits, has letters) of the code starting at pos: groups of letters and digits
    split by single spaces or dashes. A group of letters alone counts only in upper case, no
    English stop word, at most 5 long first ("MORGA") and 2 later ("AZ 12 34 56 A"), and at the
    end only before punctuation or the end of the text; a lower-case word ends the code."""
    groups = []
    at = pos
    while True:
        m = _CODE_GROUP.match(text, at)
        if not m or (m.end() < len(text) and text[m.end()] in "_@"):
            break
        g = m.group()
        if not any(c.isdigit() for c in g) and not (g.isupper() and len(g) <= (5 if not groups else 2)
                                                   and g.lower() not in _stop_words()):
            break  # "MORGA 753116", "AZ 12 34 56 A"; never a word, as in all-caps "NUMBER 21 WITH 2"
        groups.append(m.span())
        sep = _CODE_SEP.match(text, m.end())
        if not sep or len(groups) == 8:
            break
        at = sep.end()
    while groups and not any(c.isdigit() for c in text[groups[-1][0]:groups[-1][1]]):
        end = groups[-1][1]  # a trailing letter group: only before punctuation or the end ("... 56 A.")
        if len(groups) > 1 and (end == len(text) or not (text[end].isspace() or text[end].isalnum())):
            break
        groups.pop()
    if not groups or (groups[0][0] > pos and text[pos].isalnum()):
        return None
    start, end = groups[0][0], groups[-1][1]
    piece = text[start:end]
    if end < len(text) and (text[end].isalnum() or _NUMBER_AFTER.match(text, end)):
        return None  # "4.5", "10:30", "12/05": a decimal, a time or a date
    digits = sum(c.isdigit() for c in piece)
    return start, end, digits, any(c.isalpha() for c in piece)


def _id_code(text: str, at: int, tight: bool) -> tuple[int, int] | None:
    """The code right at `at` (tight: after a cue and its fillers) if it reads as an ID number."""
    code = _code_at(text, at)
    if code is None:
        return None
    start, end, digits, letters = code
    if text[max(0, start - 1):start] in ("$", "€", "£", "#") and not tight:
        return None
    if letters:
        return (start, end) if digits >= (3 if tight else 5) and end - start >= 5 else None
    if digits < 4 or not tight or _QUANTITY_AFTER.match(text, end):
        return None
    if digits == 4 and end - start == 4 and text[start:start + 2] in ("19", "20"):
        return None  # a year: "member since 2014" never gets here, "policy 2021" does
    return start, end


def find_id_numbers(text: str) -> list[tuple[int, int]]:
    """Spans of personal ID numbers: a code after an ID cue (privacy/data/id_cues.txt) and its
    fillers ("driver's licence no. is", "NI number:", "member #"), of 4+ digits or of letters and
    3+ digits; a code of letters and 5+ digits later in the cue's sentence; a code of letters and
    5+ digits after "number is"; and UK National Insurance numbers by their format."""
    cue, fillers, weak = _id_patterns()
    spans = {m.span() for m in _NINO.finditer(text)}
    for a, b in id_cue_regions(text):
        for pattern, tight_only in ((cue, False), (weak, True)):
            for m in pattern.finditer(text, a, b):
                at = fillers.match(text, m.end()).end() if pattern is cue else m.end()
                found = _id_code(text, at, tight=True)
                if found and (pattern is cue or found[1] - found[0] >= 5 and _code_at(text, at)[3]):
                    spans.add(found)
                    continue
                if tight_only:
                    continue
                stop = _SENTENCE_END.search(text, m.end(), m.end() + ID_REACH)
                limit = stop.start() if stop else min(len(text), m.end() + ID_REACH)
                for g in _CODE_GROUP.finditer(text, at, limit):
                    if g.start() > 0 and text[g.start() - 1].isalnum():
                        continue
                    far = _id_code(text, g.start(), tight=False)
                    if far:
                        spans.add(far)
                        break
    return sorted(spans)


def IdNumberRecognizer() -> FoundSpans:  # noqa: N802  (named as the recognizer the manifest lists)
    """Licence, passport, national insurance, account and member numbers after their cue, and UK
    National Insurance numbers (see find_id_numbers), as ID_NUMBER."""
    return FoundSpans("ID_NUMBER", find_id_numbers, 0.6, "IdNumberRecognizer")
