"""The Presidio recognizers the scrubber enables, one per structured PII kind, all offline.

Presidio's own recognizers are used where they fit (IP, phone via `phonenumbers`, credit card with
Luhn, IBAN with its checksum); ours cover what Presidio lacks or gets wrong for Reddit text: URLs
with any real TLD (Presidio knows a fixed list), e-mail domains checked against the bundled
public-suffix list (Presidio's default asks the internet for it), US SSNs that are only
refused for impossible number groups, and Reddit `u/` handles, `@handles` and Discord tags.
Each recognizer has a cheap hint: a test that is true of every text it can match, so most texts
never reach its patterns. Hints that need digits look only at the few characters around the
text's digits (digit_context), which made the hints much cheaper on 100-300-word posts.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache

import regex

import privacy.presidio  # noqa: F401  (first: the one way in to Presidio)
from presidio_analyzer import EntityRecognizer, Pattern, PatternRecognizer  # isort: skip
from presidio_analyzer.predefined_recognizers import (
    EmailRecognizer,
    IbanRecognizer,
    IpRecognizer,
    PhoneRecognizer,
)

from privacy.addresses import AddressRecognizer, _capitalized, address_windows, has_postal_cue
from privacy.numbers import (BIRTH_HINT, AnyGroupingCardRecognizer, BirthDateRecognizer, ContextPhoneRecognizer,
                             IdNumberRecognizer, digit_runs, has_id_number_hint)
from schemas.lexicon import lexicon_terms


@lru_cache(maxsize=1)
def suffix_extractor():
    """tldextract over the public-suffix list snapshot bundled in its wheel: never fetched."""
    import tldextract

    return tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True,
                                 include_psl_private_domains=False)


def public_suffix(host: str) -> tuple[str, str]:
    """(registrable label, ICANN public suffix) of a host name; ('', '') when it has no real suffix."""
    parts = suffix_extractor()(host)
    return (parts.domain, parts.suffix) if parts.suffix and parts.domain else ("", "")


class OfflineEmailRecognizer(EmailRecognizer):
    """Presidio's e-mail pattern; the domain must end in a real public suffix (bundled list)."""

    def validate_result(self, pattern_text: str) -> bool:
        return public_suffix(pattern_text.rsplit("@", 1)[-1])[1] != ""


# A host of labels with a last label of letters (a TLD), with an optional scheme, port and path;
# a path stops before trailing sentence punctuation and never takes brackets or quotes.
_URL = (r"(?<![\w@.-])(?:(?:https?|ftp)://)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+"
        r"(?:xn--[a-z0-9-]{1,59}|[a-z]{2,63})(?![\w-])(?::\d{2,5})?"
        r"(?:[/?#](?:[^\s<>()\[\]{}\"'`|]*[^\s<>()\[\]{}\"'`|.,;:!?*~])?)?")
_PATH_OR_SCHEME = regex.compile(r"://|[/?#:]|^www\d{0,3}\.", regex.IGNORECASE)


@lru_cache(maxsize=1)
def _typo_words() -> frozenset[str]:
    """Words that, joined by a dot with no space after it, look like a host: 'sad.so', 'me.at'."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS) | lexicon_terms()


_CHAT_SUFFIXES = frozenset({"lol", "im"})  # real TLDs, but 'that won't work.lol' is chat


class PublicSuffixUrlRecognizer(PatternRecognizer):
    """URLs whose host ends in any public suffix of the bundled list (not a fixed TLD list).

    A bare `word.word` with no scheme, www, port or path is a URL unless it reads as a missing
    space: both words common English or emotion words ('so sad.it hurts', so an emotion word
    never turns into [URL]), a lower-case word run into a capitalized one ('ward.My'), or a chat
    word after the dot ('work.lol')."""

    def __init__(self) -> None:
        super().__init__(supported_entity="URL", name="PublicSuffixUrlRecognizer",
                         patterns=[Pattern("url with a public suffix", _URL, 0.6)], context=[])

    def validate_result(self, pattern_text: str) -> bool:
        text = pattern_text.lower()
        host = regex.sub(r"^[a-z]+://", "", text)
        host = regex.split(r"[/?#:]", host, maxsplit=1)[0]
        domain, suffix = public_suffix(host)
        if not suffix:
            return False
        if _PATH_OR_SCHEME.search(text) or host.count(".") > 1:
            return True
        dot = pattern_text.rindex(".")
        if pattern_text[dot + 1].isupper() and pattern_text[dot - 1].islower():
            return False  # 'the ward.My supervisor': a sentence run into the next one
        words = _typo_words()
        return not (suffix in _CHAT_SUFFIXES or (domain in words and suffix in words))


class RedditSsnRecognizer(PatternRecognizer):
    """US SSNs written AAA-GG-SSSS (one separator kind). Unlike Presidio's, the published sample
    numbers (123-45-6789) are replaced too: a scrubber has no reason to keep them."""

    def __init__(self) -> None:
        super().__init__(supported_entity="US_SSN", name="RedditSsnRecognizer", context=[],
                         patterns=[Pattern("ssn with separators", r"(?<![\w.-])\d{3}([- .])\d{2}\1\d{4}(?![\w-]|\.\d)", 0.5)])

    def invalidate_result(self, pattern_text: str) -> bool:
        digits = "".join(c for c in pattern_text if c.isdigit())
        return (len(set(digits)) == 1 or digits[:3] in ("000", "666") or digits[3:5] == "00"
                or digits[5:] == "0000")


class NanpShapedPhoneRecognizer(PatternRecognizer):
    """Numbers written like North American phone numbers (555-123-4567, (555) 123 4567, +1 555.123.4567)
    whether or not phonenumbers thinks the number is assigned: a made-up or mistyped number is
    still someone's way of writing their phone."""

    def __init__(self) -> None:
        super().__init__(supported_entity="PHONE_SHAPED", name="NanpShapedPhoneRecognizer", context=[],
                         patterns=[Pattern("3-3-4 digits", r"(?<![\w.-])(?:\+?1[-. ]?)?(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-]|\.\d)", 0.5)])


class RedditUserRecognizer(PatternRecognizer):
    """Reddit user handles: u/name and /u/name (3-20 characters), also user/name."""

    def __init__(self) -> None:
        super().__init__(supported_entity="REDDIT_USER", name="RedditUserRecognizer", context=[],
                         patterns=[Pattern("u/ handle", r"(?<![\w/])/?(?:u|user)/[a-z0-9_-]{3,20}(?![\w-])", 0.8)])


class AtHandleRecognizer(PatternRecognizer):
    """@handles (Twitter, Instagram, TikTok style), not e-mail addresses and not '@5pm' / '@ 10:30'."""

    def __init__(self) -> None:
        pattern = (r"(?<![\w@.+-])@(?!\d{1,2}(?::\d\d)?\s?(?:[ap]\.?m\.?)?(?![\w]))"
                   r"[a-z0-9_](?:[a-z0-9_.]{0,28}[a-z0-9_])?(?![\w@]|\.\w)")
        super().__init__(supported_entity="AT_HANDLE", name="AtHandleRecognizer", context=[],
                         patterns=[Pattern("@handle", pattern, 0.7)])


class DiscordTagRecognizer(PatternRecognizer):
    """Discord tags: name#1234 (the four-digit discriminator of legacy usernames)."""

    def __init__(self) -> None:
        super().__init__(supported_entity="DISCORD_TAG", name="DiscordTagRecognizer", context=[],
                         patterns=[Pattern("discord tag", r"(?<![\w#])[a-z0-9_.]{2,32}#\d{4}(?![\w#])", 0.8)])


class SkypeRecognizer(PatternRecognizer):
    """Skype names next to the word Skype: "skype: jane.doe", "on Skype (jane_doe)", "I'm jane.doe on skype"."""

    def __init__(self) -> None:
        after = r"(?i:skype)(?:\s+(?:id|name|handle))?(?:\s*(?:is|:)|\s+me\s+(?:at|on))?\s*\(?\s*(?P<id>[a-z][a-z0-9._-]{4,31}[a-z0-9])"
        super().__init__(supported_entity="SKYPE_ID", name="SkypeRecognizer", context=[],
                         patterns=[Pattern("skype name after the word", after, 0.6)])  # analyze() below reads both
        self._after = regex.compile(after)
        self._before = regex.compile(r"(?<![\w.@-])(?P<id>[a-z][a-z0-9_-]*[._][a-z0-9._-]*[a-z0-9])\s+on\s+(?i:skype)")

    def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):
        from presidio_analyzer import RecognizerResult

        found = {m.span("id") for m in self._after.finditer(text)} | {m.span("id") for m in self._before.finditer(text)}
        stop = _typo_words()
        return [RecognizerResult("SKYPE_ID", a, b, 0.6) for a, b in sorted(found) if text[a:b].lower() not in stop]


PHONE_REGIONS = ("US", "GB", "CA", "AU", "NZ", "IE", "IN", "DE", "FR")


@dataclass(frozen=True)
class Detector:
    """One Presidio recognizer, the placeholder its entity becomes and the hint that must hold
    for any text it can match (tests/filters/test_pii.py proves the hints skip nothing)."""

    kind: str  # the [privacy] switch: email, url, ip, phone, card, ssn, iban, user
    entity: str
    placeholder: str
    min_score: float
    hint: Callable[[str, str], bool]  # (text, digit_context(text)) -> may the recognizer match?
    make: Callable[[], EntityRecognizer]
    window: regex.Pattern | None = None  # when set: run only on text around its matches (see windows())


_PHONE_HINT = r"\d(?:\D{0,3}\d){6}"  # seven digits, at most three other characters apart
WINDOW_MARGIN = 40  # characters either side of a window match, then out to the next whitespace
_SPACE = regex.compile(r"\s")


def windows(text: str, pattern: regex.Pattern) -> list[tuple[int, int]]:
    """Merged [start, end) pieces of text around each match, cut at whitespace, so a recognizer
    that is slow on long texts (phonenumbers tries every region at every digit) sees only
    the neighbourhood of a possible match, with the same characters at its edges."""
    out: list[tuple[int, int]] = []
    for m in pattern.finditer(text, overlapped=False):
        start, end = max(0, m.start() - WINDOW_MARGIN), min(len(text), m.end() + WINDOW_MARGIN)
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        space = _SPACE.search(text, end)
        end = space.start() if space else len(text)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


PIECE_CHARS = 10_000  # the most text one Presidio call reads (its duplicate removal compares every pair)
PIECE_MARGIN = 1_000  # context read past a piece's own part at each side: more than any span and its cue words


def pieces(text: str, start: int, end: int) -> list[tuple[int, int, int, int]]:
    """(read_from, read_to, own_from, own_to) parts of text[start:end]: the own parts split it at
    white space about every PIECE_CHARS characters; each is read with PIECE_MARGIN characters of
    context each side (within start..end), and keeps the findings that start in its own part. A
    range of up to PIECE_CHARS is one part, read as it is."""
    out = []
    at = start
    while at < end:
        cut = end if end - at <= PIECE_CHARS else (m.start() + 1 if (m := _SPACE.search(text, at + PIECE_CHARS, end))
                                                   else end)
        out.append((max(start, at - PIECE_MARGIN), min(end, cut + PIECE_MARGIN), at, cut))
        at = cut
    return out


DIGIT_MARGIN = 8  # characters kept either side of a digit run: more than any gap a digit hint allows


def digit_context(text: str) -> str:
    """The text around its digit runs (runs closer than 2 * DIGIT_MARGIN merged), pieces joined by
    line breaks. Every digit pattern below allows at most 3 characters between two digits and 2
    before the first, so it matches here wherever it matches the text; this is a few dozen
    characters of a post, where scanning the whole post with each pattern cost far more."""
    pieces: list[str] = []
    start = end = -1
    for lo, hi in digit_runs(text):
        lo, hi = max(0, lo - DIGIT_MARGIN), hi + DIGIT_MARGIN
        if lo <= end:
            end = hi
            continue
        if end >= 0:
            pieces.append(text[start:end])
        start, end = lo, hi
    if end >= 0:
        pieces.append(text[start:end])
    return "\n".join(pieces)


def _in_digits(pattern: str) -> Callable[[str, str], bool]:
    """A hint for a pattern that needs digits: searched in the digit context only."""
    compiled = re.compile(pattern)
    return lambda text, digits: bool(digits) and compiled.search(digits) is not None


def _search(pattern: str, needs: str = "") -> Callable[[str, str], bool]:
    """A hint from a case-sensitive `re` pattern over the whole text (several times cheaper than
    IGNORECASE `regex`), tried only when the text holds `needs`."""
    compiled = re.compile(pattern)
    return lambda text, digits: needs in text and compiled.search(text) is not None


def _ip_hint(text: str, digits: str) -> bool:
    """IPv4 needs digits; IPv6 may have none ("fe80::abcd") but always a colon before a hex group."""
    return (_IPV4_HINT.search(digits) is not None) or (":" in text and _IPV6_HINT.search(text) is not None)


def _address_hint(text: str, digits: str) -> bool:
    """A number placed as a street number is (address_windows), or a ship's name of a military
    address: most numbers in posts are not, and a call of Presidio's analyzer is costly."""
    if has_postal_cue(text):
        return True
    if not digits and _SHIP_HINT.search(text) is None:
        return False
    return bool(address_windows(_capitalized(text) if text.islower() else text))


_SHIP_HINT = re.compile(r"(?i)\bus(?:ns|s|nv|cgc)\s")
_IPV4_HINT = re.compile(r"\d\.\d{1,3}\.\d")
_IPV6_HINT = re.compile(r"::|:[0-9A-Fa-f]{1,4}:")  # starts with a literal: scanned fast


DETECTORS: tuple[Detector, ...] = (
    Detector("email", "EMAIL_ADDRESS", "[EMAIL]", 0.5, lambda t, d: "@" in t, OfflineEmailRecognizer),
    Detector("url", "URL", "[URL]", 0.5, _search(r"\.[A-Za-z]{2}"), PublicSuffixUrlRecognizer),
    Detector("ip", "IP_ADDRESS", "[IP]", 0.5, _ip_hint, IpRecognizer),
    Detector("phone", "PHONE_NUMBER", "[PHONE]", 0.4, _in_digits(_PHONE_HINT),
             lambda: PhoneRecognizer(supported_regions=PHONE_REGIONS, leniency=1, context=[]),
             window=regex.compile(_PHONE_HINT)),
    Detector("phone", "PHONE_SHAPED", "[PHONE]", 0.5, _in_digits(r"\d{3}\)?[-. ]?\d{3}[-. ]\d{4}"), NanpShapedPhoneRecognizer),
    Detector("phone", "PHONE_CONTEXT", "[PHONE]", 0.4, _in_digits(_PHONE_HINT), ContextPhoneRecognizer),
    Detector("card", "CREDIT_CARD", "[CARD]", 0.5, _in_digits(r"\d(?:[ .-]?\d){11}"), AnyGroupingCardRecognizer),
    Detector("ssn", "US_SSN", "[SSN]", 0.5, _in_digits(r"\d{3}[- .]\d\d[- .]\d{4}"), RedditSsnRecognizer),
    Detector("iban", "IBAN_CODE", "[IBAN]", 0.5, _in_digits(r"[A-Za-z]{2}\d\d"), IbanRecognizer),
    Detector("user", "REDDIT_USER", "[USER]", 0.5, _search(r"[Uu](?:[Ss][Ee][Rr])?/", needs="/"), RedditUserRecognizer),
    Detector("user", "AT_HANDLE", "[USER]", 0.5, lambda t, d: "@" in t, AtHandleRecognizer),
    Detector("user", "DISCORD_TAG", "[USER]", 0.5, _in_digits(r"#\d{4}"), DiscordTagRecognizer),
    Detector("user", "SKYPE_ID", "[USER]", 0.5, lambda t, d: "kype" in t or "KYPE" in t, SkypeRecognizer),
    Detector("address", "STREET_ADDRESS", "[ADDRESS]", 0.5, _address_hint, AddressRecognizer),
    Detector("dob", "DATE_OF_BIRTH", "[DOB]", 0.5, lambda t, d: bool(d) and BIRTH_HINT.search(t.lower()) is not None,
             BirthDateRecognizer),
    Detector("id", "ID_NUMBER", "[ID]", 0.5, has_id_number_hint, IdNumberRecognizer),
)
STRUCTURED_KINDS = tuple(dict.fromkeys(d.kind for d in DETECTORS))
