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


def test_a_sampled_sweep_scores_the_same_rows_in_every_cell_on_both_sides_and_probes_a_sample_of_them(
        sweep, capsys):
    """The demo release's test rows span six days: a cutoff at their middle; the first 20 rows all fall
    before it, a sample of 20 gives each side half; `--probe-rows 6` probes 3 of them on each side."""
    import pyarrow.parquet as pq

    from evaluation.live.window import iso

    server, args, warehouse, rel = sweep
    times = sorted(pq.read_table(Path(warehouse, *rel.split("/"), "data", "test-00000-of-00001.parquet"),
                                 columns=["created_utc"]).column(0).to_pylist())
    cut = times[len(times) // 2]
    assert times[19] < cut  # `--limit 20` would score one side only
    at = args.index("--limit")
    flags = args[:at] + args[at + 2:] + [
        "--base-url", server.base_url, "--settings", "zero-shot", "--prompt-variants", "default", "--sample", "20",
        "--seed", "9", "--cutoff", iso(cut), "--probe", "continuation", "--probe-rows", "6", "--format", "json"]
    sent = len(server.requests)
    assert main(flags) == 0, capsys.readouterr().err
    cells = json.loads(capsys.readouterr().out)
    runs = [Path(warehouse, "evaluations", c["run"]) for c in cells]
    rows = [[json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()] for run in runs]
    assert len(runs) == 2 and [(p["post_id"], p["segment_index"]) for p in rows[0]] == \
        [(p["post_id"], p["segment_index"]) for p in rows[1]]
    before = sum(p["created_utc"] < cut for p in rows[0])
    assert len(rows[0]) == 20 and min(before, 20 - before) >= 20 / 2 - 2
    config = json.loads((runs[0] / "config.json").read_text())
    assert config["sample"]["seed"] == 9 and sum(s["drawn"] for s in config["sample"]["strata"]) == 20
    probed = [[json.loads(line) for line in (run / "probe.jsonl").read_text().splitlines()] for run in runs]
    assert [len(p) for p in probed] == [6, 6] and sum(r["created_utc"] < cut for r in probed[0]) == 3
    assert len(server.requests) - sent <= 2 * 20 + 6  # the second cell's continuations came from the cache
