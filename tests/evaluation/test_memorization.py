"""The memorization probe's measures (Min-K% Prob, the continuation's common word runs), and the probe
of a run against a chat-only server: Min-K% said to be unavailable in one line, the continuation
probe run anyway, and no probe request sent before every answer of the run was in."""
import json
from pathlib import Path

import pytest

from evaluation.live.memorization import halves, load_probe_settings, longest_common_run, min_k_prob, ngram_overlap, words
from evaluation.live.probe import probe_run
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from evaluation.live.window import iso
from evaluation.predictors.base import PredictorOptions
from schemas.config import LiveFields
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse

LOGPROBS = [-0.1, -3.0, -0.5, -7.0, -0.2, -2.0, -0.05, -4.0, -1.0, -0.3]


def _test_rows(tiny_release) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(Path(tiny_release["path"]) / "data" / "test-00000-of-00001.parquet").to_pylist()


def test_min_k_prob_is_the_mean_of_the_least_likely_tokens():
    assert min_k_prob(LOGPROBS, 100) == pytest.approx(sum(LOGPROBS) / len(LOGPROBS))
    assert min_k_prob(LOGPROBS, 1) == min(LOGPROBS)  # at least one token
    lowest = sorted(LOGPROBS)
    assert min_k_prob(LOGPROBS, 30) == pytest.approx(sum(lowest[:3]) / 3)
    assert min_k_prob(LOGPROBS, 10) < min_k_prob(LOGPROBS, 20) < min_k_prob(LOGPROBS, 50)
    assert min_k_prob([], 20) is None
    assert load_probe_settings().min_k_percent == 20  # Shi et al.'s best k


def test_the_continuation_measures_count_the_words_shared_with_the_true_text():
    truth = words("The bus was late again so I walked the whole way home in the rain, and my shoes are still wet today.")
    noise = words("Honestly nobody could have guessed any of that from here")
    copied = truth[4:16]
    assert longest_common_run(noise + copied + noise, truth) == len(copied)
    assert longest_common_run(noise, truth) == 0
    assert ngram_overlap(truth, truth, 8) == 1.0 and ngram_overlap(noise, truth, 8) == 0.0
    answer = copied + noise  # its 8-word runs that lie wholly inside the copied stretch are found
    assert ngram_overlap(answer, truth, 8) == pytest.approx((len(copied) - 8 + 1) / (len(answer) - 8 + 1))
    assert ngram_overlap(truth[:5], truth, 8) is None  # too short to hold one
    shown, rest = halves("one two three four five six seven")
    assert shown.split() + rest.split() == "one two three four five six seven".split() and len(shown.split()) == 3


def test_a_chat_only_server_gets_the_continuation_probe_after_every_answer_and_min_k_is_said_unavailable(
        tiny_release, capsys):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:  # it answers chat completions and nothing else (404), as OpenAI's chat models
        run = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", limit=4, bootstrap=0,
            options=PredictorOptions(model="m-probe-chat-only", base_url=server.base_url),
            live=LiveFields(probe="memorization", cutoff=iso(1700000024), cutoff_min_rows=1)))
        scored = len(server.requests)
        summary = probe_run(wh, run.path)
        probes = server.requests[scored:]
    err = capsys.readouterr().err
    [line] = [line for line in err.splitlines() if line.startswith("[probe] Min-K%")]
    assert "Min-K% Prob skipped" in line and "404" in line and "the continuation probe ran" in line
    assert summary["min_k_unavailable"] and summary["all"]["min_k_prob"] is None
    assert summary["min_k_auc"]["auc"] is None
    rows = [json.loads(line) for line in (run.path / "probe.jsonl").read_text().splitlines()]
    preds = list(read_run_predictions(run.path))
    assert [(r["post_id"], r["segment_index"]) for r in rows] == [(p["post_id"], p["segment_index"]) for p in preds]
    assert scored == len(preds) and len(probes) == len(preds)  # every answer first, then one probe request each
    texts = {(r["post_id"], r["segment_index"]): r["text"] for r in _test_rows(tiny_release)}
    asked = [body["messages"][-1]["content"] for body in probes]  # the shortest, middle and longest text first
    for row in rows:
        shown, rest = halves(texts[(row["post_id"], row["segment_index"])])
        [request] = [text for text in asked if text.endswith(shown)]
        assert rest not in request and "<mask>" not in request
        assert row["min_k_prob"] is None and row["longest_common_run"] >= 0 and row["continuation"]
    analysis = json.loads((run.path / "analysis.json").read_text())
    assert analysis["probe"] == summary


def test_a_sweep_probes_after_every_cell_is_answered_and_asks_each_continuation_once(tiny_release,
                                                                                      capsys):
    from flows.cli import main

    with FakeOpenAIServer() as server:
        code = main(["sweep", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                     "--settings", "zero-shot,few-shot-random", "--predictor", "openai-compatible",
                     "--model", "m-sweep-probe", "--base-url", server.base_url, "--limit", "3", "--bootstrap", "0",
                     "--probe", "memorization", "--format", "json"])
        asked = [body["messages"][-1]["content"] for body in server.requests]
    out, err = capsys.readouterr()
    assert code == 0, err
    scoring = [i for i, text in enumerate(asked) if "<mask>" in text]
    assert scoring == list(range(6)) and len(asked) == 6 + 3  # 2 cells x 3 rows, then 3 continuations
    cells = json.loads(out)
    runs = [p for p in (Path(tiny_release["warehouse"]) / "evaluations").iterdir()
            if json.loads((p / "config.json").read_text()).get("model") == "m-sweep-probe"]
    assert len(runs) == len(cells) == 2
    for run in runs:
        probed = [json.loads(line) for line in (run / "probe.jsonl").read_text().splitlines()]
        assert len(probed) == 3 and all(r["continuation"] for r in probed)
