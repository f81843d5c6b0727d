"""The OpenAI-compatible predictor with the real `openai` client against a fake server on 127.0.0.1."""
import json
import os
import signal
import tomllib
from pathlib import Path

import pytest

from common.parquet import iter_rows
from common.stopping import Terminated
from evaluation.predictors.chat import ChatConfigError
from evaluation.predictors.base import PredictorOptions
from evaluation.predictors.registry import PredictorError
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

SECRET = "sk-test-do-not-store-7f3a"
# the shipped prompt settings, read as plain TOML (not through evaluation.predictors.prompts, which is under test)
PROMPTS = tomllib.loads((Path(__file__).resolve().parents[2] / "evaluation" / "data" / "prompts.toml").read_text())


def options(server: FakeOpenAIServer, cache: Path, **kw) -> PredictorOptions:
    base = dict(base_url=server.base_url, api_key=SECRET, timeout=10.0, backoff=0.01, max_retries=3,
                concurrency=2, cache_dir=str(cache))
    return PredictorOptions(**{**base, **kw})


def split_rows(tiny_release) -> list[dict]:
    from evaluation.run import load_release

    rel = load_release(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"])
    return list(iter_rows(rel.split_file("test")))




def misbehaving(text: str, k: int, body: dict) -> str:
    """Prose for 'dog' posts, one word too many for 'storm' posts, reasoning + list for the rest."""
    if "dog" in text:
        return "I cannot tell what this person felt."
    if "storm" in text:
        return repr(["scared"] * (k + 1))
    return "The writer failed an exam, so they felt bad.\nAnswer: " + json.dumps(["sad"] * k)


def test_chat_run_survives_429_timeout_and_malformed_answers_then_reruns_from_cache(tiny_release, tmp_path):
    rows = split_rows(tiny_release)
    malformed = sum(1 for r in rows if "dog" in r["masked_text"] or "storm" in r["masked_text"])
    assert 0 < malformed < len(rows)
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer(misbehaving) as server:
        server.faults.extend(["429", 6.0])  # a rate limit, then a stall longer than the 2 s timeout
        first = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", options=options(server, tmp_path / "cache", model="fake-model", timeout=2.0)))
        sent = len(server.requests)
        assert sent == len(rows) + 2  # every example once, plus the two retried requests
        assert all(h == f"Bearer {SECRET}" for h in server.auth_headers)
        assert all(b["temperature"] == 0 and b["model"] == "fake-model" for b in server.requests)

        second = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", options=options(server, tmp_path / "cache", model="fake-model")))
        assert len(server.requests) == sent  # the cache answered everything
    assert first.metrics == second.metrics
    assert first.metrics["VRate"] == pytest.approx((len(rows) - malformed) / len(rows))
    preds = list(read_run_predictions(first.path))
    assert all(p["usage"]["total_tokens"] > 0 for p in preds)
    assert all(p.get("cached") for p in read_run_predictions(second.path))
    analysis = json.loads((second.path / "analysis.json").read_text())
    assert analysis["answers_from_cache"] == len(rows) and analysis["usage_new_tokens"]["total_tokens"] == 0
    config = json.loads((first.path / "config.json").read_text())
    assert config["status"] == "complete" and config["predictor_details"]["retries"] == 2
    assert config["predictor_details"]["base_url"] == server.base_url
    for f in [*first.path.iterdir(), *second.path.iterdir(), *(tmp_path / "cache").rglob("*.json")]:
        assert SECRET not in f.read_text(), f


def test_interrupted_run_pays_only_for_the_missing_answers(tiny_release, tmp_path):
    n = len(split_rows(tiny_release))
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", limit=5, options=options(server, tmp_path / "c", model="m-interrupt")))
        assert len(server.requests) == 5
        full = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", options=options(server, tmp_path / "c", model="m-interrupt")))
        assert len(server.requests) == n
    assert full.metrics["rows"] == n and full.metrics["VRate"] == 1.0


def test_exhausted_retries_are_recorded_as_invalid_and_not_cached(tiny_release, tmp_path):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        server.faults.extend(["500", "500"])
        run = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", limit=2, options=options(server, tmp_path / "c", model="m-500", max_retries=1,
                                                          concurrency=1)))
        first, second = read_run_predictions(run.path)
        assert first["output"] is None and first["parsed"] is None and "500" in first["error"]
        assert second["output"] is not None and "error" not in second
        assert run.metrics["VRate"] == 0.5
        again = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", limit=2, options=options(server, tmp_path / "c", model="m-500", max_retries=1)))
        assert len(server.requests) == 4 and again.metrics["VRate"] == 1.0


@pytest.mark.parametrize("status", ["401", "403", "404"], ids=["bad-key", "no-access", "no-such-model"])
def test_a_refused_key_or_model_stops_the_run_at_once_and_marks_it_failed(tiny_release, tmp_path, status):
    """docs/evaluation.md: 401, 403 and 404 stop the run (the key, the model or the URL is wrong);
    the first refusal ends it: not retried, and of the other nine rows only the one a free request
    slot had already taken (concurrency 1) may still be asked."""
    wh = Warehouse.at(tiny_release["warehouse"])
    model = f"m-{status}"
    with FakeOpenAIServer() as server:
        server.faults.append(status)
        with pytest.raises(ChatConfigError, match=f"answered {status} for model '{model}'"):
            evaluate_release(wh, tiny_release["release"], EvalRequest(
                "openai-compatible", limit=10, options=options(server, tmp_path / "c", model=model, concurrency=1)))
        assert len(server.requests) <= 2
    failed = [json.loads(p.read_text()) for p in (wh.root / "evaluations").glob("*/config.json")]
    assert any(c["status"] == "failed" and c["model"] == model for c in failed)
    from evaluation.outputs.runs import list_runs

    assert all(r.config["model"] != model for r in list_runs(wh))  # failed runs never reach a leaderboard


@pytest.mark.parametrize("setting", ["few-shot-random", "few-shot-nearest"])
def test_few_shot_prompts_show_four_train_examples_with_the_same_mask_count(tiny_release, tmp_path, setting):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        run = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", options=options(server, tmp_path / "c", setting=setting, model="m-few")))
        bodies = server.requests
    rows = split_rows(tiny_release)
    test_posts = {r["post_id"] for r in rows}
    assert len(bodies) == len(rows) > 0  # one request per test example: the loops below see them all
    for body in bodies:
        msgs = body["messages"]
        assert [m["role"] for m in msgs] == ["user", "assistant"] * 4 + ["user"]
        k = msgs[-1]["content"].split("Text:", 1)[1].count("<mask>")
        for user, answer in zip(msgs[:-1:2], msgs[1:-1:2]):
            assert user["content"].split("Text:", 1)[1].count("<mask>") == k
            assert len(eval(answer["content"])) == k
    preds = list(read_run_predictions(run.path))
    assert len(preds) == len(rows)
    for pred in preds:
        assert len(pred["shots"]) == 4 and not set(pred["shots"]) & test_posts
    config = json.loads((run.path / "config.json").read_text())
    assert config["setting"] == setting
    if setting == "few-shot-nearest":
        assert config["predictor_details"]["few_shot_backend"] == "tfidf"


def test_chain_of_thought_answer_after_reasoning_is_parsed(tiny_release, tmp_path):
    def thinker(text: str, k: int, body: dict) -> str:
        assert "step by step" in body["messages"][-1]["content"]
        return "Step 1: the writer describes a loss.\nStep 2: ...\nAnswer: " + repr(["sad"] * k)

    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer(thinker) as server:
        run = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", options=options(server, tmp_path / "c", setting="chain-of-thought", model="m-cot")))
        assert server.requests[0]["max_tokens"] == PROMPTS["settings"]["chain-of-thought"]["max_tokens"] > 0
    assert run.metrics["VRate"] == 1.0 and run.metrics["AccL"] > 0


def test_a_damaged_cache_entry_is_asked_again_and_repaired(tiny_release, tmp_path):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", limit=1, options=options(server, tmp_path / "c", model="m-damaged")))
        [entry] = list((tmp_path / "c").rglob("*.json"))
        entry.write_text('{"content": "trunc')  # as if the disk filled up mid-write
        run = evaluate_release(wh, tiny_release["release"], EvalRequest(
            "openai-compatible", limit=1, options=options(server, tmp_path / "c", model="m-damaged")))
        assert len(server.requests) == 2 and run.metrics["VRate"] == 1.0
    assert json.loads(entry.read_text())["content"].startswith("[")


@pytest.mark.parametrize(("status", "attempts"), [(501, 1), (505, 1), (503, 3), (429, 3)])
def test_only_an_answer_a_retry_may_cure_is_retried(tiny_release, tmp_path, status, attempts):
    """docs/faults.md: a server that answers 501 (or another 5xx no retry cures) fails each row at
    its first attempt; overload (503) and rate limits (429) are retried up to --max-retries."""
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        server.fail_every_chat = status
        with pytest.raises(PredictorError, match=f"the first: {status} after {attempts} attempts"):
            evaluate_release(wh, tiny_release["release"], EvalRequest("openai-compatible", limit=2, options=options(
                server, tmp_path / "c", model=f"m-every-{status}", max_retries=2, backoff=0.0, concurrency=1)))
        assert len(server.requests) == 2 * attempts


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_during_evaluate_sends_no_retry_marks_the_run_interrupted_and_keeps_its_answers(tiny_release, tmp_path,
                                                                                              signum):
    """Ctrl-C or SIGTERM while a row waits to be retried: the run stops at once (neither the retry
    nor any later row is sent), its folder says `interrupted`, and a rerun asks only for the rows
    that had no answer. The signal raises as `express` makes it raise (common/stopping.py)."""
    wh = Warehouse.at(tiny_release["warehouse"])
    model = f"m-stopped-{signum}"
    stop = KeyboardInterrupt if signum == signal.SIGINT else Terminated

    def raise_stop(*_: object) -> None:
        raise stop()

    before = signal.signal(signum, raise_stop)
    try:
        with FakeOpenAIServer() as server:
            server.faults.extend([None, None, "503"])  # rows 1 and 2 answered, row 3 overloaded: a retry waits
            server.on_request = lambda n: n == 3 and os.kill(os.getpid(), signum)
            with pytest.raises(stop):
                evaluate_release(wh, tiny_release["release"], EvalRequest("openai-compatible", limit=5, options=options(
                    server, tmp_path / "c", model=model, max_retries=1, backoff=3.0, concurrency=1)))
            sent = len(server.requests)
            server.on_request = None
            rerun = evaluate_release(wh, tiny_release["release"], EvalRequest(
                "openai-compatible", limit=5, options=options(server, tmp_path / "c", model=model, concurrency=1)))
            asked_again = len(server.requests) - sent
    finally:
        signal.signal(signum, before)
    assert sent == 3
    (stopped,) = [c for p in (wh.root / "evaluations").glob("*/config.json")
                  if (c := json.loads(p.read_text()))["model"] == model and c["run_id"] != rerun.run_id]
    assert stopped["status"] == "interrupted"
    assert asked_again == 3 and rerun.metrics["rows"] == 5  # rows 1 and 2 came from the cache


def test_an_unknown_model_is_refused_naming_the_models_the_server_offers(tiny_release, tmp_path):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        server.faults.append("404")
        with pytest.raises(ChatConfigError, match=f"answered 404 for model 'm-typo'; it offers 'fake' "
                                                  f"\\(GET {server.base_url}/models\\)"):
            evaluate_release(wh, tiny_release["release"], EvalRequest(
                "openai-compatible", limit=2, options=options(server, tmp_path / "c", model="m-typo", concurrency=1)))
