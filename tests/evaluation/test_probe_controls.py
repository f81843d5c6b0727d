"""What a probe costs, under control (docs/live.md): `--probe min-k` or `continuation` asks only that
probe, `--probe-rows N` probes a sample of the run's rows, the time left is estimated from the first
rows (checked on a model whose every answer costs what this file says, on a clock it owns), and the
AUC comes with a seeded bootstrap interval and, in the report, how to read it."""
import json
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from evaluation.live.memorization import auc_before_after, load_probe_settings
from evaluation.live.probe import probe_rows, probe_run, store_probe
from evaluation.live.probe_time import FIRST_ROWS, probe_order
from evaluation.live.window import iso
from evaluation.outputs.report import write_report
from evaluation.predictors.base import PredictorOptions
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import derive_numbers, read_run_predictions
from schemas.config import PROBE_KINDS, LiveFields, probe_kinds
from tests.evaluation.conftest import read_run_file
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse

T0 = 1700000000
SETTINGS = load_probe_settings()


class ClockedModel:
    """A probe model on a clock of its own: Min-K% costs a fixed time plus a time per token of the text
    (its tokens are not its words: 1.1 to 1.7 a word), a continuation a fixed time plus a time per
    token it writes (it stops before its budget on some rows). Rows in `cached` cost nothing, as
    answers from the cache do."""

    def __init__(self, fixed: float = 0.3, per_token: float = 0.08, per_answer_token: float = 0.05,
                 cached: tuple[str, ...] = ()) -> None:
        self.now, self.computed, self.asked, self.texts = 0.0, 0, {"min-k": 0, "continuation": 0}, []
        self.fixed, self.per_token, self.per_answer_token, self.cached = fixed, per_token, per_answer_token, cached

    def clock(self) -> float:
        return self.now

    def _spend(self, text: str, seconds: float) -> None:
        self.texts.append(text)
        if not any(text.startswith(c) for c in self.cached):
            self.now += self.fixed + seconds
            self.computed += 1

    def token_logprobs(self, text: str) -> list[float]:
        self.asked["min-k"] += 1
        n = len(text.split())
        tokens = round(n * (1.4 + 0.3 * math.sin(n)))
        self._spend(text, self.per_token * tokens)
        return [-1.0 - (i % 5) for i in range(tokens)]

    def answer(self, messages: list[dict], max_tokens: int) -> str:
        self.asked["continuation"] += 1
        shown = messages[-1]["content"].split("\n\n", 1)[-1]
        written = max(1, round(max_tokens * (0.6 + 0.4 * (len(shown) % 3) / 2)))
        self._spend(shown, self.per_answer_token * written)
        return "and then the rain came down all night"

    def describe(self) -> dict:
        return {"backend": "clocked"}


def items(lengths: list[int]) -> list[tuple[dict, str]]:
    return [({"post_id": f"p{i}", "segment_index": 0, "created_utc": T0 + i},
             f"row{i} " + " ".join(f"w{j}" for j in range(n - 1))) for i, n in enumerate(lengths)]


LENGTHS = [8, 10, 12, 15, 20, 30, 45, 60, 90, 120, 160, 200, 260, 320, 400, 60, 30, 250, 180, 12]


@pytest.mark.parametrize("fixed", [0.0, 0.3, 2.0])  # seconds a request costs whatever its size
@pytest.mark.parametrize("lengths", [LENGTHS, LENGTHS[::-1], [20] * 5 + [300] * 15], ids=["short-first", "long-first",
                                                                                      "5-short-then-long"])
def test_the_time_a_probe_will_take_is_estimated_from_its_first_rows_within_2x_though_rows_differ(
        fixed, lengths, capsys):
    model = ClockedModel(fixed=fixed)
    rows, unavailable, clock = probe_rows(model, SETTINGS, items(lengths), PROBE_KINDS, clock=model.clock)
    first, total = clock.first, model.now
    assert unavailable is None and [r["post_id"] for r in rows] == [f"p{i}" for i in range(len(lengths))]
    assert first["after_rows"] == FIRST_ROWS
    assert total / 2 <= first["estimate_seconds"] <= 2 * total, (first, total)
    by_size = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    shown = [f"row{by_size[k]} " for k in (0, len(lengths) // 2, -1)]
    assert [t.split()[0] + " " for t in model.texts[:2 * FIRST_ROWS:2]] == shown  # the range of sizes first
    [line] = [line for line in capsys.readouterr().err.splitlines() if "estimated" in line]
    assert line.startswith(f"[probe] {FIRST_ROWS}/{len(lengths)} rows in ")
    assert clock.summary() == {"rows": len(lengths), "seconds": pytest.approx(total, abs=0.01), "first_estimate": first}


def test_answers_from_the_cache_do_not_count_toward_the_estimate():
    lengths = LENGTHS[::-1]
    cached = tuple(f"row{i} " for i in probe_order(lengths)[:4])  # a rerun after a stop: the rows asked first
    model = ClockedModel(cached=cached)
    _, _, clock = probe_rows(model, SETTINGS, items(lengths), PROBE_KINDS, clock=model.clock)
    first, total = clock.first, model.now
    assert first["after_rows"] == len(cached) + FIRST_ROWS and total / 2 <= first["estimate_seconds"] <= 2 * total
    everything = ClockedModel(cached=tuple(f"row{i} " for i in range(len(LENGTHS))))
    _, _, clock = probe_rows(everything, SETTINGS, items(LENGTHS), PROBE_KINDS, clock=everything.clock)
    assert clock.first is None and clock.summary()["seconds"] == 0  # nothing asked: nothing to estimate from


def test_min_k_alone_asks_no_continuation_and_continuation_alone_no_log_probabilities():
    assert probe_kinds("memorization") == probe_kinds("continuation, min-k") == PROBE_KINDS
    for kind, other in (("min-k", "continuation"), ("continuation", "min-k")):
        model = ClockedModel()
        rows, _, clock = probe_rows(model, SETTINGS, items(LENGTHS[:6]), probe_kinds(kind), clock=model.clock)
        assert model.asked == {kind: 6, other: 0}
        if kind == "min-k":
            assert all(r["min_k_prob"] is not None and "continuation" not in r for r in rows)
        else:
            assert all(r["continuation"] and "min_k_prob" not in r for r in rows)
        assert model.now / 2 <= clock.first["estimate_seconds"] <= 2 * model.now


def test_the_auc_has_a_seeded_bootstrap_interval_that_holds_it_and_narrows_with_more_rows():
    rng = np.random.default_rng(5)

    def rows(n: int) -> list[dict]:  # rows before the cutoff score a little higher
        return [{"created_utc": T0 + i, "min_k_prob": float(rng.normal(-3.0 + 0.6 * (i < n), 1.0))}
                for i in range(2 * n)]

    few, many = rows(20), rows(200)
    got = auc_before_after(few, T0 + 20, 5, samples=500, seed=1)
    want = roc_auc_score([int(r["created_utc"] < T0 + 20) for r in few], [r["min_k_prob"] for r in few])
    assert got["auc"] == pytest.approx(want) and (got["before"], got["after"]) == (20, 20)
    low, high = got["interval"]
    assert 0 <= low < got["auc"] < high <= 1 and got["intervals"] == {"level": 0.95, "samples": 500, "seed": 1}
    assert auc_before_after(few, T0 + 20, 5, samples=500, seed=1) == got  # seeded
    assert auc_before_after(few, T0 + 20, 5, samples=500, seed=2)["interval"] != got["interval"]
    wide = auc_before_after(many, T0 + 200, 5, samples=500, seed=1)["interval"]
    assert wide[1] - wide[0] < high - low
    assert auc_before_after(few, T0 + 20, 5, samples=0)["interval"] is None


def test_probe_rows_probes_a_sample_of_both_sides_and_the_report_says_how_to_read_the_auc(tiny_release, capsys):
    """A chat-only server: the continuation probe alone, on 6 of the run's rows; then Min-K% rows
    as a model would give them, stored the way the probe stores its own, for the AUC and its interval."""
    wh = Warehouse.at(tiny_release["warehouse"])
    cut = T0 + 24
    live = LiveFields(probe="continuation", probe_rows=6, cutoff=iso(cut), cutoff_min_rows=3)
    with FakeOpenAIServer() as server:
        run = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", bootstrap=100, live=live,
            options=PredictorOptions(model="m-probe-rows", base_url=server.base_url, seed=4)))
        scored = len(server.requests)
        first = probe_run(wh, run.path)
        again = probe_run(wh, run.path)  # the same seed: the same rows, their continuations from the cache
        asked = len(server.requests) - scored
    assert "[probe] Min-K% Prob skipped" not in capsys.readouterr().err  # not asked, so not tried
    probed = read_run_file(run.path, "probe.jsonl")
    assert asked == len(probed) == 6 and first["sample"] == again["sample"]
    assert sorted(r["created_utc"] < cut for r in probed) == [False] * 3 + [True] * 3
    sample = first["sample"]
    assert (sample["rows"], sample["drawn"], sample["seed"]) == (6, 6, 4)
    assert sum(s["rows"] for s in sample["strata"]) == len(list(read_run_predictions(run.path)))
    assert first["probe"] == "continuation" and "min_k_auc" not in first
    assert first["all"]["min_k_prob"] is None and first["all"]["rows"] == 6

    facts = {**first, "probe": "memorization"}
    rows = [{**r, "min_k_prob": -2.0 - 0.1 * i if r["created_utc"] < cut else -2.2 - 0.1 * i}
            for i, r in enumerate(read_run_file(run.path, "probe.jsonl"))]
    summary = store_probe(run.path, rows, facts)
    auc = summary["min_k_auc"]
    assert auc["auc"] == pytest.approx(roc_auc_score([int(r["created_utc"] < cut) for r in rows],
                                                     [r["min_k_prob"] for r in rows]))
    assert auc["interval"][0] <= auc["auc"] <= auc["interval"][1] and auc["intervals"]["samples"] == 100
    derive_numbers(run.path)  # as `express eval-report` derives it: the same interval
    assert json.loads((run.path / "analysis.json").read_text())["probe"]["min_k_auc"] == auc
    report = write_report(run.path).read_text()
    assert f"95 % interval {auc['interval'][0]:.3f} to {auc['interval'][1]:.3f}" in report
    assert "**How to read it.**" in report and "An interval that spans 0.5 says these rows cannot tell" in report
    assert "A sample was probed: 6 rows drawn at random (seed 4" in report
