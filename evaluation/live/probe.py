"""The memorization probe of a stored run (`--probe min-k`, `continuation`, or `memorization` for
both): Min-K% Prob of each scored row's unmasked text, and a continuation probe (the first half of the
text shown, the answer compared with the true second half); per side of the cutoff and per month, with
the AUC of Min-K% for telling rows posted before the cutoff from rows posted after it. `--probe-rows N`
probes a sample of the run's rows (evaluation/live/sample.py); the time left is estimated as it goes
(evaluation/live/probe_time.py).

Which text is shown: memorization is a property of the post as it was published, so the probe
reads the unmasked text (a text full of <mask> tokens was never anyone's training data). It never
reaches an answer the model is scored on: it runs only after every answer of the run (of every cell,
in a sweep) is stored and scored, in requests of their own that share no conversation with the
scoring prompts, and never through the scoring requests' cache entries. A model behind an API keeps
no state between requests, so a later run is asked as if no probe had run.
"""
from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.files import write_atomic
from common.parquet import iter_tuples
from evaluation.live.memorization import halves, load_probe_settings, longest_common_run, min_k_prob, ngram_overlap, words
from evaluation.predictors.base import PredictorOptions
from evaluation.live.probe_models import LogprobsUnavailable, probe_model
from common.progress import Progress, duration
from evaluation.live.probe_time import ProbeEstimate, probe_order
from evaluation.live.sample import draw_rows, key_of
from evaluation.run_numbers import PROBE_FACTS, derive_numbers, kept_facts
from schemas.config import BOTH_PROBES, PROBE_KINDS, probe_kinds, utc_seconds
from warehouse.layout import EvaluationPaths, Warehouse
from warehouse.releases.release import Release

PROBED = ("openai-compatible", "hf-chat")  # predictors whose model the probe can ask
CALIBRATION = "one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen, fourteen"


def check_probe(predictor: str, probe: str) -> None:
    """Before any work: the probe needs a language model to ask."""
    if probe and predictor not in PROBED:
        raise ValueError(f"--probe {probe} asks the model itself: it needs --predictor {' or '.join(PROBED)}, "
                         f"not '{predictor}'")


def check_alignment(model: Any) -> None:
    """A server that echoes each token with the log-probability of the *next* position (llama-cpp-python
    0.3.x for a model that adds no BOS token) gives numbers that look right and mean nothing. On a
    counting text the model predicts well, each position's best guess must be its own token."""
    lp = model.echo_raw(CALIBRATION, retries=False)
    tokens, tops = lp.tokens, lp.top_logprobs or []
    best = [max(t, key=t.get) if t else None for t in tops]
    own = sum(best[i] == tokens[i] for i in range(1, len(tokens)))
    nxt = sum(best[i] == tokens[i + 1] for i in range(1, len(tokens) - 1))
    if nxt > own:
        raise LogprobsUnavailable("its echoed logprobs are one token late (each token is given the log-probability "
                                  "of the next position: llama-cpp-python does this for a model that adds no BOS "
                                  "token; start it with --kv_overrides tokenizer.ggml.add_bos_token=bool:true)")


def _texts(release: Release, split: str, keys: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    found = {}
    for post_id, segment, text in iter_tuples(release.split_file(split), ["post_id", "segment_index", "text"]):
        if (post_id, int(segment)) in keys:
            found[(post_id, int(segment))] = text
    return found


def continuation(model: Any, settings: Any, text: str) -> dict[str, Any]:
    """Show the first half of the text; compare the answer with the second half the model never saw."""
    shown, truth = halves(text)
    answer = model.answer(settings.messages(shown), settings.budget(len(truth.split())))
    said, true = words(answer), words(truth)
    return {"words_shown": len(shown.split()), "continuation": answer,
            "longest_common_run": longest_common_run(said, true),
            f"overlap_{settings.overlap_words}": ngram_overlap(said, true, settings.overlap_words)}


def probe_name(kinds: tuple[str, ...]) -> str:
    """How a probe is recorded: "memorization" for both probes, else the one asked."""
    return BOTH_PROBES if kinds == PROBE_KINDS else ",".join(kinds)


def probe_run(warehouse: Warehouse, run_dir: str | Path) -> dict[str, Any]:
    """Probe a complete run's rows (or `probe_rows` of them, drawn as a sample) with the probes its
    config asks; writes probe.jsonl and `probe` in analysis.json, returns the summary."""
    run = Path(run_dir)
    paths = EvaluationPaths(Path(run))
    config = json.loads(paths.config.read_text())
    if config.get("status") != "complete":
        raise ValueError(f"probe: run {run.name} is not complete")
    kinds = probe_kinds(config.get("probe") or BOTH_PROBES)  # a run stored before the probes had names: both
    check_probe(config["predictor"], probe_name(kinds))
    settings = load_probe_settings()
    options = PredictorOptions(**{**config["options"], "cache_dir": str(warehouse.response_cache)})
    model = probe_model(config["predictor"], options)
    unavailable = None
    if "min-k" in kinds and hasattr(model, "echo_raw"):
        try:
            check_alignment(model)
        except LogprobsUnavailable as exc:
            unavailable = str(exc)
    preds = [json.loads(line) for line in paths.predictions.read_text().splitlines() if line.strip()]
    sample = None
    if config.get("probe_rows"):
        cutoff = (config.get("cutoff") or {}).get("cutoff")
        sample = draw_rows(preds, config["probe_rows"], options.seed, utc_seconds(cutoff) if cutoff else None)
        preds = list(sample.rows(preds))
    release = Release.find(warehouse, config["release"])
    texts = _texts(release, config["split"], {key_of(p) for p in preds})
    rows, unavailable, clock = probe_rows(model, settings, [(p, texts[key_of(p)]) for p in preds], kinds, unavailable)
    if unavailable and "min-k" in kinds:
        rows = [{**r, "min_k_prob": None} for r in rows]
        ran = "the continuation probe ran" if "continuation" in kinds else "no other probe was asked"
        print(f"[probe] Min-K% Prob skipped: {model.describe()['backend']} model '{options.model}' gives no "
              f"log-probabilities of a text's tokens ({unavailable}); {ran}", file=sys.stderr, flush=True)
    facts = {"probe": probe_name(kinds), "settings": {"version": settings.version, "sha256": settings.sha256,
                                                      "min_k_percent": settings.min_k_percent,
                                                      "overlap_words": settings.overlap_words},
             "model": model.describe(), "min_k_unavailable": unavailable if "min-k" in kinds else None,
             "sample": sample.to_json() if sample else None, "timing": clock.summary()}
    return store_probe(run, rows, facts)


def probe_work(settings: Any, text: str, kinds: tuple[str, ...]) -> dict[str, float]:
    """A row's cost measures, per probe asked: the words Min-K% scores, the tokens a continuation may take."""
    work = {"min-k": float(len(text.split())), "continuation": float(settings.budget(len(halves(text)[1].split())))}
    return {k: work[k] for k in kinds}


def probe_rows(model: Any, settings: Any, items: list[tuple[dict[str, Any], str]], kinds: tuple[str, ...],
               unavailable: str | None = None, clock: Callable[[], float] = time.perf_counter,
               ) -> tuple[list[dict[str, Any]], str | None, ProbeEstimate]:
    """The probe rows of (prediction row, unmasked text) pairs, in their order, with why Min-K% was
    unavailable (if it was) and the probe's clock; the time left is estimated from the first rows asked
    (the shortest, middle and longest text: evaluation/live/probe_time.py) and printed."""
    asked = tuple(k for k in kinds if not (k == "min-k" and unavailable))
    order = probe_order([len(text.split()) for _, text in items])
    estimate = ProbeEstimate([probe_work(settings, items[i][1], asked) for i in order], clock)
    progress = Progress("probe", len(items), eta=estimate.left)
    rows: dict[int, dict[str, Any]] = {}
    for i in order:
        p, text = items[i]
        row: dict[str, Any] = {"post_id": p["post_id"], "segment_index": p["segment_index"],
                               "created_utc": p["created_utc"]}
        if "min-k" in kinds:
            row["min_k_prob"] = None
        if "continuation" in kinds:
            row.update(estimate.timed("continuation", model, lambda: continuation(model, settings, text)))
        if "min-k" in kinds and unavailable is None:
            try:
                lp = estimate.timed("min-k", model, lambda: model.token_logprobs(text))
                row.update(min_k_prob=min_k_prob(lp, settings.min_k_percent), tokens_scored=len(lp))
            except LogprobsUnavailable as exc:  # said once, for the whole run
                unavailable = str(exc)
                estimate.drop("min-k")
        rows[i] = row
        first = estimate.row_done()
        if first:
            print(f"[probe] {first['after_rows']}/{len(items)} rows in {duration(first['seconds_so_far'])}; "
                  f"estimated {duration(first['estimate_seconds'])} in all (each probe's seconds fitted to the "
                  f"words and answer tokens of the rows so far)", file=sys.stderr, flush=True)
        progress.tick()
    if progress.seconds >= progress.every:
        progress.close()
    return [rows[i] for i in range(len(items))], unavailable, estimate


def store_probe(run_dir: str | Path, rows: list[dict[str, Any]], facts: dict[str, Any]) -> dict[str, Any]:
    """Write the probe's rows (probe.jsonl) and derive the run's numbers again with them: the summary
    comes from the stored rows, as a rescored run's does. `facts`: how the probe ran (PROBE_FACTS)."""
    paths = EvaluationPaths(Path(run_dir))
    write_atomic(paths.probe, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
    derive_numbers(paths.root, kept={**kept_facts(paths.root), "probe": {k: facts.get(k) for k in PROBE_FACTS}})
    return json.loads(paths.analysis.read_text())["probe"]
