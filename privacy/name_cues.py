"""Names that the words around them give away, without NER: "my sister Anna", "a friend named
Kofi", "I met Tomasz", "Ayesha and I", "Jonas told me", "My name is Ngozi", "Name: Olek Nowak",
"her maiden name is Abernathy", "ms. Okparaeke", "said Tavita", "Thandeka passed away", and
speaker labels of a dialogue ("Oskar: you never listen"); and the words that complete a found
name ("Janka M. Szász", "Willemine ten Pas").

The cue words are privacy/data/name_cues.txt. The word a cue points at must start with a capital
letter and be no common word, place or nationality, emotion word or frequent English word (that is
not a first name): "my friend Google", "Mom told me", "I met Canada" give nothing. After a
relation or an introduction a lower-case word counts too when it is a first name of the gazetteer
(privacy/gazetteer.py) and not a frequent English word: "my bf jake".
"""
from __future__ import annotations

import re
from bisect import bisect_left
from functools import lru_cache
from pathlib import Path

import regex

from privacy.word_files import read_sections

CUES_FILE = Path(__file__).parent / "data" / "name_cues.txt"
LOWER_ZIPF = 5.0  # a lower-case first name after a relation: less frequent than this in English
_PARTICLE = r"(?:van|von|de|da|do|dos|das|del|della|di|du|der|den|ten|ter|la|le|bin|ibn|al|el|ben)"
# what completes a name to its right: an initial, a particle, a capitalized word (checked in code)
_NEXT = regex.compile(rf"[ \t]+(?:(?P<initial>\p{{Lu}}\.?)[ \t]+)?(?:(?P<particle>{_PARTICLE})[ \t]+)?"
                      rf"(?P<word>\p{{Lu}}[\p{{L}}\p{{M}}'’-]*\p{{L}})")
_NEXT_LOWER = regex.compile(r"[ \t]+(?P<word>[a-z][\p{Ll}\p{M}'’-]*[\p{Ll}])(?![\p{L}\p{N}])")
_BEFORE = regex.compile(rf"(?P<word>\p{{Lu}}[\p{{L}}\p{{M}}'’-]*\p{{L}})[ \t]+$")
_COMPANY = regex.compile(r"(?:,?[ \t]*(?:Inc|LLC|Ltd|Corp|PLC|GmbH|AG|SA|S\.A|Co|Company|Corporation|Incorporated|Group"
                         r"|Holdings|Partners|Associates|Investments|Insurance|Bank|Foundation|Institute|University"
                         r"|College|Enterprises|Industries|Solutions|Technologies|Systems|Agency|Labs)\b"
                         r"|[ \t]+(?:and|&)[ \t]+Sons\b)")


@lru_cache(maxsize=1)
def cue_words() -> dict[str, tuple[str, ...]]:
    return read_sections(CUES_FILE)


def _alt(words: tuple[str, ...]) -> str:
    """A regex of the words (a space in one matches any whitespace), shaped as a trie: `re` tries
    the alternatives of a flat list one by one at each position, a trie one letter at a time.
    Longer words are tried first."""
    trie: dict = {}
    for w in set(words):
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _trie_regex(trie)


def _trie_regex(node: dict) -> str:
    ends = "" in node
    branches = [(r"\s+" if ch == " " else re.escape(ch)) + _trie_regex(child)
                for ch, child in sorted(node.items()) if ch]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if ends else body


_WORD = r"(\w[\w'’-]*\w)"  # checked in code: capitalized, or a lower-case first name where allowed


@lru_cache(maxsize=1)
def _patterns() -> tuple[list[tuple[re.Pattern, bool]], list[re.Pattern]]:
    """(patterns whose group 1 is the name, may it be lower-case?), and patterns the name comes
    right before. They run over the lower-cased text (the name is judged on the text itself) and
    each starts with a cue word, so the stdlib's `re` skips to its first letters fast (a leading
    \\b would stop that: cue_names checks the word boundary itself)."""
    w = cue_words()
    rel, mod = _alt(w["relation"]), _alt(w["modifier"])
    after = [
        (re.compile(rf"(?:my|our|his|her|their)\s+(?:(?:{mod}|ex|step|half)[\s-]+){{0,2}}{rel}(?:\s*,)?\s+{_WORD}"), True),
        (re.compile(rf"{_alt(w['introduction'])}(?:\s+(?:is|was))?\s*{_WORD}"), True),
        (re.compile(rf"called\s+{_WORD}"), True),  # kept only after "a guy called" (see cue_names)
        (re.compile(rf"i\s+{_alt(w['verb_after_i'])}\s+{_WORD}"), False),
        (re.compile(rf"(?:me|i)\s+(?:and|&)\s+{_WORD}"), False),
        # a verb of speech right after a quote or a ! or ?: '"Fine," said Tavita'
        (re.compile(rf"[\"“”'’!?],?\s*{_alt(w['speech'])}\s+{_WORD}"), False),
        # the word name: "her maiden name is X", "a guy named X", "my surname: X", "under my aunt's name X"
        (re.compile(rf"name(?:d|['’]s|:)?(?:\s+(?:is|was))?\s*:?\s*{_WORD}"), True),
    ]
    before = [re.compile(r"(?:and|&)\s+(?:i|me)(?![\w'’])")]
    return after, before


_ME = re.compile(r"\s+me\b")
_VERB_END = re.compile(r"[\w'’-]+$")


@lru_cache(maxsize=1)
def _verbs_before_me() -> frozenset[str]:
    return frozenset(cue_words()["verb_before_me"])


@lru_cache(maxsize=1)
def _said_of_people() -> re.Pattern:
    """A capitalized word before a verb said of people ("Thandeka passed away"), over the text
    itself: the pattern starts at the capital letters, so `re` skips the rest fast."""
    return re.compile(rf"([A-ZÀ-ÖØ-Þ\u0100-\u024f][\w'’-]*\w)\s+{_alt(cue_words()['verb_after_name'])}(?![\w'’])")


@lru_cache(maxsize=1)
def _title_pattern() -> re.Pattern:
    return re.compile(rf"{_alt(cue_words()['title'])}\.?\s+{_WORD}")


_NAME_WORD_BEFORE = re.compile(r"(?<![^\W_])(?:sur|nick)$")  # "surname X", "nickname X"; not "username X"




_WORD_CHAR = re.compile(r"\w")
_POSSESSIVE = re.compile(r"['’]s?$")
_WORD_BEFORE = re.compile(r"(\w[\w'’-]*\w)\s+$")
_ARTICLE_BEFORE = re.compile(r"\b(?:a|an|some|this|the|one)\s+(?:[a-z]+\s+){0,2}$", re.IGNORECASE)


def _words():
    from privacy.gazetteer import first_names, place_names
    from privacy.common_words import is_frequent_word, name_free_words
    from schemas.lexicon import lexicon_terms

    return first_names(), place_names(), is_frequent_word, name_free_words(), lexicon_terms()


def could_be_name(word: str, lower_ok: bool = False) -> bool:
    """May a cue's word be a name? (see module doc) After a relation or an introduction
    (`lower_ok`) a gazetteer first name that is also a frequent word counts ("my sister Grace")."""
    first, places, frequent, free, lexicon = _words()
    lower = _POSSESSIVE.sub("", word.lower())
    if lower in free or lower in lexicon or lower in places:
        return False
    if word[0].islower():
        if not lower_ok or lower not in first:
            return False
        from wordfreq import zipf_frequency

        return zipf_frequency(lower, "en") < LOWER_ZIPF
    return not frequent(lower) or (lower_ok and lower in first)


def cue_names(text: str) -> list[tuple[int, int]]:
    """[start, end) of the names cues point at."""
    out: set[tuple[int, int]] = set()
    after, before = _patterns()
    lower = text.lower()
    if len(lower) != len(text):  # a letter whose lower case is longer ("İ"): offsets would shift
        lower = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    for k, (pattern, lower_ok) in enumerate(after):
        for m in pattern.finditer(lower):
            if m.start() and k != 5 and _WORD_CHAR.match(lower, m.start() - 1):  # 5 starts at a quote or "!"
                if k != 6 or not _NAME_WORD_BEFORE.search(lower, max(0, m.start() - 5), m.start()):
                    continue  # not the start of a word ("family called"); "surname", "nickname" are
            if _WORD_CHAR.match(lower, m.start(1) - 1):
                continue  # the name starts a word
            if k == 2 and not _ARTICLE_BEFORE.search(text, max(0, m.start() - 40), m.start()):
                continue  # "he called Sarah" is no introduction; "a girl called Sarah" is
            _keep(text, m.start(1), m.end(1), lower_ok, out)
    for pattern in before:
        for m in pattern.finditer(lower):
            if m.start() and _WORD_CHAR.match(lower, m.start() - 1):
                continue
            w = _WORD_BEFORE.search(text, max(0, m.start() - 40), m.start())
            if w:
                _keep(text, w.start(1), w.end(1), False, out)
    for m in _ME.finditer(lower):  # "Jonas told me": found from " me" back (cheaper than a scan per verb)
        verb = _VERB_END.search(lower, max(0, m.start() - 24), m.start())
        if verb and verb.group() in _verbs_before_me():
            w = _WORD_BEFORE.search(text, max(0, verb.start() - 40), verb.start())
            if w:
                _keep(text, w.start(1), w.end(1), False, out)
    for m in _said_of_people().finditer(text):
        start = m.start(1)
        w2 = _WORD_BEFORE.search(text, max(0, start - 40), start)  # "Ana Ruiz lives in Porto"
        if w2 and w2.group(1)[:1].isupper() and could_be_name(w2.group(1)) and could_be_name(m.group(1)):
            start = w2.start(1)
        _keep(text, start, m.end(1), False, out, whole=True)
    for m in _title_pattern().finditer(lower):
        if m.start() and _WORD_CHAR.match(lower, m.start() - 1):
            continue
        word, title = text[m.start(1):m.end(1)], text[m.start():m.start() + 2]
        if word[:1].isupper() and not title.isupper() and (could_be_name(word) or _surname(word)):
            _keep(text, m.start(1), m.end(1), False, out, check=False)
    out.update(speaker_labels(text))
    return sorted(out)


def _surname(word: str) -> bool:
    """A surname of the gazetteer, and no common word, emotion word or place: "Mrs. Brown"."""
    from privacy.gazetteer import surnames

    first, places, frequent, free, lexicon = _words()
    lower = _POSSESSIVE.sub("", word.lower())
    return lower in surnames() and lower not in free and lower not in lexicon and lower not in places


_LABEL = regex.compile(r"[ \t>*_]*(?P<name>\p{Lu}[\p{L}\p{M}'’-]*\p{L}(?:[ \t]\p{Lu}\.?|[ \t]\p{Lu}[\p{L}\p{M}'’-]*\p{L})?)[*_]*[ \t]*$")
_QUOTE_AFTER = regex.compile(r"[*_]*[ \t]*[\"“”'‘]")


def speaker_labels(text: str) -> list[tuple[int, int]]:
    """Names that label a line of dialogue: "Anna: ..." at the start of a line (after quote marks
    or bold), one or two name words that could be a name (could_be_name). A label counts when it
    is a first name or surname of the gazetteer, when a quote follows it, or when another line of
    the text has such a label (a dialogue): "Disclaimer: ..." alone is no name."""
    if ":" not in text:
        return []
    from privacy.gazetteer import first_names, surnames

    labels = []
    at = text.find(":")
    while at >= 0:
        line_start = text.rfind("\n", 0, at) + 1
        m = _LABEL.fullmatch(text, line_start, at)
        if m and all(could_be_name(w, lower_ok=True) for w in m.group("name").split() if len(w.rstrip(".")) > 1):
            words = [w.lower() for w in m.group("name").split()]
            sure = any(w in first_names() or w in surnames() for w in words) or _QUOTE_AFTER.match(text, at + 1)
            labels.append((m.start("name"), m.end("name"), bool(sure)))
        at = text.find(":", text.find("\n", at) if "\n" in text[at:] else len(text))
    if any(sure for _, _, sure in labels):
        return [(a, b) for a, b, _ in labels]
    return []


def _keep(text: str, start: int, end: int, lower_ok: bool, out: set[tuple[int, int]], check: bool = True,
          whole: bool = False) -> None:
    word = text[start:end]
    if word[:1].isupper() and (len(word) < 2 or not word[1].islower()):
        return  # "I", acronyms
    last = word.split()[-1] if whole else word
    if not word[:1].isalpha() or (check and not could_be_name(last, lower_ok)):
        return
    if text[end - 2:end] in ("'s", "’s"):
        end -= 2
    out.add((start, end))


def is_company(text: str, end: int) -> bool:
    """Does a company word follow ("Weber Inc.", "Thomas and Sons")? Then it is no person."""
    return _COMPANY.match(text, end) is not None


def complete(text: str, start: int, end: int) -> tuple[int, int]:
    """The name span grown over the initials, particles and name words next to it (same line)."""
    first, places, frequent, free, lexicon = _words()
    from privacy.gazetteer import surnames

    last = surnames()
    if text[start:start + 1].islower():  # "my name is lena andersson": a lower-case surname may follow
        m = _NEXT_LOWER.match(text, end)
        if m and m.group("word") in last and not frequent(m.group("word")) and m.group("word") not in free:
            end = m.end()
    while True:
        m = _NEXT.match(text, end)
        if not m:
            break
        word = m.group("word")
        lower = _POSSESSIVE.sub("", word.lower())
        if is_company(text, m.start()):
            break
        if lower in free or lower in lexicon or lower in places or (len(word) > 1 and word.isupper()):
            break
        if frequent(lower) and lower not in last:
            break
        end = m.end("word")
        if text[end - 2:end] in ("'s", "’s"):
            end -= 2
            break
    before = _BEFORE.search(text, max(0, start - 40), start)
    if before:
        lower = before.group("word").lower()
        if lower in first and not frequent(lower) and lower not in free and lower not in places:
            start = before.start("word")
    return start, end


_ITEM = r"\p{Lu}[\p{L}\p{M}'’-]*\p{L}(?:[ \t]\p{Lu}[\p{L}\p{M}'’-]*\p{L})?"
_LIST = regex.compile(rf"(?<![\p{{L}}\p{{N}}])(?:{_ITEM})(?:,[ \t]+(?:{_ITEM}))*,?[ \t]+(?:and|or|&)[ \t]+(?:{_ITEM})(?![\p{{L}}\p{{N}}])")
_LIST_ITEM = regex.compile(_ITEM)


def listed_names(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Items of a list of names ("Mary, Efimiya and Jodi", "Kadiev and Adams") beside items
    already found as names: an item that could be a name (could_be_name) is one too."""
    if not spans:
        return []
    out = []
    for m in _LIST.finditer(text):
        items = [(i.start(), i.end()) for i in _LIST_ITEM.finditer(m.group())]
        items = [(a + m.start(), b + m.start()) for a, b in items]
        named = [any(s <= a and b <= e or a <= s < b for s, e in spans) for a, b in items]
        if not any(named):
            continue
        for (a, b), done in zip(items, named):
            if not done and all(could_be_name(w) for w in text[a:b].split()):
                out.append((a, b))
    return out


_HEAD_NOISE = regex.compile(r"^[^\p{L}]*")
_HEAD_WORD = regex.compile(r"\p{L}[\p{L}\p{M}'’-]*\.?|\p{L}\.?")
CONTACT_KINDS = frozenset({"PHONE_NUMBER", "PHONE_SHAPED", "PHONE_CONTEXT", "EMAIL_ADDRESS", "STREET_ADDRESS", "URL"})


def block_heads(text: str, contact_starts: list[int]) -> list[tuple[int, int]]:
    """The name line heading a contact block: the first line of a text of several lines that holds
    a phone number, e-mail address or street address, or the line right above an address, when it
    is two to four name words ("Jane Q. Roe", "leone mazzi") and nothing else."""
    if "\n" not in text or not contact_starts:
        return []
    starts, ends, at = [], [], 0  # the non-blank lines: where each starts and ends
    for line in text.split("\n"):
        if line.strip():
            starts.append(at)
            ends.append(at + len(line))
        at += len(line) + 1
    heads = {0} if starts else set()  # the first non-blank line, by its index
    for c in contact_starts:
        k = bisect_left(ends, c) - 1  # the last non-blank line that ends before the contact
        if k >= 0 and text.count("\n", starts[k], c) == 1:
            heads.add(k)
    out = []
    for k in sorted(heads):
        a, line = starts[k], text[starts[k]:ends[k]]
        lead = _HEAD_NOISE.match(line).end()
        words = line[lead:].split()
        if not 2 <= len(words) <= 4 or not all(_HEAD_WORD.fullmatch(w) for w in words):
            continue
        if _head_words_ok(words):
            out.append((a + lead, a + len(line.rstrip())))
    return out


def _head_words_ok(words: list[str]) -> bool:
    first, places, frequent, free, lexicon = _words()
    from privacy.gazetteer import surnames

    last = surnames()
    known = False
    for w in words:
        lower = w.lower().rstrip(".")
        if len(lower) == 1:
            continue  # an initial
        if lower in free or lower in lexicon or lower in places or (frequent(lower) and lower not in last):
            return False
        known = known or lower in first or lower in last
    return known or all(w[0].isupper() for w in words)
