"""Incremental praw pulls for scheduled rebuilds: each pull writes only the items that are newer than
the stored checkpoint into a new, deterministically numbered scrape file.

Files of one query (its parameters hashed, as `scrape_to_jsonl` names them) in the pull folder:
`praw-<hash>.since.json` (the stored checkpoint: per query, the newest `created_utc` handed on and
the ids at that second, plus the number of committed pulls) and, per pull k,
`praw-<hash>-<k:04d>.jsonl` with its `.query.json` sidecar and a `.checkpoint.json` that lets an
interrupted pull resume the same file. A pull commits (advances `since.json`) only after every
query finished; one with nothing new leaves no file behind. Credentials are never written.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemas.config import SourcesConfig
from sources.praw_source import Checkpoint, PrawScraper, make_reddit, query_record


@dataclass
class Since:
    """The stored checkpoint of one query's pulls: what has been handed on before, per Reddit query."""

    path: Path
    pulls: int = 0
    queries: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> "Since":
        p = Path(path)
        if not p.is_file():
            return cls(p)
        try:
            data = json.loads(p.read_text())
            return cls(p, int(data["pulls"]), dict(data["queries"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{p}: not a praw pull checkpoint ({exc}); restore it or delete the pull files") from exc

    def created(self, key: str) -> float:
        mark = self.queries.get(key)
        return float(mark["created_utc"]) if mark else float("-inf")

    def seen(self, key: str, created: float, item_id: str) -> bool:
        """Handed on by an earlier pull: older than the query's newest item, or at its second with a known id."""
        mark = self.queries.get(key)
        if mark is None:
            return False
        return created < mark["created_utc"] or (created == mark["created_utc"] and item_id in mark["ids"])

    def commit(self, pull_state: dict[str, dict[str, Any]], pulls: int) -> None:
        """Advance every query's mark to the newest item a finished pull handed on; save atomically."""
        for key, st in pull_state.items():
            newest = st.get("newest")
            if not newest or newest.get("created_utc") is None:
                continue
            mark = self.queries.get(key)
            if mark is None or newest["created_utc"] > mark["created_utc"]:
                self.queries[key] = {"created_utc": newest["created_utc"], "ids": sorted(newest["ids"])}
            elif newest["created_utc"] == mark["created_utc"]:
                mark["ids"] = sorted(set(mark["ids"]) | set(newest["ids"]))
        self.pulls = pulls
        tmp = self.path.with_name(".tmp-" + self.path.name)
        tmp.write_text(json.dumps({"pulls": self.pulls, "queries": self.queries}, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path)


@dataclass
class PullResult:
    """What one pull did: its new file (None when nothing was new), every committed pull file, counts."""

    path: Path | None
    files: list[Path]
    new_items: int
    rows: int
    skipped_seen: int
    queries: int
    query: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path) if self.path else None, "files": [str(f) for f in self.files],
                "new_items": self.new_items, "rows": self.rows, "skipped_seen": self.skipped_seen,
                "queries": self.queries, "query": self.query}


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def pull_new_to_jsonl(cfg: SourcesConfig, terms: list[str], out_dir: str | Path, reddit: Any | None = None,
                      sleep: Callable[[float], None] = time.sleep,
                      log: Callable[[str], None] = _stderr) -> PullResult:
    """Scrape only what is newer than the stored checkpoint into `praw-<hash>-<k:04d>.jsonl`."""
    params = query_record(cfg, terms)
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    since = Since.load(out / f"praw-{digest}.since.json")
    k = since.pulls + 1
    path = out / f"praw-{digest}-{k:04d}.jsonl"
    checkpoint = Checkpoint.load(path.with_suffix(".checkpoint.json"))
    resumed = " (resuming an interrupted pull)" if checkpoint.state else ""
    log(f"[scrape] pull {k} of {params['listing']} {','.join(params['subreddits'])} -> {path.name}{resumed}; "
        f"{len(since.queries)} queries have a checkpoint")
    scraper = PrawScraper(reddit or make_reddit(cfg), cfg, checkpoint, sleep, since=since, log=log)
    with open(path, "a", encoding="utf-8") as fh:
        for row in scraper.run(terms):
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
    with open(path, "rb") as fh:
        rows = sum(1 for _ in fh)
    new = sum(s["n"] for s in checkpoint.state.values())
    skipped = sum(s.get("skipped", 0) for s in checkpoint.state.values())
    if rows == 0:  # nothing new: leave no file, so the rebuild sees no new input
        for p in (path, checkpoint.path):
            p.unlink(missing_ok=True)
        new_path = None
    else:
        sidecar = {**params, "pull": k, "new_items": new, "skipped_seen": skipped}
        path.with_suffix(".query.json").write_text(json.dumps(sidecar, indent=1) + "\n")
        since.commit(checkpoint.state, k)
        new_path = path
    files = [out / f"praw-{digest}-{i:04d}.jsonl" for i in range(1, since.pulls + 1)]
    missing = [f.name for f in files if not f.is_file()]
    if missing:  # their items are behind the checkpoint and would never be read again
        raise FileNotFoundError(f"{out}: committed pull file(s) {missing} are gone; restore them, or delete "
                                f"{since.path.name} and praw-{digest}-*.* to scrape afresh")
    log(f"[scrape] pull {k}: {new:,} new items ({rows:,} rows) -> "
        f"{new_path.name if new_path else 'no new file'}; {skipped:,} skipped as already seen")
    return PullResult(new_path, files, new, rows, skipped, len(checkpoint.state), params)
