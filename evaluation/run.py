"""Evaluate a predictor on one split of a published release and store the run.

A run folder holds config.json (what ran, status), predictions.jsonl (one row per example: gold,
answer, parsed, ranked answers, usage), metrics.json (the EXPRESS metrics, exactly what
`express score` prints for predictions.jsonl) and analysis.json (the extended measures), so
every number can be traced back to the answers that produced it. Examples stream in batches.

The runner is the only code that reads the evaluated split's gold words: the predictor gets
`Item`s (evaluation/predictors/base.py) and is fitted on the train split's `TrainItem`s only.
"""
from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from itertools import islice
from pathlib import Path
from typing import Any

from common.files import write_json
from common.versioning import code_version
from evaluation.live.cutoffs import resolve_cutoff
from evaluation.live.sample import draw_rows
from evaluation.scoring.parsing import parse_answer
from evaluation.predictors.base import Item, Prediction, PredictorOptions, TrainItem
from common.progress import Progress
from evaluation.predictors.registry import PredictorError, load, resolve, uses_prompts
from evaluation.run_numbers import derive_numbers
from evaluation.live.window import Window, check_window
from schemas.config import LiveFields, utc_seconds
from schemas.lexicon import Decomposition, data_versions, default_decomposition
from warehouse.layout import Warehouse
from warehouse.releases.release import Release

BATCH = 32
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


@dataclass(frozen=True)
class EvalRun:
    run_id: str
    path: Path
    metrics: dict[str, Any]
    window: str | None = None  # the window's label, when the run scored one


def load_release(warehouse: Warehouse, version: str) -> Release:
    return Release.find(warehouse, version)


def cache_dir(warehouse: Warehouse) -> Path:
    """Model responses are cached per warehouse, shared by all runs that ask the same thing."""
    return warehouse.response_cache


def _batches(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    while batch := list(islice(rows, size)):
        yield batch


def split_rows(release: Release, split: str) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(release.split_file(split)).metadata.num_rows


def train_items(release: Release) -> Iterator[TrainItem]:
    """What fitting may read: the train split, with its gold words."""
    return (TrainItem.from_row(r) for r in release.rows("train"))


def _as_predictions(out: Sequence[Any], n: int, name: str) -> list[Prediction]:
    """A plugin may answer with Predictions or plain answer strings; one per item, always."""
    out = list(out)
    if len(out) != n:
        raise PredictorError(f"predictor '{name}' returned {len(out)} answers for {n} items")
    return [p if isinstance(p, Prediction) else Prediction(None if p is None else str(p)) for p in out]


def _predict(runner: Any, items: list[Item], name: str) -> list[Prediction]:
    if callable(getattr(runner, "predict_many", None)):
        return _as_predictions(runner.predict_many(items), len(items), name)
    return _as_predictions([runner.predict(i) for i in items], len(items), name)


@dataclass(frozen=True)
class EvalRequest:
    """One run asked of `evaluate_release`: the predictor (a name, a plugin's or PKG.MODULE:CLASS),
    the split it scores, its options (the prompt setting and the model among them), the live
    fields (window, cutoff, probe), the first `limit` rows only, and the bootstrap's resamples."""

    predictor: str = "most-frequent"
    split: str = "test"
    options: PredictorOptions = field(default_factory=PredictorOptions)
    live: LiveFields = field(default_factory=LiveFields)
    limit: int | None = None
    bootstrap: int = 1000

    def params(self) -> dict[str, Any]:
        """The request as plain values (what a flow run records as its parameters): never the key,
        which the predictor reads from the environment."""
        return {"predictor": self.predictor, "split": self.split, "options": self.options.public(),
                "live": asdict(self.live), "limit": self.limit, "bootstrap": self.bootstrap}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> EvalRequest:
        options = {k: v for k, v in (params.get("options") or {}).items() if k != "api_key"}
        return cls(params.get("predictor", cls.predictor), params.get("split", cls.split), PredictorOptions(**options),
                   LiveFields(**(params.get("live") or {})), params.get("limit"), params.get("bootstrap", cls.bootstrap))


def evaluate_release(warehouse: Warehouse, version: str, request: EvalRequest = EvalRequest(),
                     decomposition: Decomposition | None = None) -> EvalRun:
    release = load_release(warehouse, version)
    predictor, split, limit, live = request.predictor, request.split, request.limit, request.live
    if split == "train":
        raise ValueError("predictors are fitted on the train split; evaluate on validation or test")
    if split not in release.split_files():
        raise ValueError(f"release {release.dataset}/{release.version} has no '{split}' split "
                         f"(has: {', '.join(release.split_files())})")
    dec = decomposition or default_decomposition()
    opts = replace(request.options, cache_dir=request.options.cache_dir or str(cache_dir(warehouse)))
    window = Window.parse(live.posted_after, live.posted_before)
    in_window = check_window(release.split_file(split), window, f"{release.release_id} {split}")  # before any work
    cutoff = resolve_cutoff(opts.model, live.cutoff, live.cutoffs_file)
    if live.sample and limit is not None:
        raise ValueError("a run takes a sample or the first rows (a limit), not both")
    sample = draw_rows(window.rows(release.rows(split)), live.sample, opts.seed,
                       utc_seconds(cutoff["cutoff"]) if cutoff["cutoff"] else None) if live.sample else None
    ref = resolve(predictor)
    cls = load(ref)
    prompted = uses_prompts(cls)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", predictor)[:60]
    run_id = f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{slug}-{uuid.uuid4().hex[:6]}"
    paths = warehouse.evaluation(run_id)
    out = paths.root
    out.mkdir(parents=True)
    config: dict[str, Any] = {
        "run_id": run_id, "release": f"{release.dataset}/{release.version}", "split": split,
        "predictor": predictor, "predictor_class": ref.target, "predictor_source": ref.source,
        "setting": opts.setting if prompted else "-", "prompt_variant": opts.prompt_variant if prompted else "-",
        "temperature": opts.temperature if prompted else None, "model": opts.model,
        "limit": limit, "sample": sample.to_json() if sample else None,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "status": "running", "options": opts.public(), "code_version": code_version(),
        "decomposition_version": data_versions()["decomposition"]["version"],
        "window": window.to_json(), "window_rows": in_window, "cutoff": cutoff, "cutoff_min_rows": live.cutoff_min_rows,
        "probe": live.probe or None, "probe_rows": live.probe_rows or None, "bootstrap": request.bootstrap,
    }
    write_json(paths.config, config)
    usage: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    first_error: list[str] = []
    try:  # a model that cannot be loaded, a server that is down: a failed run that says why
        runner = cls(opts)
        if callable(getattr(runner, "fit", None)):
            runner.fit(train_items(release))
        rows_asked = sample.drawn if sample else min(in_window, limit if limit is not None else 1 << 62)
        progress = Progress("evaluate", rows_asked)
        if hasattr(runner, "progress"):
            runner.progress = progress  # ticks per row; others advance per batch
        rows = window.rows(release.rows(split))
        rows = sample.rows(rows) if sample else islice(rows, limit)
        with open(paths.predictions, "w", encoding="utf-8") as fh:
            for batch in _batches(rows, max(BATCH, 4 * opts.concurrency)):  # keep every worker busy
                items = [Item.from_row(r) for r in batch]  # all the predictor sees of this batch
                done = progress.done
                for row, pred in zip(batch, _predict(runner, items, predictor)):
                    parsed = parse_answer(pred.output)
                    gold = list(row["surfaces"])
                    record: dict[str, Any] = {"post_id": row["post_id"], "segment_index": row["segment_index"],
                                              "created_utc": row["created_utc"], "surfaces": gold,
                                              "output": pred.output, "parsed": parsed}
                    for key in ("ranked", "usage", "error", "shots"):
                        if getattr(pred, key):
                            record[key] = getattr(pred, key)
                    if pred.cached:
                        record["cached"] = True
                    counts["cached"] += pred.cached
                    counts["errors"] += pred.error is not None
                    if pred.error is not None and not first_error:
                        first_error.append(pred.error)
                    for key in USAGE_KEYS:
                        usage[key] += (pred.usage or {}).get(key, 0) * (not pred.cached)
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")
                fh.flush()
                progress.reach(done + len(batch))
        if progress.done and counts["errors"] == progress.done:  # nothing to score: a failed run, not zeros
            raise PredictorError(f"no answer came back: all {progress.done:,} requests of '{predictor}' failed "
                                 f"(the first: {first_error[0]}); the run is kept as failed in {out}")
    except BaseException as exc:
        # a stop (Ctrl-C, SIGTERM: as raised here, or as an orchestrator re-raises it) is no
        # Exception; the answers it leaves are cached, so a rerun asks only for the rest
        stopped = not isinstance(exc, Exception)
        config.update(status="interrupted" if stopped else "failed", error=f"{type(exc).__name__}: {exc}"[:500])
        write_json(paths.config, config)
        raise
    seconds = progress.seconds
    throughput = {"seconds": round(seconds, 3), "rows_per_s": progress.done / seconds if seconds else 0.0,
                  "new_completion_tokens_per_s": usage["completion_tokens"] / seconds if seconds else 0.0}
    if seconds >= progress.every:  # a run long enough to have shown progress says how it ended
        progress.close()
    # Scored from the stored file, as `express score` does (the two can never disagree), and as a
    # rescored run is (evaluation/run_numbers.py)
    metrics = derive_numbers(out, dec, kept={"usage_new_tokens": dict(usage), "answers_from_cache": counts["cached"],
                                             "request_errors": counts["errors"], "throughput": throughput})
    details = runner.describe() if callable(getattr(runner, "describe", None)) else {}
    config.update(status="complete", predictor_details=details,
                  finished=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    write_json(paths.config, config)
    return EvalRun(run_id, out, metrics, None if window.everything else window.label)
