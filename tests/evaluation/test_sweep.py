"""`express sweep` on the demo release with the fake OpenAI server: one table over the grid, whose
numbers are checked here against the stored answers with scipy."""
import json
import zlib
from collections import Counter
from itertools import product
from pathlib import Path

import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from evaluation.scoring.parsing import parse_answer
from flows.cli import main
from tests.fakes.openai_server import FakeOpenAIServer

WORDS = ["sad", "anxious", "happy", "tired", "angry", "lonely"]
SETTINGS, VARIANTS, TEMPERATURES = ["zero-shot", "few-shot-random"], ["default", "persona-json"], [0.0, 0.7]


def responder(text: str, k: int, body: dict) -> str:
    """One word at temperature 0 ("anxious" with a persona), varied words when sampling."""
    persona = any(m["role"] == "system" for m in body["messages"])
    if body.get("temperature", 0) == 0:
        words = ["anxious" if persona else "sad"] * k
    else:
        words = [WORDS[zlib.crc32(f"{text}|{i}".encode()) % len(WORDS)] for i in range(k)]
    if "JSON object" in body["messages"][-1]["content"]:
        return json.dumps({"answers": words})
    return repr(words)


@pytest.fixture(scope="module")
def sweep(demo_build):
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    args = ["sweep", "--release", rel, "--warehouse", demo_build["warehouse"], "--predictor", "openai-compatible",
            "--model", "fake-sweep", "--settings", ",".join(SETTINGS), "--temperatures", "0,0.7",
            "--prompt-variants", ",".join(VARIANTS), "--limit", "10", "--bootstrap", "10"]
    with FakeOpenAIServer(responder) as server:
        yield server, args, demo_build["warehouse"], rel


def test_sweep_prints_the_grid_with_concentration_measures_checked_against_scipy(sweep, capsys):
    server, args, _, _ = sweep
    assert main([*args, "--base-url", server.base_url, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["setting"], r["variant"], r["temperature"]) for r in rows] == list(product(SETTINGS, VARIANTS, TEMPERATURES))
    assert len(server.requests) == 8 * 10
    assert {b["temperature"] for b in server.requests} == {0.0, 0.7}
    for row in rows:
        run = Path(sweep[2], "evaluations", row["run"])
        stored = json.loads((run / "metrics.json").read_text())
        assert {m: row[m] for m in ("AccL", "AccV", "F1V", "VRate", "rows")} == {m: stored[m] for m in row if m in stored}
        config = json.loads((run / "config.json").read_text())
        assert (config["setting"], config["prompt_variant"], config["temperature"]) == \
            (row["setting"], row["variant"], row["temperature"])
        preds = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
        assert [parse_answer(p["output"]) for p in preds] == [p["parsed"] for p in preds]
        human = Counter(w.lower() for p in preds for w in p["surfaces"])
        model = Counter(w.lower() for p in preds if p["parsed"] and len(p["parsed"]) == len(p["surfaces"]) for w in p["parsed"])
        labels = sorted(set(human) | set(model))
        assert row["VRate"] == 1.0  # the JSON answers are read too
        assert row["entropy_bits"] == pytest.approx(entropy([model[w] for w in labels], base=2), abs=1e-9)
        assert row["top_share"] == pytest.approx(max(model.values()) / sum(model.values()))
        assert row["js_to_human"] == pytest.approx(
            jensenshannon([model[w] for w in labels], [human[w] for w in labels], base=2) ** 2, abs=1e-9)
        assert row["human_entropy_bits"] == pytest.approx(entropy(list(human.values()), base=2), abs=1e-9)
        if row["temperature"] == 0:  # one answer for everything: fully concentrated
            assert row["top_share"] == 1.0 and row["entropy_bits"] == 0.0 and row["distinct"] == 1
        else:
            assert row["entropy_bits"] > 1.5 and row["distinct"] >= 4
    persona = [b for b in server.requests if b["messages"][0]["role"] == "system"]
    assert len(persona) == 4 * 10 and all("JSON object" in b["messages"][-1]["content"] for b in persona)


def test_a_second_sweep_is_answered_from_the_cache_and_prints_a_text_table(sweep, capsys):
    server, args, warehouse, rel = sweep
    sent = len(server.requests)
    assert main([*args, "--base-url", server.base_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(server.requests) == sent  # every cell's answers came from the response cache
    assert lines[0].split()[:11] == ["setting", "variant", "temp", "rows", "AccL", "AccV", "F1V", "VRate", "entropy",
                                     "top_share", "JS_human"]
    assert len(lines) == 1 + 8 + 1 and lines[-1].startswith("human labels")
    assert main(["leaderboard", "--warehouse", warehouse, "--release", rel, "--format", "json"]) == 0
    shown = {r["setting"] for r in json.loads(capsys.readouterr().out) if r["model"] == "fake-sweep"}
    assert {"zero-shot", "zero-shot@t0.7", "zero-shot+persona-json", "few-shot-random+persona-json@t0.7"} <= shown


def test_sweep_refuses_what_it_cannot_vary(demo_build, capsys):
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    base = ["sweep", "--release", rel, "--warehouse", demo_build["warehouse"], "--settings", "zero-shot"]
    assert main([*base, "--predictor", "tfidf-logreg"]) == 2
    assert "takes no prompts" in capsys.readouterr().err
    assert main([*base, "--predictor", "openai-compatible", "--model", "m", "--prompt-variants", "pirate"]) == 2
    assert "unknown prompt variant 'pirate'" in capsys.readouterr().err
    assert main([*base, "--predictor", "openai-compatible", "--model", "m", "--temperatures", "0,hot"]) == 2
    assert "'hot' is not a number" in capsys.readouterr().err
