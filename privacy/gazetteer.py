"""First names and surnames of many origins, for the name detector (privacy/names.py), offline.

Two pinned PyPI packages hold the lists; only their data files are read (neither is imported):
- `names` 0.3.0 (MIT): the US Census 1990 first names (male and female) and surnames, which
  cover many origins of US residents;
- `mimesis` 22.2.0 (MIT): first names and surnames per locale (Europe, the Americas, Turkey,
  Azerbaijan, Kazakhstan, ...). Cyrillic and Greek lists are romanized here (GOST-like and
  ELOT-like letter tables) since Reddit writes such names in Latin letters; scripts without a
  letter-by-letter romanization (Arabic, CJK) are left out.

Entries are lower-cased. Frequent English words among them (Will, Hope, Young, Park) are not
taken out here: the detector asks `is_frequent_word` where it matters.
"""
from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

CENSUS_FIRST = ("dist.male.first", "dist.female.first")
CENSUS_LAST = ("dist.all.last",)

_CYRILLIC = dict(zip(
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюяієїґ",
    ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "y", "k", "l", "m", "n", "o", "p", "r", "s", "t", "u",
     "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya", "i", "ye", "yi", "g"]))
_GREEK = dict(zip(
    "αβγδεζηθικλμνξοπρσςτυφχψω",
    ["a", "v", "g", "d", "e", "z", "i", "th", "i", "k", "l", "m", "n", "x", "o", "p", "r", "s", "s", "t", "y",
     "f", "ch", "ps", "o"]))


def romanize(name: str) -> str | None:
    """The name in Latin letters (lower case), or None when a letter has no romanization here."""
    out = []
    foreign = False  # is the last base letter Cyrillic or Greek? (its accents are dropped)
    for ch in unicodedata.normalize("NFD", name.lower().replace("ου", "ou")):
        if unicodedata.combining(ch):
            if not foreign:
                out.append(ch)
            continue
        foreign = ch in _CYRILLIC or ch in _GREEK
        if ch.isascii() or "\u00c0" <= ch <= "\u024f":
            out.append(ch)
        elif foreign:
            out.append(_CYRILLIC[ch] if ch in _CYRILLIC else _GREEK[ch])
        else:
            return None
    return unicodedata.normalize("NFC", "".join(out))


def _package_dir(package: str) -> Path:
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the name gazetteer needs the '{package}' package (pyproject.toml pins it)")
    return Path(next(iter(spec.submodule_search_locations)))


def _census(files: tuple[str, ...]) -> set[str]:
    folder = _package_dir("names")
    return {line.split()[0].lower() for name in files
            for line in (folder / name).read_text(encoding="utf-8").splitlines() if line.strip()}


def _mimesis(key: str) -> set[str]:
    """Every locale's `names` or `surnames` (gendered lists or flat), romanized where needed."""
    found: set[str] = set()
    for path in sorted((_package_dir("mimesis") / "datasets").glob("*/person.json")):
        value = json.loads(path.read_text(encoding="utf-8")).get(key) or []
        lists = value.values() if isinstance(value, dict) else [value]
        for entry in (e for lst in lists for e in lst if isinstance(e, str)):
            for word in entry.split():
                latin = word.lower() if word.isascii() else romanize(word)  # most words: no table to apply
                if latin and len(latin) > 1 and latin.replace("-", "").replace("'", "").isalpha():
                    found.add(latin)
    return found


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """Lower-cased first names of every list."""
    return frozenset(_census(CENSUS_FIRST) | _mimesis("names"))


@lru_cache(maxsize=1)
def surnames() -> frozenset[str]:
    """Lower-cased surnames of every list."""
    return frozenset(_census(CENSUS_LAST) | _mimesis("surnames"))


def sources() -> dict[str, str]:
    """What the gazetteer was built from, for the manifest and the card."""
    from importlib.metadata import version

    return {"names": f"names {version('names')} (US Census 1990 first names and surnames, MIT)",
            "mimesis": f"mimesis {version('mimesis')} (person.json of every locale, MIT)"}


@lru_cache(maxsize=1)
def place_names() -> frozenset[str]:
    """Lower-cased country, US state and continent names and nationalities (mimesis's English
    lists): never a name by the gazetteer or a cue alone, and a town line of an address."""
    folder = _package_dir("mimesis") / "datasets" / "en"
    address = json.loads((folder / "address.json").read_text(encoding="utf-8"))
    person = json.loads((folder / "person.json").read_text(encoding="utf-8"))
    found: set[str] = set(person.get("nationality") or [])
    for key in ("country", "state", "continent"):
        value = address.get(key) or []
        for v in (value.get("name") or [] if isinstance(value, dict) else value):
            found.add(v)
    return frozenset({v.lower() for v in found if isinstance(v, str)} | PLACE_WORDS)


# names of places as Reddit writes them short ("America", "Korea") that the lists hold only in full
PLACE_WORDS = frozenset({"america", "americas", "europe", "asia", "africa", "oceania", "korea", "zealand", "arabia",
                         "britain", "england", "scotland", "wales", "holland", "usa", "uk", "eu"})
