"""The PII kinds a recipe can scrub, in the order detectors run and reports list them, each with
its `[privacy]` switch (schemas/config.py). The scrubber defines a detector per kind
(privacy/scrubber.py; a test holds the two lists equal); the gate checks the kinds a recipe enabled and
the dataset card names them, without loading any detector."""
from __future__ import annotations

from typing import Any

KINDS: tuple[str, ...] = ("email", "url", "ip", "phone", "card", "ssn", "iban", "user", "address", "dob", "id", "name")
SWITCHES = {"email": "scrub_emails", "url": "scrub_urls", "ip": "scrub_ips", "phone": "scrub_phones",
            "card": "scrub_cards", "ssn": "scrub_ssns", "iban": "scrub_ibans", "user": "scrub_users",
            "address": "scrub_addresses", "dob": "scrub_birth_dates", "id": "scrub_id_numbers",
            "name": "scrub_names"}  # kind -> its [privacy] switch


def enabled_kinds(cfg: Any) -> tuple[str, ...]:
    """The kinds a `[privacy]` config (PrivacyConfig, or anything with its attributes) scrubs."""
    if not getattr(cfg, "scrub_pii", True):
        return ()
    return tuple(k for k in KINDS if getattr(cfg, SWITCHES[k], True))
