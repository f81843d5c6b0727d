from schemas.config import FilterConfig
from schemas.funnel import Funnel
from schemas.records import Malformed, RawPost
from filters.base import run_filters
from filters.chain import filters_from_config
from filters.reddit import BotFilter, DeletedFilter, ExactDuplicateFilter, LengthFilter, NsfwFilter


def post(**kw) -> RawPost:
    base = dict(id="p", text="I feel sad about the exam today", selftext="I feel sad", author="u1")
    base.update(kw)
    return RawPost(**base)


def test_deleted_and_removed_posts_are_dropped_with_their_reason():
    f = DeletedFilter()
    assert f.check(post(selftext="[removed]")) == "removed"
    assert f.check(post(removed_by_category="moderator")) == "removed"
    assert f.check(post(selftext="[deleted]")) == "deleted"
    assert f.check(post()) is None


def test_nsfw_bot_and_length_filters():
    assert NsfwFilter().check(post(over_18=True)) == "nsfw"
    bots = BotFilter(frozenset({"AutoModerator"}))
    assert bots.check(post(author="AutoModerator")) == "bot"
    assert bots.check(post(author="AutoModerator", distinguished="moderator", stickied=True)) == "bot"
    assert bots.check(post()) is None
    assert LengthFilter(min_words=10).check(post()) == "too_short"
    assert LengthFilter(max_words=3).check(post()) == "too_long"


def test_length_filter_decides_as_a_full_word_count_would():
    """The filter counts words only as far as its bounds need; its verdicts must be those of
    len(text.split()) at every length around both bounds, whatever the white space."""
    import random

    rng = random.Random(5)
    spaces = [" ", "  ", "\n", "\t", "\u3000", "\x1c", " \n "]
    for _ in range(3000):
        words = ["w" * rng.randint(1, 3) for _ in range(rng.randint(0, 14))]
        text = rng.choice(["", " ", "\n"]) + "".join(w + rng.choice(spaces) for w in words)[:rng.randint(0, 60)]
        n = len(text.split())
        lo, hi = rng.randint(0, 8), rng.choice([0, rng.randint(1, 10)])
        want = "too_short" if n < lo else "too_long" if hi and n > hi else None
        assert LengthFilter(lo, hi).check(post(text=text)) == want, (text, lo, hi)


def test_exact_duplicates_ignore_case_and_spacing():
    f = ExactDuplicateFilter()
    assert f.check(post(id="a", text="I feel  SAD")) is None
    assert f.check(post(id="b", text="i feel sad")) == "duplicate"


def test_funnel_adds_up_and_every_drop_reaches_the_sink():
    records = [post(id="1"), post(id="2", over_18=True), Malformed("f", 3, "x", "bad_json"),
               post(id="4", text="I feel sad about the exam today"), post(id="5", author="AutoModerator", text="other")]
    funnel, sunk = Funnel(), []
    kept = list(run_filters(records, filters_from_config(FilterConfig()), funnel, lambda r, why: sunk.append(why)))
    assert [p.id for p in kept] == ["1"]
    assert funnel.to_dict() == {"read": 5, "kept": 1, "dropped": {"bot": 1, "duplicate": 1, "nsfw": 1}, "malformed": 1}
    assert funnel.balanced() and sorted(sunk) == ["bot", "duplicate", "malformed", "nsfw"]
