"""Live Reddit through praw: the client, the queries a recipe asks for, and the one scraper that reads
a query's listing (new/top/hot or keyword search, with comments if asked) from a cursor.

Writing what the scraper reads, exactly once and resumable, is `sources/praw_pulls.py`.

Credentials come from praw's own sources (environment `praw_client_id`, `praw_client_secret`,
`praw_user_agent`, or a `praw.ini` site); this module never reads, logs or writes them.

Retries: 429s, server errors, connection errors and a revoked token are retried here with
exponential backoff (`backoff_seconds * 2**(attempt-1)`, at most `max_backoff_seconds`, at least a
429's `Retry-After` up to that cap), `max_retries` times in a row, then `ScrapeError`. prawcore's own
retry of 5xx (two more tries after real sleeps of 2-4 s and 0-2 s) is switched off in `make_reddit`,
so one policy, ours, decides every wait and the tests can replace `sleep`.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from common.errors import UserError
from schemas.config import SourcesConfig

SUBMISSION_FIELDS = ("id", "title", "selftext", "over_18", "score", "distinguished", "stickied",
                     "removed_by_category", "created_utc", "crosspost_parent", "num_comments")
COMMENT_FIELDS = ("id", "body", "link_id", "parent_id", "score", "distinguished", "stickied", "created_utc")
INFO_BATCH = 100  # fullnames per /api/info request: Reddit's limit


class ScrapeError(RuntimeError):
    """The scrape cannot go on (no credentials, retries exhausted); the checkpoint keeps the progress."""


class Refused(ScrapeError, UserError):
    """The scrape as configured is refused (credentials missing or rejected, a listing forbidden or
    not found): retrying will not help, the user must change something."""


class MissingCredentials(Refused):
    """praw found no client id, secret or user agent."""


# HTTP statuses no retry changes, with what a user can do about them (never a credential's value)
REFUSALS = {
    401: "Reddit rejected the praw credentials (401 at its token endpoint): check praw_client_id and "
         "praw_client_secret (environment or praw.ini)",
    403: "Reddit answered 403 Forbidden: the subreddit is private, quarantined or banned, or the app may not read it",
    404: "Reddit answered 404 Not Found: check the subreddit's name",
}


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


def search_terms(cfg: SourcesConfig) -> list[str]:
    """The terms a recipe searches for: its own, else every EXPRESS lexicon term; none for a listing."""
    if cfg.listing != "search":
        return []
    from schemas.lexicon import lexicon_terms

    return list(cfg.terms) or sorted(lexicon_terms())


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


def query_digest(record: dict[str, Any]) -> str:
    """The short hash that names a query's files (`praw-<digest>...`)."""
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:12]


def _no_retry_strategy() -> Any:
    from prawcore.sessions import FiniteRetryStrategy

    @dataclass(frozen=True)
    class NoRetry(FiniteRetryStrategy):
        DEFAULT_RETRIES: ClassVar[int] = 0  # no retry, and so no sleep before the first try either
        retries: int = 0

    return NoRetry


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
    switch_off_retries(reddit)
    return reddit


# The praw and prawcore versions whose clients keep their retry strategy where switch_off_retries sets it.
KNOWN_RETRY_INSIDES = {"praw": ("8.0.3",), "prawcore": ("4.0.0",)}


def switch_off_retries(reddit: Any) -> None:
    """prawcore retries a failed request itself, sleeping first; the pull has its own backoff and
    checkpoints (sources/praw_pulls.py). prawcore has no public switch, so the strategy is set on
    its sessions' own attribute, and only for the versions known to keep it there: any other
    version is refused, loudly, rather than retried twice without a word."""
    import praw
    import prawcore

    versions = {"praw": praw.__version__, "prawcore": prawcore.__version__}
    unknown = [f"{name} {v}" for name, v in versions.items() if v not in KNOWN_RETRY_INSIDES[name]]
    if unknown:
        raise RuntimeError(f"{', '.join(unknown)}: express switches off prawcore's own retries only for "
                           f"praw {', '.join(KNOWN_RETRY_INSIDES['praw'])} with prawcore "
                           f"{', '.join(KNOWN_RETRY_INSIDES['prawcore'])} (sources/praw_source.py); "
                           "install those (constraints.txt) or check the new version and add it")
    no_retry = _no_retry_strategy()
    for core in (reddit._read_only_core, reddit._authorized_core):
        if core is not None:
            core._retry_strategy_class = no_retry


def _plain(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    out = {k: data.get(k) for k in keys if k in data}
    author = data.get("author")
    out["author"] = str(author) if author is not None else "[deleted]"
    out["subreddit"] = str(data.get("subreddit") or "")
    return out


def item_rows(submission: Any, include_comments: bool) -> list[dict[str, Any]]:
    """A submission (and its comments, if asked) as dump-shaped dicts, all fetched before any is kept."""
    now = int(time.time())
    rows = [{**_plain(vars(submission), SUBMISSION_FIELDS), "retrieved_on": now, "_express_source": "praw"}]
    if include_comments:
        submission.comments.replace_more(limit=0)
        for c in submission.comments.list():
            rows.append({**_plain(vars(c), COMMENT_FIELDS), "retrieved_on": now, "_express_source": "praw"})
    return rows


@dataclass(frozen=True)
class Mark:
    """What earlier pulls handed on for a query: its newest `created_utc` and the ids at that second."""

    created_utc: float
    ids: frozenset[str]

    def covers(self, created: float, item_id: str) -> bool:
        return created < self.created_utc or (created == self.created_utc and item_id in self.ids)


@dataclass
class Progress:
    """How far a pull got through one query: the listing cursor, items handed on (`new`, with their
    ids) and items skipped as handed on by an earlier pull (`seen`)."""

    after: str | None = None
    new: int = 0
    seen: int = 0
    done: bool = False
    stopped_at_mark: bool = False
    ids: set[str] = field(default_factory=set)


HandOn = Callable[[Query, Progress, str, float, list[dict[str, Any]]], None]


def backoff_delay(cfg: SourcesConfig, attempt: int, retry_after: float | None = None) -> float:
    """The wait before retry `attempt` (1-based): doubling from `backoff_seconds`, capped."""
    delay = cfg.backoff_seconds * 2 ** (attempt - 1)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(cfg.max_backoff_seconds, delay)


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    value = getattr(response, "headers", {}).get("retry-after") if response is not None else None
    return float(value) if value and str(value).isdigit() else None


class Scraper:
    """Reads each query's listing from its cursor, skipping what earlier pulls handed on, and gives every
    new item to `hand_on` (which must keep it durably before it returns)."""

    def __init__(self, reddit: Any, cfg: SourcesConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.reddit, self.cfg, self.sleep = reddit, cfg, sleep

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

    def _backoff(self, q: Query, attempt: int, exc: Exception, where: str) -> None:
        if attempt > self.cfg.max_retries:
            raise ScrapeError(f"{q.key}: gave up after {self.cfg.max_retries} retries ({type(exc).__name__}); "
                              f"progress is in {where}") from exc
        self.sleep(backoff_delay(self.cfg, attempt, _retry_after(exc)))

    def run_query(self, q: Query, p: Progress, mark: Mark | None, hand_on: HandOn, where: str = "the checkpoint") -> None:
        """Read `q` until its listing ends, `limit` items were looked at, or (newest first) the mark."""
        from prawcore.exceptions import (InvalidToken, OAuthException, RequestException, ResponseException,
                                         ServerError, TooManyRequests)

        attempt = 0
        while not p.done:
            try:
                for submission in self._listing(q, p.after, max(self.cfg.limit - p.new - p.seen, 0)):
                    if p.new + p.seen >= self.cfg.limit:
                        break
                    item_id = submission.id
                    created = float(getattr(submission, "created_utc", 0) or 0)
                    if item_id in p.ids:  # a shifting listing (hot) showed it again after a resume
                        p.after = f"t3_{item_id}"
                        continue
                    if mark is not None and mark.covers(created, item_id):
                        p.after, p.seen = f"t3_{item_id}", p.seen + 1
                        if q.sort == "new" and created < mark.created_utc:  # all that follows is older
                            p.stopped_at_mark = True
                            break
                        continue
                    rows = item_rows(submission, self.cfg.include_comments)
                    p.after, p.new = f"t3_{item_id}", p.new + 1
                    p.ids.add(item_id)
                    hand_on(q, p, item_id, created, rows)
                    attempt = 0
                p.done = True
            except (TooManyRequests, ServerError, RequestException, InvalidToken) as exc:
                attempt += 1
                self._backoff(q, attempt, exc, where)
            except (ResponseException, OAuthException) as exc:
                raise _refusal(q, exc, where) from None


    def info(self, fullnames: list[str]) -> dict[str, dict[str, Any]]:
        """fullname -> the item as Reddit answers for it now (dump-shaped), for each it still
        knows; asked INFO_BATCH fullnames a call (Reddit's limit for /api/info), with the pull's
        retries and backoff, and praw's own pacing by Reddit's rate-limit headers."""
        from prawcore.exceptions import (InvalidToken, OAuthException, RequestException, ResponseException,
                                         ServerError, TooManyRequests)

        q, out = Query("info", "all"), {}
        for start in range(0, len(fullnames), INFO_BATCH):
            batch, attempt = fullnames[start:start + INFO_BATCH], 0
            while True:
                try:
                    found = list(self.reddit.info(fullnames=batch))
                    break
                except (TooManyRequests, ServerError, RequestException, InvalidToken) as exc:
                    attempt += 1
                    self._backoff(q, attempt, exc, "no takedown written")
                except (ResponseException, OAuthException) as exc:
                    raise _refusal(q, exc, "no takedown written") from None
            for thing in found:
                fields = COMMENT_FIELDS if thing.fullname.startswith("t1_") else SUBMISSION_FIELDS
                out[thing.fullname] = _plain(vars(thing), fields)
        return out


def _refusal(q: Query, exc: Exception, where: str) -> ScrapeError:
    """A status no retry changes, as one line naming the query (a redirect is how Reddit answers an
    unknown subreddit: a 404; the token endpoint's refusal is the credentials'); anything else as
    the ScrapeError of an unexpected answer."""
    from prawcore.exceptions import OAuthException, Redirect

    response = getattr(exc, "response", None)
    status = 404 if isinstance(exc, Redirect) else getattr(response, "status_code", None)
    if isinstance(exc, OAuthException) or "/access_token" in str(getattr(response, "url", "")):
        status = 401
    reason = REFUSALS.get(status)
    if reason is None:
        return ScrapeError(f"{q.key}: Reddit answered {status or type(exc).__name__}; progress is in {where}")
    return Refused(f"{q.key}: {reason}; progress is in {where}" if status != 401 else reason)
