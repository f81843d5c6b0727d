"""The memorization probe of a stored run (`--probe memorization`): Min-K% Prob of each scored row's
unmasked text, and a continuation probe (the first half of the text shown, the answer compared with
the true second half); per side of the cutoff and per month, with the AUC of Min-K% for telling rows
posted before the cutoff from rows posted after it.

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
from pathlib import Path
from typing import Any

from common.files import write_atomic
from common.parquet import iter_tuples
from evaluation.live.memorization import halves, load_probe_settings, longest_common_run, min_k_prob, ngram_overlap, words
from evaluation.predictors.base import PredictorOptions
from evaluation.live.probe_models import LogprobsUnavailable, probe_model
from common.progress import Progress
from evaluation.run_numbers import PROBE_FACTS, derive_numbers, kept_facts
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


def probe_run(warehouse: Warehouse, run_dir: str | Path) -> dict[str, Any]:
    """Probe a complete run's rows; writes probe.jsonl and `probe` in analysis.json, returns the summary."""
    run = Path(run_dir)
    paths = EvaluationPaths(Path(run))
    config = json.loads(paths.config.read_text())
    if config.get("status") != "complete":
        raise ValueError(f"probe: run {run.name} is not complete")
    check_probe(config["predictor"], "memorization")
    settings = load_probe_settings()
    options = PredictorOptions(**{**config["options"], "cache_dir": str(warehouse.response_cache)})
    model = probe_model(config["predictor"], options)
    unavailable = None
    if hasattr(model, "echo_raw"):
        try:
            check_alignment(model)
        except LogprobsUnavailable as exc:
            unavailable = str(exc)
    preds = [json.loads(line) for line in paths.predictions.read_text().splitlines() if line.strip()]
    release = Release.find(warehouse, config["release"])
    texts = _texts(release, config["split"], {(p["post_id"], int(p["segment_index"])) for p in preds})
    progress = Progress("probe", len(preds))
    rows = []
    for p in preds:
        text = texts[(p["post_id"], int(p["segment_index"]))]
        row = {"post_id": p["post_id"], "segment_index": p["segment_index"], "created_utc": p["created_utc"],
               "min_k_prob": None, **continuation(model, settings, text)}
        if unavailable is None:
            try:
                lp = model.token_logprobs(text)
                row.update(min_k_prob=min_k_prob(lp, settings.min_k_percent), tokens_scored=len(lp))
            except LogprobsUnavailable as exc:  # said once, for the whole run
                unavailable = str(exc)
        rows.append(row)
        progress.tick()
    if progress.seconds >= progress.every:
        progress.close()
    if unavailable:
        rows = [{**r, "min_k_prob": None} for r in rows]
        print(f"[probe] Min-K% Prob skipped: {model.describe()['backend']} model '{options.model}' gives no "
              f"log-probabilities of a text's tokens ({unavailable}); the continuation probe ran", file=sys.stderr,
              flush=True)
    facts = {"probe": "memorization", "settings": {"version": settings.version, "sha256": settings.sha256,
                                                   "min_k_percent": settings.min_k_percent,
                                                   "overlap_words": settings.overlap_words},
             "model": model.describe(), "min_k_unavailable": unavailable}
    return store_probe(run, rows, facts)


def store_probe(run_dir: str | Path, rows: list[dict[str, Any]], facts: dict[str, Any]) -> dict[str, Any]:
    """Write the probe's rows (probe.jsonl) and derive the run's numbers again with them: the summary
    comes from the stored rows, as a rescored run's does. `facts`: how the probe ran (PROBE_FACTS)."""
    paths = EvaluationPaths(Path(run_dir))
    write_atomic(paths.probe, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8"))
    derive_numbers(paths.root, kept={**kept_facts(paths.root), "probe": {k: facts.get(k) for k in PROBE_FACTS}})
    return json.loads(paths.analysis.read_text())["probe"]
