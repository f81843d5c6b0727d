"""Prompt settings as versioned data, and few-shot selection rules."""
import pytest

from evaluation.predictors.fewshot import ShotPool
from evaluation.predictors.base import Item, TrainItem
from evaluation.predictors.prompts import PROMPTS_FILE, build_messages, load_prompts


def test_shipped_prompts_have_a_version_and_the_four_paper_settings():
    prompts = load_prompts()
    assert prompts.version and len(prompts.sha256) == 64
    assert set(prompts.settings) == {"zero-shot", "few-shot-random", "few-shot-nearest", "chain-of-thought"}
    assert prompts.get("few-shot-random").examples == prompts.get("few-shot-nearest").examples == 4
    assert (prompts.get("few-shot-random").selection, prompts.get("few-shot-nearest").selection) == ("random", "nearest")


def test_zero_shot_prompt_says_what_the_paper_says_and_defines_no_emotion():
    setting = load_prompts().get("zero-shot")
    target = Item.from_row({"post_id": "p", "masked_text": "I feel so <mask> and <mask> today."})
    [msg] = build_messages(setting, target, [])
    text = msg["content"].lower()
    assert msg["role"] == "user" and "self-disclosure from social media" in text
    assert "2 masked emotion words" in text and "exactly 2 words" in text and "in the order" in text
    assert "no other text" in text and "['word1', 'word2']" in text
    assert "definition" not in text and "emotion is" not in text
    assert text.endswith("i feel so <mask> and <mask> today.") and "sad" not in text


def test_a_prompts_file_with_a_bad_setting_is_rejected_naming_it(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text(PROMPTS_FILE.read_text() + '\n[settings.odd]\nexamples = 2\nselection = "none"\n')
    with pytest.raises(ValueError, match=r"p.toml \[settings.odd\]"):
        load_prompts(bad)
    with pytest.raises(KeyError, match="unknown prompt setting"):
        load_prompts().get("five-shot")


def _pool_rows():
    rows = []
    for i in range(12):
        k = 1 + i % 2
        topic = "dog barking neighbours" if i < 6 else "exam grades university"
        rows.append(TrainItem.from_row({"post_id": f"p{i}", "segment_index": 0, "surfaces": ["sad"] * k,
                                        "masked_text": f"{topic} {i} " + "I feel <mask>. " * k}))
    return rows


@pytest.mark.parametrize("how", ["random", "nearest"])
def test_shots_share_the_mask_count_and_never_the_post(how):
    pool = ShotPool(_pool_rows(), seed=3)
    target = Item.from_row({"post_id": "p2", "segment_index": 0, "masked_text": "dog barking neighbours I feel <mask>."})
    shots = pool.select(target, 4, how)
    assert len(shots) == 4
    assert all(s.masked_text.count("<mask>") == 1 and s.post_id != "p2" for s in shots)
    assert pool.select(target, 4, how) == shots  # deterministic


def test_nearest_shots_are_the_most_similar_texts_and_random_depends_on_the_seed():
    pool = ShotPool(_pool_rows(), seed=3)
    target = Item.from_row({"post_id": "x", "segment_index": 0, "masked_text": "exam grades university I feel <mask>."})
    nearest = pool.select(target, 3, "nearest")
    assert {s.post_id for s in nearest} == {"p6", "p8", "p10"} and pool.backend == "tfidf"
    picks = {tuple(s.post_id for s in ShotPool(_pool_rows(), seed=s).select(target, 3, "random")) for s in range(8)}
    assert len(picks) > 1
