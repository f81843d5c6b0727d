"""The build's most selective filter: a post in which the extraction's prefilter opens no tagging
window cannot become an example, so language ID, duplicate keys and PII scrubbing skip it."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from schemas.records import RawPost

NO_DISCLOSURE = "no_disclosure"  # the reason extraction gives too, for candidates spaCy finds nothing in


@dataclass
class DisclosureCandidates:
    """Keeps the posts `selects` accepts (the build passes extractors.prefilter.Prefilter.selects)."""

    selects: Callable[[str], bool]
    name: str = NO_DISCLOSURE

    def check(self, post: RawPost) -> str | None:
        return None if self.selects(post.text) else NO_DISCLOSURE
