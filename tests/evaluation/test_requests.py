"""Sane requests: answer-length caps, the adaptive window, structured-answer fallbacks and invalid
shapes. A real server is in test_real_server.py; the fake one here only produces what a real
server will not on demand (refusing every response_format, a stall past the timeout)."""
import json
from pathlib import Path

from evaluation.predictors.answers import answer_schema, response_format
from evaluation.predictors.chat import slots_from_props
from evaluation.predictors.concurrency import AdaptiveWindow
from evaluation.scoring.invalid import invalid_shapes, shape
from evaluation.predictors.base import PredictorOptions
from evaluation.predictors.prompts import load_prompts
from evaluation.run import EvalRequest, evaluate_release
from evaluation.run_numbers import read_run_predictions
from tests.fakes.openai_server import FakeOpenAIServer
from warehouse.layout import Warehouse


def test_answer_length_is_bounded_by_the_masks_and_the_setting():
    prompts = load_prompts()
    zero, cot = prompts.get("zero-shot"), prompts.get("chain-of-thought")
    assert [zero.answer_budget(k) for k in (1, 2, 5)] == [36, 56, 116]
    assert cot.answer_budget(1) == cot.answer_budget(5) == 1024 and cot.reasoning and not zero.reasoning
    schema = answer_schema(3)["properties"]["answers"]
    assert schema["minItems"] == schema["maxItems"] == 3
    assert list(answer_schema(2, reasoning=True)["properties"]) == ["reasoning", "answers"]
    assert response_format("free", 2) is None
    assert response_format("json_object", 2)["schema"] == response_format("json_schema", 2)["json_schema"]["schema"]


class Clock:
    """Time that passes only when a simulated server finishes a row."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def serve(window: AdaptiveWindow, clock: Clock, slots: int, rows: int, tokens: int = 300) -> None:
    """A server that works on `slots` requests at a time, one second each: with w in flight it
    finishes min(w, slots) rows a second."""
    for _ in range(rows):
        clock.now += 1.0 / min(window.limit, slots)
        window.finished(tokens)


def test_the_window_settles_at_one_request_on_a_one_slot_server_and_climbs_on_a_wide_one():
    clock = Clock()
    narrow = AdaptiveWindow(clock=clock)
    serve(narrow, clock, slots=1, rows=40)
    assert narrow.limit == 1 and narrow.settled and narrow.history == [1, 2, 1]  # tried two, took it back
    wide = AdaptiveWindow(clock=clock)
    serve(wide, clock, slots=4, rows=80)
    assert wide.limit == 4 and wide.settled and wide.history == [1, 2, 3, 4, 4]
    three = AdaptiveWindow(clock=clock)
    serve(three, clock, slots=3, rows=80)
    assert three.limit == 3 and three.settled
    told = AdaptiveWindow(slots=3)
    assert told.limit == 3 and told.settled and told.queue_factor == 1
    assert slots_from_props({"total_slots": 3}) == 3 and slots_from_props({"n_ctx": 4096}) is None
    asked = AdaptiveWindow(concurrency=6, slots=3)  # the user's number wins, but for timeouts
    assert asked.limit == 6 and asked.settled and asked.queue_factor == 6
    told.timed_out()
    asked.timed_out()
    assert told.limit == asked.limit == 1 and told.timeouts == 1 and three.queue_factor == 3


def test_invalid_answers_get_a_shape_and_the_commonest_come_with_examples():
    rows = [{"surfaces": ["sad"], "output": "['sad']", "parsed": ["sad"]},
            {"surfaces": ["sad"], "output": "I think the writer felt bad about it.", "parsed": None},
            {"surfaces": ["sad"], "output": "The text is: I feel <mask> today", "parsed": None},
            {"surfaces": ["sad", "tired"], "output": "['sad']", "parsed": ["sad"]},
            {"surfaces": ["sad"], "output": "['sad', 'tired']", "parsed": ["sad", "tired"]},
            {"surfaces": ["sad"], "output": '{"answers": ["sa', "parsed": None},
            {"surfaces": ["sad"], "output": None, "parsed": None, "error": "500 after 6 attempts"},
            {"surfaces": ["sad"], "output": "Honestly no idea, sorry.", "parsed": None}]
    assert [shape(r) for r in rows] == [None, "prose, no list", "repeated the text", "too few words", "too many words",
                                        "unfinished or malformed list", "request failed", "prose, no list"]
    assert len(invalid_shapes(rows)) == 5  # the commonest five of the six shapes seen
    top = invalid_shapes(rows, top=10)
    assert top[0] == {"shape": "prose, no list", "rows": 2,
                      "examples": ["I think the writer felt bad about it.", "Honestly no idea, sorry."]}
    assert sum(s["rows"] for s in top) == 7


def refuses_response_format(text: str, k: int, body: dict) -> str:
    return repr(["sad"] * k)


def test_a_server_refusing_every_response_format_gets_free_text_once_and_visibly(tiny_release, tmp_path, capsys):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer(refuses_response_format) as server:
        server.refuse_response_format = True
        run = evaluate_release(wh, tiny_release["release"], EvalRequest("openai-compatible", limit=5, options=PredictorOptions(
            model="m-refuse", base_url=server.base_url, cache_dir=str(tmp_path / "c"))))
        formats = [b.get("response_format", {}).get("type") for b in server.requests]
    err = capsys.readouterr().err
    assert formats[:2] == ["json_schema", "json_object"] and formats[2:] == [None] * 5  # then every row once
    assert err.count("refused response_format") == 2 and "now asking with free text" in err
    details = json.loads((run.path / "config.json").read_text())["predictor_details"]
    assert details["response_formats_refused"] == ["json_schema", "json_object"] and details["response_format"] == "free"
    assert run.metrics["VRate"] == 1.0


def test_a_timeout_narrows_the_window_to_one_and_the_retry_waits_longer(tiny_release, tmp_path):
    wh = Warehouse.at(tiny_release["warehouse"])
    with FakeOpenAIServer() as server:
        server.faults.append(6.0)  # the first request stalls past its timeout (1 s x the 4 requests it may wait behind)
        run = evaluate_release(wh, tiny_release["release"], EvalRequest("openai-compatible", limit=6, options=PredictorOptions(
            model="m-stall", base_url=server.base_url, cache_dir=str(tmp_path / "c"), timeout=1.0, backoff=0.01,
            concurrency=4)))
    details = json.loads((run.path / "config.json").read_text())["predictor_details"]
    assert details["timeouts"] == 1 and details["concurrency_steps"][-1] == 1 and details["requests"] == 7
    assert run.metrics["VRate"] == 1.0 and all(p["output"] for p in read_run_predictions(Path(run.path)))
