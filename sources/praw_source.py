"""Live Reddit through praw: subreddit listings (new/top/hot) and keyword search, with comments.

Credentials come from praw's own sources (environment `praw_client_id`, `praw_client_secret`,
`praw_user_agent`, or a `praw.ini` site); this module never reads, logs or writes them. A
checkpoint file records, per query, the last item handed on, so an interrupted scrape resumes
after it (at-least-once: a kill between writing an item and the next request can repeat that
one item, which the duplicate filter then drops). 429s and server errors back off exponentially.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemas.config import SourcesConfig
from schemas.records import RawPost
from sources.reddit_json import post_from_json

SUBMISSION_FIELDS = ("id", "title", "selftext", "over_18", "score", "distinguished", "stickied",
                     "removed_by_category", "created_utc", "crosspost_parent", "num_comments")
COMMENT_FIELDS = ("id", "body", "link_id", "parent_id", "score", "distinguished", "stickied", "created_utc")


class ScrapeError(RuntimeError):
    """The scrape cannot go on (no credentials, retries exhausted); the checkpoint keeps the progress."""


class MissingCredentials(ScrapeError):
    """praw found no client id, secret or user agent; retrying will not help."""


@dataclass(frozen=True)
class Query:
    listing: str  # search | new | top | hot
    subreddit: str
    term: str = ""
    sort: str = "new"
    time_filter: str = "all"

    @property
    def key(self) -> str:
        return f"{self.listing}|{self.subreddit}|{self.term}|{self.sort}|{self.time_filter}"


def queries(cfg: SourcesConfig, terms: list[str]) -> list[Query]:
    """One query per (subreddit, term) for search, one per subreddit for a listing."""
    if cfg.listing == "search":
        return [Query("search", sub, t, cfg.sort, cfg.time_filter) for sub in cfg.subreddits for t in terms]
    return [Query(cfg.listing, sub, "", cfg.listing, cfg.time_filter) for sub in cfg.subreddits]


def query_record(cfg: SourcesConfig, terms: list[str]) -> dict[str, Any]:
    """What a manifest records about a scrape: its parameters, never credentials."""
    return {"listing": cfg.listing, "subreddits": list(cfg.subreddits), "terms": list(terms),
            "terms_sha256": hashlib.sha256("\n".join(terms).encode()).hexdigest(), "sort": cfg.sort,
            "time_filter": cfg.time_filter, "limit": cfg.limit, "include_comments": cfg.include_comments,
            "api": cfg.oauth_url or "https://oauth.reddit.com"}


@dataclass
class Checkpoint:
    """Per-query progress (`after` fullname, count, done), saved atomically after every item."""

    path: Path
    state: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> "Checkpoint":
        p = Path(path)
        return cls(p, json.loads(p.read_text()) if p.is_file() else {})

    def get(self, key: str) -> dict[str, Any]:
        return self.state.setdefault(key, {"after": None, "n": 0, "done": False})

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=1, sort_keys=True))
        os.replace(tmp, self.path)


def make_reddit(cfg: SourcesConfig) -> Any:
    """A read-only praw client; credentials are left to praw (env vars or praw.ini)."""
    import praw
    from praw.exceptions import MissingRequiredAttributeException

    urls = {k: v for k, v in (("oauth_url", cfg.oauth_url), ("reddit_url", cfg.reddit_url)) if v}
    try:
        reddit = praw.Reddit(cfg.praw_site, check_for_updates=False, check_for_async=False, **urls)
    except MissingRequiredAttributeException as exc:
        raise MissingCredentials("praw credentials missing: set praw_client_id, praw_client_secret and "
                          f"praw_user_agent in the environment or praw.ini [{cfg.praw_site}]") from exc
    reddit.read_only = True
    return reddit


def _plain(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out = {k: data.get(k) for k in keys if k in data}
    author = data.get("author")
    out["author"] = str(author) if author is not None else "[deleted]"
    out["subreddit"] = str(data.get("subreddit") or "")
    return out


class PrawScraper:
    """Yields Reddit-shaped JSON dicts (the dump schema) for every query, resuming from a checkpoint."""

    def __init__(self, reddit: Any, cfg: SourcesConfig, checkpoint: Checkpoint,
                 sleep: Callable[[float], None] = time.sleep, since: Any | None = None,
                 log: Callable[[str], None] | None = None) -> None:
        """`since` (an incremental pull's stored checkpoint, sources/praw_pulls.py::Since) skips items
        handed on by earlier pulls; `log` receives one progress line per finished query."""
        self.reddit, self.cfg, self.checkpoint, self.sleep = reddit, cfg, checkpoint, sleep
        self.since, self.log = since, log
        self.started = time.perf_counter()

    def _listing(self, q: Query, after: str | None, remaining: int) -> Any:
        kwargs: dict[str, Any] = {"limit": remaining, "request_limit": 100}
        if after:
            kwargs["params"] = {"after": after}
        sub = self.reddit.subreddit(q.subreddit)
        if q.listing == "search":
            return sub.search(q.term, sort=q.sort, time_filter=q.time_filter, **kwargs)
        if q.listing == "top":
            return sub.top(time_filter=q.time_filter, **kwargs)
        return getattr(sub, q.listing)(**kwargs)

    def _item(self, submission: Any) -> list[dict[str, Any]]:
        """The submission (and its comments, if asked) as dump-shaped dicts, fetched before any is yielded."""
        now = int(time.time())
        data = vars(submission)
        rows = [{**_plain(data, SUBMISSION_FIELDS), "retrieved_on": now, "_express_source": "praw"}]
        if self.cfg.include_comments:
            submission.comments.replace_more(limit=0)
            for c in submission.comments.list():
                rows.append({**_plain(vars(c), COMMENT_FIELDS), "retrieved_on": now, "_express_source": "praw"})
        return rows

    def _backoff(self, q: Query, attempt: int, exc: Exception) -> None:
        if attempt > self.cfg.max_retries:
            raise ScrapeError(f"{q.key}: gave up after {self.cfg.max_retries} retries ({type(exc).__name__}); "
                              f"progress is in {self.checkpoint.path}") from exc
        delay = min(self.cfg.max_backoff_seconds, self.cfg.backoff_seconds * 2 ** (attempt - 1))
        response = getattr(exc, "response", None)
        retry_after = getattr(response, "headers", {}).get("retry-after") if response is not None else None
        if retry_after and str(retry_after).isdigit():
            delay = min(self.cfg.max_backoff_seconds, max(delay, float(retry_after)))
        self.sleep(delay)

    def run_query(self, q: Query) -> Iterator[dict[str, Any]]:
        from prawcore.exceptions import RequestException, ServerError, TooManyRequests

        state = self.checkpoint.get(q.key)
        attempt = 0
        while not state["done"]:
            try:
                looked = state["n"] + state.get("skipped", 0)
                for submission in self._listing(q, state["after"], max(self.cfg.limit - looked, 0)):
                    if state["n"] + state.get("skipped", 0) >= self.cfg.limit:
                        break
                    created = float(getattr(submission, "created_utc", 0) or 0)
                    if self.since is not None and self.since.seen(q.key, created, submission.id):
                        state["after"], state["skipped"] = f"t3_{submission.id}", state.get("skipped", 0) + 1
                        older = created < self.since.created(q.key)
                        if older and q.sort == "new":  # newest first: everything after this was handed on before
                            state["stopped_at_checkpoint"] = True
                            self.checkpoint.save()
                            break
                        self.checkpoint.save()
                        continue
                    rows = self._item(submission)
                    yield from rows
                    state["after"], state["n"] = f"t3_{submission.id}", state["n"] + 1
                    _advance(state, created, submission.id)
                    self.checkpoint.save()
                    attempt = 0
                state["done"] = True
                self.checkpoint.save()
            except (TooManyRequests, ServerError, RequestException) as exc:
                attempt += 1
                self._backoff(q, attempt, exc)

    def run(self, terms: list[str]) -> Iterator[dict[str, Any]]:
        qs = queries(self.cfg, terms)
        for i, q in enumerate(qs, 1):
            yield from self.run_query(q)
            if self.log is not None:
                self.log(self._progress(i, len(qs), q))

    def _progress(self, i: int, total: int, q: Query) -> str:
        states = self.checkpoint.state.values()
        new, seen = sum(s["n"] for s in states), sum(s.get("skipped", 0) for s in states)
        st = self.checkpoint.get(q.key)
        rate = (new + seen) / max(time.perf_counter() - self.started, 1e-9)
        stop = ", stopped at the checkpoint" if st.get("stopped_at_checkpoint") else ""
        return (f"[scrape] queries {i}/{total}  new {new:,}  already seen {seen:,}  {rate:,.1f} items/s  "
                f"{q.key}: {st['n']} new, {st.get('skipped', 0)} already seen{stop}")


def _advance(state: dict[str, Any], created: float, item_id: str) -> None:
    """Track the newest item handed on for a query: its created_utc and every id at that second."""
    newest = state.setdefault("newest", {"created_utc": None, "ids": []})
    if newest["created_utc"] is None or created > newest["created_utc"]:
        newest["created_utc"], newest["ids"] = created, [item_id]
    elif created == newest["created_utc"] and item_id not in newest["ids"]:
        newest["ids"].append(item_id)


def iter_praw_posts(scraper: PrawScraper, terms: list[str]) -> Iterator[RawPost]:
    """The scrape as RawPosts (`source="praw"`, `retrieved_on` set), the dump reader's schema."""
    for row in scraper.run(terms):
        yield post_from_json(row, source="praw")


def scrape_to_jsonl(cfg: SourcesConfig, terms: list[str], out_dir: str | Path, reddit: Any | None = None,
                    sleep: Callable[[float], None] = time.sleep) -> Path:
    """Scrape into `<out_dir>/praw-<query hash>.jsonl` (appending on resume) with a `.query.json` sidecar."""
    params = query_record(cfg, terms)
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"praw-{digest}.jsonl"
    path.with_suffix(".query.json").write_text(json.dumps(params, indent=1) + "\n")
    checkpoint = Checkpoint.load(path.with_suffix(".checkpoint.json"))
    scraper = PrawScraper(reddit or make_reddit(cfg), cfg, checkpoint, sleep)
    with open(path, "a", encoding="utf-8") as fh:
        for row in scraper.run(terms):
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
    return path
