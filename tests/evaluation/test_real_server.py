"""The chat predictor against a real OpenAI-compatible server: llama.cpp's (llama-cpp-python)
serving SmolLM2 on 127.0.0.1, started once per session (conftest.llama_server); and the lm-eval
export run by the real lm-evaluation-harness against that server."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.scoring.score_file import score_file
from flows.cli import main
from schemas.lexicon import default_decomposition
from tests.evaluation.conftest import free_port

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

ROWS = 5


def evaluate(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["evaluate", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else {}), err


def read(run: dict, name: str):
    path = Path(run["path"]) / name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in path.read_text().splitlines()]
    return json.loads(path.read_text()) if name.endswith(".json") else path.read_text()


@pytest.fixture(scope="module")
def demo(demo_build) -> list[str]:
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    return ["--release", rel, "--warehouse", demo_build["warehouse"], "--limit", str(ROWS), "--bootstrap", "10"]


def test_a_default_run_against_llama_cpp_asks_for_structured_answers_and_pays_each_row_once(llama_server, demo, capsys):
    server = ["--predictor", "openai-compatible", "--model", llama_server.model, "--base-url", llama_server.base_url]
    code, run, err = evaluate(capsys, *demo, *server)
    assert code == 0, err
    assert run["VRate"] >= 0.9 and run["rows"] == ROWS
    # llama-cpp-python's server refuses OpenAI's json_schema spelling: said once, then its own spelling
    assert err.count("refused response_format 'json_schema'") == 1
    details = read(run, "config.json")["predictor_details"]
    assert details["answers"] == "structured" and details["response_format"] == "json_object"
    assert details["response_formats_refused"] == ["json_schema"] and details["max_tokens"] == "16 + 20 per mask"
    assert details["requests"] == ROWS + 1  # each row once, plus the one refused request
    assert "timeouts" not in details and "retries" not in details and "failed" not in details
    for p in read(run, "predictions.jsonl"):
        assert p["usage"]["completion_tokens"] <= 16 + 20 * len(p["surfaces"])
        assert set(json.loads(p["output"])) == {"answers"}
    code, again, err = evaluate(capsys, *demo, *server)  # asked again: the cache answers, nothing is sent
    assert code == 0 and again["AccL"] == run["AccL"] and again["VRate"] == run["VRate"]
    assert read(again, "analysis.json")["answers_from_cache"] == ROWS and "refused" not in err


def test_free_answers_are_invalid_in_shapes_the_report_lists_and_a_low_vrate_prints_a_hint(llama_server, demo, capsys):
    code, run, err = evaluate(capsys, *demo, "--predictor", "openai-compatible", "--model", llama_server.model,
                              "--base-url", llama_server.base_url, "--answers", "free")
    assert code == 0, err
    preds = read(run, "predictions.jsonl")
    invalid = [p for p in preds if p["parsed"] is None or len(p["parsed"]) != len(p["surfaces"])]
    shapes = read(run, "analysis.json")["invalid_shapes"]
    assert sum(s["rows"] for s in shapes) == len(invalid) and all(s["examples"] for s in shapes)
    report = read(run, "report/report.md")
    assert ("## Invalid answers" in report) == bool(invalid)
    for s in shapes:
        assert f"| {s['shape']} | {s['rows']} |" in report
    hint = [line for line in err.splitlines() if "hint:" in line]
    assert len(hint) == (1 if run["VRate"] < 0.5 else 0)
    if hint:
        assert "drop --answers free" in hint[0] and shapes[0]["shape"] in hint[0]


def test_a_prompt_longer_than_the_context_fails_the_run_and_caches_nothing(llama_server, tiny_release, tmp_path,
                                                                              capsys):
    shipped = (Path(__file__).resolve().parents[2] / "evaluation" / "data" / "prompts.toml").read_text()
    long_prompts = tmp_path / "long.toml"
    long_prompts.write_text(shipped.replace('system = ""', 'system = """' + "Read the text closely. " * 600 + '"""', 1))
    cache = Path(tiny_release["warehouse"]) / "cache" / "responses"
    before = set(cache.rglob("*.json")) if cache.exists() else set()
    code, _, err = evaluate(capsys, "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                            "--predictor", "openai-compatible", "--model", llama_server.model, "--base-url",
                            llama_server.base_url, "--prompts", str(long_prompts), "--limit", "2")
    [line] = [line for line in err.splitlines() if line.startswith("express evaluate:")]  # one line, after the
    assert code == 2 and "longer than the context" in line and "nothing was truncated" in line  # format notice
    assert (set(cache.rglob("*.json")) if cache.exists() else set()) == before


def test_a_server_that_is_down_fails_the_run_in_one_line(tiny_release, capsys):
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    code, _, err = evaluate(capsys, "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                            "--predictor", "openai-compatible", "--model", "m-down", "--base-url", url, "--limit", "2")
    assert code == 2 and "cannot reach the server" in err and len(err.strip().splitlines()) == 1, err
    configs = [json.loads(p.read_text()) for p in (Path(tiny_release["warehouse"]) / "evaluations").glob("*/config.json")]
    assert any(c["model"] == "m-down" and c["status"] == "failed" for c in configs)


def test_real_lm_eval_scores_the_exported_task_as_express_score_does(llama_server, tiny_release, tmp_path, capsys):
    out = tmp_path / "task"
    assert main(["export", "lm-eval", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--out", str(out)]) == 0
    task = json.loads(capsys.readouterr().out)["task"]
    assert main(["export", "lm-eval", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--out", str(out)]) == 2  # never over an earlier export
    exported = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text().splitlines()]
    assert exported and all("text" not in row and row["prompt"].endswith(row["masked_text"]) for row in exported)
    # Three few-shot turns from the validation split show the answer format, so some answers are valid.
    env = {**os.environ, "OPENAI_API_KEY": "EMPTY", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [str(Path(sys.executable).with_name("lm_eval")), "--model", "local-chat-completions", "--model_args",
         f"model={llama_server.model},base_url={llama_server.base_url}/chat/completions,num_concurrent=1,"
         "max_retries=1,tokenized_requests=False", "--include_path", str(out), "--tasks", task, "--limit", "5",
         "--num_fewshot", "3", "--gen_kwargs", "max_gen_toks=12", "--apply_chat_template", "--log_samples",
         "--output_path", str(tmp_path / "lm-eval")], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    [results] = list((tmp_path / "lm-eval").rglob("results_*.json"))
    [samples] = list((tmp_path / "lm-eval").rglob(f"samples_{task}_*.jsonl"))
    ours = json.loads(results.read_text())["results"][task]
    answers = [json.loads(line) for line in samples.read_text().splitlines()]
    assert len(answers) == 5
    preds = tmp_path / "predictions.jsonl"
    preds.write_text("".join(json.dumps({"surfaces": a["doc"]["surfaces"], "output": a["filtered_resps"][0]}) + "\n"
                             for a in answers))
    express = score_file(preds, default_decomposition())
    for metric in ("AccL", "AccV", "F1V", "VRate"):
        assert ours[f"{metric},none"] == pytest.approx(express[metric], abs=1e-12), metric
    assert 0 < express["VRate"]  # not a comparison of zeros
