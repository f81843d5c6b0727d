"""The filter chain a recipe asks for, as NeMo Curator builds its filters from an ordered list:
`[filters] chain` names the filters in the order they run (schemas/config.py: FILTER_CHAIN is the
default order and the known names), and FILTERS builds each name from the keys of [filters]."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from schemas.config import FilterConfig

from filters.base import Filter
from filters.language import LanguageFilter
from filters.lists import load_list, resolve_list
from filters.near_duplicates import NearDuplicateFilter
from filters.reddit import (BotFilter, CrosspostFilter, DeletedFilter, DistinguishedFilter, ExactDuplicateFilter,
                            LengthFilter, NsfwFilter)

DISCLOSURE = "disclosure"  # where the build's own prefilter runs: the `selective` filters of filters_from_config


def _nsfw(cfg: FilterConfig) -> Filter | None:
    if not cfg.drop_nsfw:
        return None
    listed = resolve_list(cfg.nsfw_subreddits_file, "nsfw_subreddits")
    return NsfwFilter(load_list(listed).names if listed else frozenset())


def _bots(cfg: FilterConfig) -> Filter:
    listed = resolve_list(cfg.bot_authors_file, "bot_authors")
    return BotFilter(frozenset(cfg.bot_authors) | (load_list(listed).names if listed else frozenset()))


# name -> the filter its settings ask for, or None when they ask nothing of it
FILTERS: dict[str, Callable[[FilterConfig], Filter | None]] = {
    "deleted": lambda cfg: DeletedFilter() if cfg.drop_deleted else None,
    "nsfw": _nsfw,
    "bot": _bots,
    "distinguished": lambda cfg: DistinguishedFilter(cfg.drop_distinguished, cfg.drop_stickied)
    if cfg.drop_distinguished or cfg.drop_stickied else None,
    "crosspost": lambda cfg: CrosspostFilter() if cfg.drop_crossposts else None,
    "length": lambda cfg: LengthFilter(cfg.min_words, cfg.max_words) if cfg.min_words or cfg.max_words else None,
    "language": lambda cfg: LanguageFilter(frozenset(cfg.languages), cfg.min_language_confidence)
    if cfg.languages else None,
    "duplicate": lambda cfg: ExactDuplicateFilter() if cfg.drop_duplicates else None,
    "near_duplicate": lambda cfg: NearDuplicateFilter(cfg.near_duplicate_threshold, cfg.minhash_permutations,
                                                      cfg.shingle_words) if cfg.near_duplicate_threshold > 0 else None,
}


def filters_from_config(cfg: FilterConfig, selective: Sequence[Filter] = ()) -> list[Filter]:
    """The recipe's chain, in its order, of the filters its settings ask for; `selective` (the
    build's disclosure prefilter, which keeps < 10 % of posts) runs where the chain says
    `disclosure`, so costly work runs only on posts that can still become examples."""
    chain: list[Filter] = []
    for name in cfg.chain:
        if name == DISCLOSURE:
            chain.extend(selective)
        elif (f := FILTERS[name](cfg)) is not None:
            chain.append(f)
    return chain
