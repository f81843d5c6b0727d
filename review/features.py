"""Review decisions as training rows of the acceptance model: for every mask of a release that
the ledger holds a verdict on, the features the model scores (extractors/acceptance.py) and
whether the reviewers kept it. `express train-acceptance --review FILE` reads the rows.

A mask's features are recomputed on the text the reviewer saw (its segment, as exported by
review/items.py) with the rules alone, and the hit whose span is the mask's gives them:
the rules read a tagging window inside one sentence, so the segment holds all they see. A mask
the rules no longer find there (a rule changed since the release) is named, never dropped
silently."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from review.apply import ReviewIndex
from review.items import ReviewItem, release_items
from review.ledger import Ledger
from schemas.config import ExtractConfig


@dataclass
class FeatureRows:
    rows: list[dict[str, Any]]  # {"item_id", "post_id", "surface", "pattern", "features", "accepted"}
    decided: int  # masks of the release with a verdict
    not_found: list[str] = field(default_factory=list)  # item ids whose mask the rules no longer find
    elsewhere: int = 0  # verdicts on items of other releases of the dataset (not this one's masks)

    def summary(self) -> str:
        kept = sum(r["accepted"] for r in self.rows)
        text = (f"{len(self.rows)} training rows ({kept} accepted, {len(self.rows) - kept} rejected) "
                f"from {self.decided} reviewed masks of the release")
        if self.not_found:
            text += f"; {len(self.not_found)} left out: the rules no longer find their mask ({', '.join(self.not_found[:5])}"
            text += ", ...)" if len(self.not_found) > 5 else ")"
        if self.elsewhere:
            text += f"; {self.elsewhere} verdicts are on masks of other releases"
        return text


def review_feature_rows(release: Any, root: Path, extractor: Any = None) -> FeatureRows:
    """The training rows of `release`'s reviewed masks (see module doc); `extractor`: a
    DisclosureExtractor with the rules alone (built when not given, with the trigger forms the
    release was built with)."""
    index = ReviewIndex.from_ledger(Ledger(root, release.dataset))
    verdicts = {w.item_id: w.verdict for words in index.by_post.values() for w in words}
    items = [it for it in release_items(release, root).items if it.item_id in verdicts]
    if extractor is None:
        from extractors.acceptance import OFF
        from extractors.disclosures import DisclosureExtractor

        forms = ((release.manifest().get("config") or {}).get("extract") or {}).get("forms") or ExtractConfig.forms
        extractor = DisclosureExtractor(forms=forms, acceptance=OFF)
    out = FeatureRows([], len(items), elsewhere=len(verdicts) - len({it.item_id for it in items}))
    for item, features in zip(items, _mask_features(items, extractor)):
        if features is None:
            out.not_found.append(item.item_id)
            continue
        out.rows.append({"item_id": item.item_id, "post_id": item.post_id, "surface": item.surface,
                         "pattern": item.pattern, "features": list(features),
                         "accepted": verdicts[item.item_id] == "accept"})
    return out


def _mask_features(items: list[ReviewItem], extractor: Any) -> Iterator[tuple[str, ...] | None]:
    """The features of the rules' hit at each item's mask in its segment text, None when no hit is there."""
    for item, found in zip(items, extractor.candidates((it.text for it in items), features=True)):
        yield next((c.features for c in found if (c.disclosure.start, c.disclosure.end) == (item.start, item.end)
                    and c.features), None)
