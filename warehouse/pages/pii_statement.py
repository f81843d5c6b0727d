"""What was scrubbed and how, in words, from a release manifest: the card's PII section and
Croissant's rai:personalSensitiveInformation say the same thing."""
from __future__ import annotations

from typing import Any

from privacy.kinds import KINDS, SWITCHES
from schemas.config import upgraded

WHAT = {"email": "e-mail addresses [EMAIL]", "url": "URLs with any public-suffix domain [URL]",
        "ip": "IPv4/IPv6 addresses [IP]", "phone": "phone numbers in international and national formats [PHONE]",
        "card": "Luhn-valid card numbers of 12-19 digits [CARD]", "ssn": "US social security numbers [SSN]",
        "iban": "checksum-valid IBANs [IBAN]", "user": "Reddit u/ handles, @handles and Discord tags [USER]",
        "address": "street addresses, post-office boxes and address blocks [ADDRESS]",
        "dob": "dates of birth after a birth cue [DOB]",
        "id": "licence, passport, national insurance, account and member numbers after their cue [ID]", "name": "person names [NAME]"}


def scrubbed_kinds(manifest: dict[str, Any]) -> list[str]:
    """The kinds the release's recipe scrubbed ([privacy]; [filters] in a release of older code)."""
    privacy = upgraded(manifest.get("config") or {}, "the release's recorded recipe")[0].get("privacy") or {}
    if not privacy.get("scrub_pii", True):
        return []
    return [k for k in KINDS if privacy.get(SWITCHES[k], True)]


def pii_statement(manifest: dict[str, Any]) -> str:
    kinds = scrubbed_kinds(manifest)
    gate = (manifest.get("gate") or {}).get("pii") or {}
    libs = (gate.get("detectors") or {}).get("libraries") or {}
    versions = ", ".join(f"{k} {v}" for k, v in libs.items())
    head = ("Texts are public Reddit posts written by people; the author field is blanked and no "
            "usernames are released.")
    if not kinds:
        return head + " PII scrubbing was switched off for this release: texts may hold personal details."
    names = ("Person names were found from the words around them (\"my sister ...\", \"... told me\"), a "
             "gazetteer of first names and surnames of many origins (US Census and mimesis lists) and spaCy's "
             "en_core_web_sm NER (run on the words around each capitalized uncommon word); lower-case names "
             "without such words can be missed. " if "name" in kinds else "Person names were not scrubbed. ")
    gate_line = ""
    if gate:
        gate_line = (f" The quality gate re-ran the same detectors on every released text "
                     f"({gate.get('rows_checked')} rows; names on {gate.get('rows_name_checked')} sampled rows) "
                     "and found none.")
    return (f"{head} Before extraction, Microsoft Presidio ({versions or 'presidio-analyzer'}) replaced "
            f"{'; '.join(WHAT[k] for k in kinds)} by the placeholders shown. {names}"
            "Subreddit names, ages such as 23F, years, dates other than dates of birth, scores, prices, times, "
            "and place names in ordinary sentences are kept. The public-suffix "
            "list is the snapshot bundled with tldextract; nothing is looked up online." + gate_line +
            " Texts may still contain other personal details a writer chose to share.")
