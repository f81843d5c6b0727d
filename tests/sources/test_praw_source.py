"""Real praw against the fake Reddit server on 127.0.0.1: search, listings, comments, credentials; each
pull's file read back with the dump reader, as a build reads it."""
import json
import logging

import praw
import pytest

from schemas.config import SourcesConfig
from schemas.records import RawPost
from sources.dumps import read_dump
from sources.praw_pulls import pull
from sources.praw_source import Refused, ScrapeError, make_reddit
from tests.fakes.reddit_server import TOKEN, FakeReddit

SECRET = "s3cr3t-value-never-written"


def submissions(n: int = 7) -> list[dict]:
    return [{"id": f"s{i}", "title": f"Post {i}", "selftext": "I feel so sad today" if i % 2 else "Nice weather",
             "subreddit": "offmychest" if i < 5 else "TrueOffMyChest", "author": f"writer{i}",
             "created_utc": 1700000000 + i, "over_18": False, "score": i} for i in range(n)]


@pytest.fixture
def creds(monkeypatch):
    monkeypatch.setenv("praw_client_id", "client-id-123")
    monkeypatch.setenv("praw_client_secret", SECRET)
    monkeypatch.setenv("praw_user_agent", "express-tests/0.1 (by u/express)")


def cfg_for(fake: FakeReddit, **kw) -> SourcesConfig:
    base = dict(kind="praw", oauth_url=fake.url, reddit_url=fake.url, backoff_seconds=0.5, max_retries=3)
    base.update(kw)
    return SourcesConfig(**base)


def quiet(_line: str) -> None:
    return None


def test_search_pages_with_the_cursor_and_reads_back_as_praw_raw_posts(creds, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    with FakeReddit(submissions(), page_size=2) as fake:
        cfg = cfg_for(fake)
        result = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
    posts = list(read_dump(result.path))
    assert [p.id for p in posts] == ["s5", "s3", "s1"]  # newest first, across two pages
    assert all(isinstance(p, RawPost) and p.source == "praw" and p.retrieved_on > 0 for p in posts)
    assert posts[0].text == "Post 5\n\nI feel so sad today" and posts[0].author == "writer5"
    searches = [r for r in fake.requests if r["path"].startswith("/r/all/search")]
    assert searches[-1]["params"]["after"] == "t3_s3" and searches[0]["params"]["q"] == "sad"
    assert all(r["authorization"] == f"bearer {TOKEN}" for r in fake.requests if r["method"] == "GET")
    assert SECRET not in caplog.text
    assert all(SECRET not in p.read_text() and "client-id-123" not in p.read_text()
               for p in tmp_path.iterdir() if p.is_file())


@pytest.mark.parametrize("listing", ["new", "top", "hot"])
def test_subreddit_listings_with_time_filter(creds, tmp_path, listing):
    with FakeReddit(submissions(), page_size=3) as fake:
        cfg = cfg_for(fake, listing=listing, subreddits=("offmychest",), time_filter="week")
        result = pull(cfg, [], tmp_path, reddit=make_reddit(cfg), log=quiet)
    assert sorted(json.loads(x)["id"] for x in result.path.read_text().splitlines()) == [f"s{i}" for i in range(5)]
    req = next(r for r in fake.requests if r["path"].startswith(f"/r/offmychest/{listing}"))
    assert (req["params"].get("t") == "week") == (listing == "top")


def test_comments_are_fetched_when_asked_and_follow_their_submission(creds, tmp_path):
    comments = {"s1": [{"id": "c1", "body": "Same, I'm scared too", "link_id": "t3_s1", "parent_id": "t3_s1",
                        "author": "helper", "subreddit": "offmychest", "created_utc": 1700000100}]}
    with FakeReddit(submissions(3), comments) as fake:
        cfg = cfg_for(fake, include_comments=True)
        result = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), log=quiet)
    posts = list(read_dump(result.path))
    assert [(p.id, p.kind, p.link_id) for p in posts] == [("s1", "submission", ""), ("c1", "comment", "t3_s1")]
    assert result.new_items == 1 and result.rows == 2


def test_a_revoked_token_is_fetched_again_and_the_request_retried(creds, tmp_path):
    with FakeReddit(submissions(), page_size=2) as fake:
        fake.fail_on = {2: 401}  # the second page: Reddit says the token is no longer valid
        cfg = cfg_for(fake)
        sleeps: list[float] = []
        result = pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=quiet)
    tokens = [r for r in fake.requests if r["path"] == "/api/v1/access_token"]
    assert fake.errors_served == [401] and len(tokens) == 2 and sleeps == [0.5]
    assert [json.loads(x)["id"] for x in result.path.read_text().splitlines()] == ["s5", "s3", "s1"]


def test_rejected_credentials_stop_the_pull_before_any_listing_and_are_never_named(creds, tmp_path):
    with FakeReddit(submissions()) as fake:
        fake.reject_credentials = True
        cfg = cfg_for(fake)
        sleeps: list[float] = []
        with pytest.raises(Refused, match="Reddit rejected the praw credentials") as refused:
            pull(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=quiet)
    tokens = [r for r in fake.requests if r["path"] == "/api/v1/access_token"]
    assert len(tokens) == 1 and fake.api_calls == 0 and sleeps == []  # asked once, never retried
    assert SECRET not in str(refused.value) and "client-id-123" not in str(refused.value)


@pytest.mark.parametrize("status,reason", [(403, "403 Forbidden"), (404, "404 Not Found")])
def test_a_forbidden_or_missing_listing_stops_the_pull_at_once_keeping_what_it_read(creds, tmp_path, status, reason):
    """The second page is refused: no retry (it cannot clear), an error naming the query, and the
    first page's posts kept, so the same pull after the fix goes on from there."""
    with FakeReddit(submissions(), page_size=2) as fake:
        fake.fail_on = {2: status}
        cfg = cfg_for(fake, listing="new", subreddits=("offmychest",))
        sleeps: list[float] = []
        with pytest.raises(Refused, match=reason) as refused:
            pull(cfg, [], tmp_path, reddit=make_reddit(cfg), sleep=sleeps.append, log=quiet)
        assert fake.errors_served == [status] and fake.api_calls == 2 and sleeps == []
        assert "new|offmychest|" in str(refused.value)
        (part,) = tmp_path.glob("*.jsonl.part")
        first_page = [json.loads(x)["id"] for x in part.read_text().splitlines()]
        assert first_page == ["s4", "s3"]  # offmychest holds s0-s4, newest first, two a page
        result = pull(cfg, [], tmp_path, reddit=make_reddit(cfg), log=quiet)
    assert [json.loads(x)["id"] for x in result.path.read_text().splitlines()] == ["s4", "s3", "s2", "s1", "s0"]


def test_missing_credentials_are_reported_without_values(monkeypatch, tmp_path):
    for key in ("praw_client_id", "praw_client_secret", "praw_user_agent"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no user praw.ini
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScrapeError, match="praw credentials missing: set praw_client_id"):
        make_reddit(SourcesConfig(kind="praw"))


def test_credentials_from_a_praw_ini_site_are_used_and_never_written(monkeypatch, tmp_path):
    for key in ("praw_client_id", "praw_client_secret", "praw_user_agent"):
        monkeypatch.delenv(key, raising=False)
    (tmp_path / "praw.ini").write_text(f"[express]\nclient_id=ini-client\nclient_secret={SECRET}\n"
                                       "user_agent=express-tests/0.1 (by u/express)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(praw.config.Config, "CONFIG", None)  # praw reads its ini files once per process
    with FakeReddit(submissions(3)) as fake:
        cfg = cfg_for(fake, praw_site="express")
        result = pull(cfg, ["sad"], tmp_path / "out", log=quiet)
        token = next(r for r in fake.requests if r["path"] == "/api/v1/access_token")
    assert result.new_items == 1 and token["body"].startswith("grant_type=client_credentials")
    assert all(SECRET not in p.read_text() and "ini-client" not in p.read_text()
               for p in (tmp_path / "out").iterdir())


def test_express_recipe_searches_every_lexicon_term_across_all_of_reddit_submissions_only():
    from schemas.config import load_recipe
    from schemas.lexicon import lexicon_terms
    from sources.praw_source import queries, query_record, search_terms

    cfg = load_recipe("configs/express.toml").sources
    terms = search_terms(cfg)
    qs = queries(cfg, terms)
    assert cfg.kind == "praw" and not cfg.terms and not cfg.include_comments and terms == sorted(lexicon_terms())
    assert len(qs) == len(terms) > 600 and {(q.listing, q.subreddit) for q in qs} == {("search", "all")}
    record = query_record(cfg, terms)
    assert record["terms"] == terms and not any("secret" in k or "client" in k for k in record)


def test_prawcores_own_retries_are_off_on_the_versions_known_to_keep_them_there(creds):
    """The pull retries with its own backoff and checkpoints; prawcore has no public switch, so
    its sessions' strategy is set for the known versions only."""
    with FakeReddit([]) as fake:
        reddit = make_reddit(cfg_for(fake))
    strategy = reddit._read_only_core._retry_strategy_class()
    assert strategy.should_retry_on_failure() is False


def test_a_praw_or_prawcore_this_code_does_not_know_is_refused_loudly(creds, monkeypatch):
    import prawcore

    monkeypatch.setattr(prawcore, "__version__", "99.0.0")
    with FakeReddit([]) as fake, pytest.raises(RuntimeError, match="prawcore 99.0.0: express switches off"):
        make_reddit(cfg_for(fake))
