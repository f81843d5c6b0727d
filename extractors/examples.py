"""Turn posts into masked examples; posts without a usable disclosure are dropped with a reason.

Drop reasons, in the order they are tested: `no_disclosure` (the rules found nothing),
`not_accepted` (the rules found hits, the acceptance model kept none), `only_negated`,
`too_few_masks`, `too_many_masks`. Hits are counted apart (`hit_counts`: found = accepted +
not_accepted), since the funnel counts posts.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from itertools import tee

from extractors.acceptance import NOT_ACCEPTED
from extractors.disclosures import DisclosureExtractor, mask_text
from extractors.segmentation import Segmenter
from schemas.config import ExtractConfig
from schemas.funnel import DropSink, Funnel
from schemas.records import Disclosure, Example, RawPost

# The Example fields extraction sets itself; every other one is carried from the post by name.
SET_BY_EXTRACTION = ("post_id", "segment_index", "text", "masked_text", "surfaces", "labels", "patterns")


def carried_fields(example: type = Example, post: type = RawPost) -> tuple[str, ...]:
    """The fields an example copies from its post, by name (subreddit, created_utc, ...): adding a
    post field to Example makes it a release column. A field that is neither set by extraction
    nor a post field has no source: that is an error, never a silent default."""
    post_fields = {f.name for f in fields(post)}
    names = [f.name for f in fields(example) if f.name not in SET_BY_EXTRACTION]
    orphans = [n for n in names if n not in post_fields]
    if orphans:
        raise TypeError(f"{example.__name__} field(s) {', '.join(orphans)} have no source: not set by "
                        f"extraction ({', '.join(SET_BY_EXTRACTION)}) and not fields of {post.__name__}")
    return tuple(names)


CARRIED = carried_fields()


def usable(disclosures: list[Disclosure], keep_negated: bool) -> list[Disclosure]:
    if not disclosures:  # most posts: no new list
        return disclosures
    return [d for d in disclosures if keep_negated or not d.negated]


def drop_reason(found: list[Disclosure], rejected: list[Disclosure], kept: list[Disclosure],
                cfg: ExtractConfig) -> str | None:
    """Why a post with these hits (accepted, rejected by the acceptance model, usable) gives no
    example, or None when it gives one."""
    if not found:
        return NOT_ACCEPTED if rejected else "no_disclosure"
    if not kept:
        return "only_negated"
    if len(kept) < cfg.min_masks:
        return "too_few_masks"
    if len(kept) > cfg.max_masks:
        return "too_many_masks"
    return None


@dataclass(frozen=True)
class Hooks:
    """What build_examples tells and asks beside the examples it yields: `on_drop` gets each dropped
    post and its reason, `on_disclosures` the accepted disclosures of every post read (before
    review), `hit_counts` counts the hits; `review` (review/build.py) takes away the masks hand
    review rejected, and names the reason when it took them all."""

    on_drop: DropSink | None = None
    on_disclosures: Callable[[RawPost, list[Disclosure]], None] | None = None
    hit_counts: Counter[str] | None = None
    review: Callable[[RawPost, list[Disclosure]], tuple[list[Disclosure], str | None]] | None = None


def build_examples(posts: Iterable[RawPost], extractor: DisclosureExtractor, cfg: ExtractConfig, funnel: Funnel,
                   segmenter: Segmenter | None = None, hooks: Hooks = Hooks()) -> Iterator[Example]:
    """Examples of posts with min_masks..max_masks usable disclosures, in input order; a long
    post gives one Example per segment (segment_index 0, 1, ...)."""
    segmenter = segmenter or Segmenter()
    on_drop, on_disclosures, hit_counts, review = hooks.on_drop, hooks.on_disclosures, hooks.hit_counts, hooks.review
    a, b = tee(posts)
    audited = getattr(extractor, "audited", None)  # a stand-in without one rejects nothing
    texts = (p.text for p in b)
    pairs = audited(texts) if audited else ((found, []) for found in extractor.extract_many(texts))
    for post, (found, rejected) in zip(a, pairs):
        funnel.read += 1
        if hit_counts is not None and (found or rejected):
            hit_counts["found"] += len(found) + len(rejected)
            hit_counts["accepted"] += len(found)
            hit_counts[NOT_ACCEPTED] += len(rejected)
        if on_disclosures:
            on_disclosures(post, found)
        kept = usable(found, cfg.keep_negated)
        reason = None
        if review is not None and kept:
            kept, reason = review(post, kept)  # "review_rejected" when review took every mask
        reason = reason or drop_reason(found, rejected, kept, cfg)
        if reason:
            funnel.drop(reason)
            if on_drop:
                on_drop(post, reason)
            continue
        funnel.kept += 1
        carried = {name: getattr(post, name) for name in CARRIED}
        for index, seg in enumerate(segmenter.segments(post.text, kept)):
            yield Example(
                **carried,
                post_id=post.id,
                segment_index=index,
                text=seg.text,
                masked_text=mask_text(seg.text, seg.disclosures),
                surfaces=[d.surface for d in seg.disclosures],
                labels=[d.label for d in seg.disclosures],
                patterns=[d.pattern for d in seg.disclosures],
            )
