"""Each filter step on its own: its reason code, its data file, its config switch."""
import pytest

from filters.base import run_filters
from filters.chain import filters_from_config
from filters.language import LanguageFilter
from filters.lists import ListError, load_list
from filters.near_duplicates import NearDuplicateFilter
from filters.reddit import (BotFilter, CrosspostFilter, DeletedFilter, DistinguishedFilter, ExactDuplicateFilter,
                            NsfwFilter, filter_data_versions)
from schemas.config import FilterConfig, load_recipe
from schemas.funnel import Funnel
from schemas.records import RawPost

STORY = ("I feel so guilty about missing my sister's graduation last weekend because work ran late "
         "and the trains were cancelled, and now she is not answering my calls at all.")


def post(**kw) -> RawPost:
    base = dict(id="p", text=STORY, selftext=STORY, author="u1", subreddit="offmychest")
    base.update(kw)
    return RawPost(**base)


def test_deleted_filter_covers_titles_categories_and_deleted_authors():
    f = DeletedFilter()
    assert f.check(post(title="[deleted by user]")) == "deleted"
    assert f.check(post(removed_by_category="reddit")) == "removed"
    assert f.check(post(author="[deleted]")) == "deleted_author"
    assert f.check(post(author="[deleted]", selftext="")) == "deleted"
    assert f.check(post()) is None


def test_shipped_lists_have_versions_and_feed_the_filters():
    bots, nsfw = load_list("filters/data/bot_authors.txt"), load_list("filters/data/nsfw_subreddits.txt")
    assert bots.version and nsfw.version and "automoderator" in bots.names and "nsfw" in nsfw.names
    chain = filters_from_config(FilterConfig())
    funnel = Funnel()
    recs = [post(id="1", author="RemindMeBot"), post(id="2", subreddit="NSFW"), post(id="3")]
    kept = list(run_filters(recs, chain, funnel))
    assert [p.id for p in kept] == ["3"] and dict(funnel.dropped) == {"bot": 1, "nsfw_subreddit": 1}
    assert filter_data_versions(FilterConfig()) == {"bot_authors": bots.version, "nsfw_subreddits": nsfw.version}


def test_list_without_version_header_is_rejected(tmp_path):
    (tmp_path / "bots.txt").write_text("somebot\n")
    with pytest.raises(ListError, match="bots.txt:1: missing"):
        load_list(tmp_path / "bots.txt")
    cfg = FilterConfig(bot_authors_file=str(tmp_path / "missing.txt"))
    with pytest.raises(ListError, match="missing.txt: list file not found"):
        filters_from_config(cfg)


def test_nsfw_from_flag_or_blocklisted_subreddit():
    f = NsfwFilter(frozenset({"gonewild"}))
    assert f.check(post(over_18=True)) == "nsfw"
    assert f.check(post(subreddit="GoneWild")) == "nsfw_subreddit"
    assert f.check(post()) is None


def test_bots_by_name_case_insensitive_and_distinguished_or_stickied_posts_apart_from_them():
    f = BotFilter(frozenset({"AutoModerator"}))
    assert f.check(post(author="automoderator")) == "bot"
    assert f.check(post(stickied=True, distinguished="moderator")) is None  # a person, in a moderator's role
    d = DistinguishedFilter()
    assert [d.check(post(distinguished=k)) for k in ("moderator", "admin", "special", "")] == \
        ["distinguished", "distinguished", None, None]
    assert d.check(post(stickied=True)) == "stickied" and d.check(post(stickied=True, distinguished="admin")) == "distinguished"
    assert DistinguishedFilter(drop_stickied=False).check(post(stickied=True)) is None
    assert DistinguishedFilter(drop_distinguished=False).check(post(distinguished="moderator")) is None


def test_crossposts_are_dropped():
    assert CrosspostFilter().check(post(crosspost_parent="t3_abc")) == "crosspost"
    assert CrosspostFilter().check(post()) is None


def test_language_filter_keeps_english_and_drops_other_languages():
    f = LanguageFilter(frozenset({"en"}), 0.5)
    assert f.check(post()) is None
    assert f.check(post(text="Je me sens tellement coupable d'avoir manqué la remise des diplômes de ma sœur.")) == "language"
    assert f.check(post(text="Ich fühle mich so schuldig, weil ich die Abschlussfeier meiner Schwester verpasst habe.")) == "language"


def test_near_duplicates_catch_small_edits_but_not_different_posts():
    f = NearDuplicateFilter(threshold=0.7, num_perm=64, shingle_words=3)
    assert f.check(post(id="a")) is None
    assert f.check(post(id="b", text=STORY.replace("last weekend", "last Saturday"))) == "near_duplicate"
    other = "Feeling pretty hopeless today after the interview went badly and nobody called me back about it."
    assert f.check(post(id="c", text=other)) is None


def test_duplicate_filters_are_marked_stateful_and_the_rest_are_not():
    cfg = load_recipe("configs/dumps.toml").filters
    chain = filters_from_config(cfg)
    stateful = {type(f).__name__ for f in chain if getattr(f, "stateful", False)}
    assert stateful == {"ExactDuplicateFilter", "NearDuplicateFilter"}
    assert [type(f).__name__ for f in chain][-2:] == ["ExactDuplicateFilter", "NearDuplicateFilter"]
    assert ExactDuplicateFilter.stateful and not getattr(DeletedFilter, "stateful", False)


def test_recipe_chain_funnel_adds_up_exactly_with_every_reason():
    chain = filters_from_config(load_recipe("configs/dumps.toml").filters)
    recs = [post(id="ok"), post(id="del", selftext="[deleted]"), post(id="nsfw", over_18=True),
            post(id="bot", author="AutoModerator"), post(id="mod", distinguished="moderator", text=STORY + " Mod here."),
            post(id="pin", stickied=True, text=STORY + " Pinned."), post(id="x", crosspost_parent="t3_q"),
            post(id="short", text="I feel sad"), post(id="fr", text="Je me sens " * 30),
            post(id="dup", text=STORY.upper()), post(id="near", text=STORY + " Thanks for reading.")]
    funnel = Funnel()
    kept = list(run_filters(recs, chain, funnel))
    assert [p.id for p in kept] == ["ok"]
    assert funnel.to_dict() == {"read": 11, "kept": 1, "malformed": 0, "dropped": {
        "bot": 1, "crosspost": 1, "deleted": 1, "distinguished": 1, "duplicate": 1, "language": 1,
        "near_duplicate": 1, "nsfw": 1, "stickied": 1, "too_short": 1}}
