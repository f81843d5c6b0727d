"""Incremental praw pulls (real praw against the fake Reddit server): only items newer than the stored
checkpoint are read, each pull writes a new numbered file, a pull with nothing new writes none."""
import json

import pytest

from sources.praw_pulls import Since, pull_new_to_jsonl
from sources.praw_source import make_reddit
from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import SECRET, cfg_for, creds, submissions  # noqa: F401  (creds: fixture)


def _ids(path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def _searches(fake: FakeReddit, start: int) -> list[dict]:
    return [r for r in fake.requests[start:] if r["path"].startswith("/r/all/search")]


def test_pulls_read_only_items_newer_than_the_checkpoint_and_nothing_new_writes_no_file(creds, tmp_path):
    lines: list[str] = []
    with FakeReddit(submissions(7), page_size=2) as fake:
        cfg = cfg_for(fake)
        first = pull_new_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=lines.append)
        assert first.path is not None and first.path.name.endswith("-0001.jsonl")
        assert _ids(first.path) == ["s5", "s3", "s1"] and first.skipped_seen == 0

        before = len(fake.requests)
        again = pull_new_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=lines.append)
        assert again.path is None and again.new_items == 0 and again.files == [first.path]
        assert again.skipped_seen == 2  # s5 (the checkpoint's own id), then s3 (older): stop there
        assert len(_searches(fake, before)) == 1  # one page, not the whole listing
        assert sorted(p.name for p in tmp_path.glob("praw-*-*.jsonl")) == [first.path.name]

        fake.submissions += [  # one newer post, one at the checkpoint's very second, one not matching
            {"id": "s7", "title": "Later", "selftext": "I feel so sad again", "subreddit": "offmychest",
             "author": "w7", "created_utc": 1700000007},
            {"id": "t5", "title": "Same second", "selftext": "so sad", "subreddit": "offmychest",
             "author": "w8", "created_utc": 1700000005},
            {"id": "s9", "title": "Other", "selftext": "Nice weather", "subreddit": "offmychest",
             "author": "w9", "created_utc": 1700000009},
        ]
        third = pull_new_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=lines.append)
    assert third.path is not None and third.path.name.endswith("-0002.jsonl")
    assert sorted(_ids(third.path)) == ["s7", "t5"] and third.new_items == 2
    assert third.files == [first.path, third.path]
    since = Since.load(next(tmp_path.glob("praw-*.since.json")))
    assert since.pulls == 2 and list(since.queries.values()) == [{"created_utc": 1700000007.0, "ids": ["s7"]}]
    sidecar = json.loads(third.path.with_suffix(".query.json").read_text())
    assert sidecar["pull"] == 2 and sidecar["terms"] == ["sad"] and sidecar["skipped_seen"] == third.skipped_seen
    assert all(SECRET not in p.read_text() for p in tmp_path.iterdir())
    assert any("already seen 2" in line and "stopped at the checkpoint" in line for line in lines)
    assert lines[-1].startswith("[scrape] pull 2: 2 new items")  # the empty pull used no number


def test_unordered_listing_is_read_to_its_end_and_old_items_are_counted_as_skipped(creds, tmp_path):
    with FakeReddit(submissions(7), page_size=2) as fake:
        cfg = cfg_for(fake, listing="top", subreddits=("offmychest",))
        first = pull_new_to_jsonl(cfg, [], tmp_path, reddit=make_reddit(cfg), log=lambda s: None)
        before = len(fake.requests)
        again = pull_new_to_jsonl(cfg, [], tmp_path, reddit=make_reddit(cfg), log=lambda s: None)
        tops = [r for r in fake.requests[before:] if r["path"].startswith("/r/offmychest/top")]
    assert sorted(_ids(first.path)) == [f"s{i}" for i in range(5)]
    assert again.path is None and again.skipped_seen == 5 and len(tops) == 3  # every page, nothing handed on


def test_interrupted_pull_resumes_the_same_file_and_commits_its_checkpoint_once(creds, tmp_path):
    def killed(_seconds: float) -> None:
        raise KeyboardInterrupt

    with FakeReddit(submissions(12), page_size=2) as fake:
        fake.fail_on = {2: 429}
        cfg = cfg_for(fake)
        with pytest.raises(KeyboardInterrupt):
            pull_new_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=killed, log=lambda s: None)
        assert not list(tmp_path.glob("*.since.json"))  # nothing committed yet
        done = pull_new_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=lambda s: None,
                                 log=lambda s: None)
    assert done.path.name.endswith("-0001.jsonl") and _ids(done.path) == ["s11", "s9", "s7", "s5", "s3", "s1"]
    assert done.new_items == 6 and Since.load(next(tmp_path.glob("*.since.json"))).pulls == 1
