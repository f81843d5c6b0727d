"""Pulls (real praw against the fake Reddit server): only items newer than the stored checkpoint are read,
each pull writes a new numbered file, nothing new writes none; transient HTTP errors back off
exponentially up to the cap; the checkpoint refuses damage and a second pull of the same query."""
import fcntl
import json

import pytest

from sources.praw_pulls import Checkpoint, pull
from sources.praw_source import ScrapeError, make_reddit
from tests.fakes.reddit_server import FakeReddit
from tests.sources.test_praw_source import SECRET, cfg_for, creds, quiet, submissions  # noqa: F401  (creds: fixture)

SAD = ["s11", "s9", "s7", "s5", "s3", "s1"]  # what a search for "sad" finds in submissions(12), newest first


def _ids(path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text().splitlines()]


def _searches(fake: FakeReddit, start: int = 0) -> list[dict]:
    return [r for r in fake.requests[start:] if r["path"].startswith("/r/all/search")]


def test_pulls_read_only_items_newer_than_the_checkpoint_and_nothing_new_writes_no_file(creds, tmp_path):
    lines: list[str] = []
    with FakeReddit(submissions(7), page_size=2) as fake:
        cfg = cfg_for(fake)
        first = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=lines.append)
        assert first.path is not None and first.path.name.endswith("-0001.jsonl") and first.pull == 1
        assert _ids(first.path) == ["s5", "s3", "s1"] and first.skipped_seen == 0

        before = len(fake.requests)
        again = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=lines.append)
        assert again.path is None and again.pull is None and again.new_items == 0 and again.files == [first.path]
        assert again.skipped_seen == 2  # s5 (the checkpoint's own id), then s3 (older): stop there
        assert len(_searches(fake, before)) == 1  # one page, not the whole listing
        assert sorted(p.name for p in tmp_path.glob("praw-*-*.jsonl*")) == [first.path.name]

        fake.submissions += [  # one newer post, one at the checkpoint's very second, one not matching
            {"id": "s7", "title": "Later", "selftext": "I feel so sad again", "subreddit": "offmychest",
             "author": "w7", "created_utc": 1700000007},
            {"id": "t5", "title": "Same second", "selftext": "so sad", "subreddit": "offmychest",
             "author": "w8", "created_utc": 1700000005},
            {"id": "s9", "title": "Other", "selftext": "Nice weather", "subreddit": "offmychest",
             "author": "w9", "created_utc": 1700000009},
        ]
        third = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=lines.append)
    assert third.path is not None and third.path.name.endswith("-0002.jsonl")
    assert sorted(_ids(third.path)) == ["s7", "t5"] and third.new_items == 2
    assert third.files == [first.path, third.path]
    (log_file,) = tmp_path.glob("praw-*.checkpoint.jsonl")
    cp = Checkpoint.load(log_file)
    assert cp.pulls == 2 and [(m.created_utc, sorted(m.ids)) for m in cp.marks.values()] == [(1700000007.0, ["s7"])]
    assert len(log_file.read_text().splitlines()) == 1  # committed: the snapshot alone
    sidecar = json.loads(third.path.with_suffix(".query.json").read_text())
    assert sidecar["pull"] == 2 and sidecar["terms"] == ["sad"] and sidecar["skipped_seen"] == third.skipped_seen
    assert all(SECRET not in p.read_text() for p in tmp_path.iterdir())
    assert any("already seen 2" in line and "stopped at the checkpoint" in line for line in lines)
    assert lines[-1].startswith("[scrape] pull 2: 2 new items")  # the empty pull used no number


def test_unordered_listing_is_read_to_its_end_and_old_items_are_counted_as_skipped(creds, tmp_path):
    with FakeReddit(submissions(7), page_size=2) as fake:
        cfg = cfg_for(fake, listing="top", subreddits=("offmychest",))
        first = pull(cfg, [], tmp_path, reddit=make_reddit(cfg), log=quiet)
        before = len(fake.requests)
        again = pull(cfg, [], tmp_path, reddit=make_reddit(cfg), log=quiet)
        tops = [r for r in fake.requests[before:] if r["path"].startswith("/r/offmychest/top")]
    assert sorted(_ids(first.path)) == [f"s{i}" for i in range(5)]
    assert again.path is None and again.skipped_seen == 5 and len(tops) == 3  # every page, nothing handed on


def test_backoff_without_retry_after_doubles_each_wait_up_to_the_cap(creds, tmp_path):
    with FakeReddit(submissions(12), page_size=2) as fake:
        fake.retry_after = None
        fake.fail_on = {2: 429, 3: 500, 4: 503, 5: 502, 6: 429, 7: 504}  # after page 1, six failures in a row
        cfg = cfg_for(fake, backoff_seconds=1.0, max_backoff_seconds=8.0, max_retries=6)
        sleeps: list[float] = []
        result = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=quiet)
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert fake.errors_served == [429, 500, 503, 502, 429, 504]  # each once: prawcore did not retry on its own
    assert len(_searches(fake)) == 3 + 6 and _ids(result.path) == SAD


def test_backoff_starts_again_from_the_base_after_progress_and_honours_retry_after_up_to_the_cap(creds, tmp_path):
    with FakeReddit(submissions(12), page_size=2) as fake:
        fake.retry_after = "30"
        fake.fail_on = {2: 503, 3: 500, 5: 429}  # two failures, a page, a 429 asking for 30 s
        cfg = cfg_for(fake, backoff_seconds=1.0, max_backoff_seconds=8.0, max_retries=3)
        sleeps: list[float] = []
        result = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=quiet)
    assert sleeps == [1.0, 2.0, 8.0] and _ids(result.path) == SAD


def test_errors_that_never_clear_give_up_with_a_clear_error_and_the_pull_resumes_later(creds, tmp_path):
    with FakeReddit(submissions(12), page_size=2) as fake:
        fake.retry_after = None
        fake.fail_on = {i: 503 for i in range(2, 5)}
        cfg = cfg_for(fake, backoff_seconds=1.0, max_retries=2)
        sleeps: list[float] = []
        with pytest.raises(ScrapeError, match=r"search\|all\|sad.*gave up after 2 retries \(ServerError\); "
                                              r"progress is in .*praw-\w+\.checkpoint\.jsonl"):
            pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=quiet)
        assert sleeps == [1.0, 2.0] and not list(tmp_path.glob("praw-*-0001.jsonl"))  # nothing committed
        (part,) = tmp_path.glob("praw-*-0001.jsonl.part")
        assert _ids(part) == SAD[:2]
        fake.fail_on = {}
        before = len(fake.requests)
        lines: list[str] = []
        done = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=lines.append)
        resumed = _searches(fake, before)
    assert done.resumed and "(resuming an interrupted pull)" in lines[0]
    assert resumed[0]["params"]["after"] == "t3_s9" and _ids(done.path) == SAD and not part.exists()


def test_a_second_pull_of_the_same_query_while_one_runs_stops_at_once(creds, tmp_path):
    with FakeReddit(submissions(3)) as fake:
        cfg = cfg_for(fake)
        pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
        (lock,) = tmp_path.glob("praw-*.lock")
        with open(lock) as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            before = len(fake.requests)
            with pytest.raises(ScrapeError, match=r"praw-\w+\.lock: another pull of this query is running"):
                pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
            assert len(fake.requests) == before


def test_a_damaged_checkpoint_line_is_named_by_file_and_line(creds, tmp_path):
    with FakeReddit(submissions(3)) as fake:
        cfg = cfg_for(fake)
        pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
        (log_file,) = tmp_path.glob("praw-*.checkpoint.jsonl")
        log_file.write_text(log_file.read_text() + '{"q": "search|all|sad|new|all", "id": \n')
        with pytest.raises(ScrapeError, match=rf"{log_file.name}:2: not a praw pull checkpoint line"):
            pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
        log_file.write_text('{"pulls": 1}\n')
        with pytest.raises(ScrapeError, match=rf"{log_file.name}:1: .*format is None"):
            pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
