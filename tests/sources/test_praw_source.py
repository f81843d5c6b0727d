"""Real praw against the fake Reddit server on 127.0.0.1: search, listings, comments, errors, resume."""
import json
import logging

import pytest

from schemas.config import SourcesConfig
from schemas.records import RawPost
from sources.praw_source import Checkpoint, PrawScraper, ScrapeError, iter_praw_posts, make_reddit, scrape_to_jsonl
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


def test_search_survives_a_429_and_a_500_and_yields_each_post_once(creds, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    with FakeReddit(submissions(), page_size=2) as fake:
        fake.fail_next = [429, 500]
        sleeps: list[float] = []
        cfg = cfg_for(fake)
        scraper = PrawScraper(make_reddit(cfg), cfg, Checkpoint.load(tmp_path / "cp.json"), sleeps.append)
        posts = list(iter_praw_posts(scraper, ["sad"]))
    assert fake.errors_served == [429, 500]
    assert sleeps == [1.0]  # our backoff honoured Retry-After on the 429; prawcore retried the 500
    assert [p.id for p in posts] == ["s5", "s3", "s1"]  # newest first, across two pages
    assert all(isinstance(p, RawPost) and p.source == "praw" and p.retrieved_on > 0 for p in posts)
    assert posts[0].text == "Post 5\n\nI feel so sad today" and posts[0].author == "writer5"
    searches = [r for r in fake.requests if r["path"].startswith("/r/all/search")]
    assert searches[-1]["params"]["after"] == "t3_s3" and searches[0]["params"]["q"] == "sad"
    assert all(r["authorization"] == f"bearer {TOKEN}" for r in fake.requests if r["method"] == "GET")
    assert SECRET not in caplog.text


@pytest.mark.parametrize("listing", ["new", "top", "hot"])
def test_subreddit_listings_with_time_filter(creds, tmp_path, listing):
    with FakeReddit(submissions(), page_size=3) as fake:
        cfg = cfg_for(fake, listing=listing, subreddits=("offmychest",), time_filter="week")
        rows = list(PrawScraper(make_reddit(cfg), cfg, Checkpoint.load(tmp_path / "cp.json")).run([]))
    assert sorted(r["id"] for r in rows) == [f"s{i}" for i in range(5)]
    req = next(r for r in fake.requests if r["path"].startswith(f"/r/offmychest/{listing}"))
    assert (req["params"].get("t") == "week") == (listing == "top")


def test_comments_are_fetched_when_asked_and_keep_their_link_id(creds, tmp_path):
    comments = {"s1": [{"id": "c1", "body": "Same, I'm scared too", "link_id": "t3_s1", "parent_id": "t3_s1",
                        "author": "helper", "subreddit": "offmychest", "created_utc": 1700000100}]}
    with FakeReddit(submissions(3), comments) as fake:
        cfg = cfg_for(fake, include_comments=True)
        posts = list(iter_praw_posts(PrawScraper(make_reddit(cfg), cfg, Checkpoint.load(tmp_path / "c.json")), ["sad"]))
    assert [(p.id, p.kind, p.link_id) for p in posts] == [("s1", "submission", ""), ("c1", "comment", "t3_s1")]


def test_interrupted_scrape_resumes_from_its_checkpoint_without_repeats(creds, tmp_path):
    def killed(_seconds: float) -> None:
        raise KeyboardInterrupt  # the process dies while backing off

    with FakeReddit(submissions(12), page_size=2) as fake:
        fake.fail_on = {2: 429}  # page 1 is served, the 2nd listing request is rate limited
        cfg = cfg_for(fake, subreddits=("all",))
        with pytest.raises(KeyboardInterrupt):
            scrape_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=killed)
        (out,) = tmp_path.glob("praw-*.jsonl")
        first = [json.loads(x)["id"] for x in out.read_text().splitlines()]
        checkpoint = json.loads(out.with_suffix(".checkpoint.json").read_text())
        n_before = len(fake.requests)
        path = scrape_to_jsonl(cfg, ["sad"], tmp_path, reddit=make_reddit(cfg), sleep=lambda s: None)
    ids = [json.loads(x)["id"] for x in path.read_text().splitlines()]
    assert first == ["s11", "s9"] and list(checkpoint.values())[0]["after"] == "t3_s9"
    assert ids == ["s11", "s9", "s7", "s5", "s3", "s1"]
    resumed = [r for r in fake.requests[n_before:] if r["path"].startswith("/r/all/search")]
    assert resumed[0]["params"]["after"] == "t3_s9"
    sidecar = json.loads(path.with_suffix(".query.json").read_text())
    assert sidecar["terms"] == ["sad"] and SECRET not in path.with_suffix(".query.json").read_text()


def test_rate_limit_that_never_clears_gives_up_with_a_clear_error(creds, tmp_path):
    with FakeReddit(submissions(3)) as fake:
        fake.fail_next = [429] * 10
        cfg = cfg_for(fake, max_retries=2)
        sleeps: list[float] = []
        with pytest.raises(ScrapeError, match=r"search\|all\|sad.*gave up after 2 retries \(TooManyRequests\)"):
            list(PrawScraper(make_reddit(cfg), cfg, Checkpoint.load(tmp_path / "cp.json"), sleeps.append).run(["sad"]))
    assert sleeps == [1.0, 1.0]


def test_missing_credentials_are_reported_without_values(monkeypatch, tmp_path):
    for key in ("praw_client_id", "praw_client_secret", "praw_user_agent"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no user praw.ini
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScrapeError, match="praw credentials missing: set praw_client_id"):
        make_reddit(SourcesConfig(kind="praw"))


def test_express_recipe_searches_every_lexicon_term_across_all_of_reddit_submissions_only():
    from schemas.config import load_recipe
    from schemas.lexicon import lexicon_terms
    from sources.praw_source import queries, query_record

    cfg = load_recipe("configs/express.toml").sources
    terms = sorted(lexicon_terms())
    qs = queries(cfg, terms)
    assert cfg.kind == "praw" and not cfg.terms and not cfg.include_comments
    assert len(qs) == len(terms) > 600 and {(q.listing, q.subreddit) for q in qs} == {("search", "all")}
    record = query_record(cfg, terms)
    assert record["terms"] == terms and not any("secret" in k or "client" in k for k in record)
