"""`express evaluate`'s per-run flags, each seen where it acts: in the requests the chat server gets
(a fake OpenAI-compatible server on 127.0.0.1), in how many it gets at once, in a request given up
and retried, or in the baseline's answers. Each would fail if its flag were ignored. Every run asks
another model name, so no answer comes from the response cache of an earlier one."""
import json
import tomllib
from pathlib import Path

import pytest

from evaluation.run_numbers import read_run_predictions
from flows.cli import main
from schemas.config import EvaluateConfig
from tests.fakes.openai_server import FakeOpenAIServer, target_text

PROMPTS_FILE = Path(__file__).resolve().parents[2] / "evaluation" / "data" / "prompts.toml"
DEFAULTS = EvaluateConfig()


def evaluate(tiny_release, capsys, *flags: str) -> dict:
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--split", "test", "--no-report", "--bootstrap", "0", *flags])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def chat(server: FakeOpenAIServer, model: str) -> list[str]:
    return ["--predictor", "openai-compatible", "--model", model, "--base-url", server.base_url]


def test_sampling_key_and_prompt_flags_reach_the_chat_server(tiny_release, capsys, monkeypatch,
                                                             tmp_path):
    """--temperature, --max-tokens, --api-key-env, --prompts FILE and --prompt-variant, all set to
    something other than their defaults."""
    shipped = tomllib.loads(PROMPTS_FILE.read_text())
    marker = "This post was written on a forum for people who want to talk."
    prompts = tmp_path / "prompts.toml"
    prompts.write_text(PROMPTS_FILE.read_text().replace(f'version = "{shipped["version"]}"', 'version = "mine-1"')
                       .replace('user = """The following text', f'user = """{marker} The following text', 1))
    assert marker in prompts.read_text()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-default-variable")
    monkeypatch.setenv("EXPRESS_TEST_KEY", "sk-the-named-variable")
    assert DEFAULTS.temperature != 0.7 and DEFAULTS.max_tokens != 33 and DEFAULTS.api_key_env != "EXPRESS_TEST_KEY"
    with FakeOpenAIServer() as server:
        out = evaluate(tiny_release, capsys, *chat(server, "m-flags"), "--temperature", "0.7", "--max-tokens", "33",
                       "--api-key-env", "EXPRESS_TEST_KEY", "--prompts", str(prompts), "--prompt-variant", "persona")
        bodies, auth = server.requests, server.auth_headers
    assert len(bodies) == out["rows"] > 0
    assert {b["temperature"] for b in bodies} == {0.7} and {b["max_tokens"] for b in bodies} == {33}
    assert set(auth) == {"Bearer sk-the-named-variable"}
    persona = shipped["variants"]["persona"]["system"]
    for body in bodies:
        (system,) = [m["content"] for m in body["messages"] if m["role"] == "system"]
        (user,) = [m["content"] for m in body["messages"] if m["role"] == "user"]
        assert system == persona and user.startswith(marker) and target_text(body).count("<mask>") > 0
    config = json.loads((Path(out["path"]) / "config.json").read_text())
    assert config["predictor_details"]["prompt_version"] == "mine-1"


def test_concurrency_sets_how_many_requests_are_in_flight_at_once(tiny_release, capsys):
    """The server holds each request until six are in (at most 30 s): a client that sends six at
    once is seen doing so; one that kept the default (four) never gets there."""
    assert DEFAULTS.concurrency < 6
    with FakeOpenAIServer() as server:
        server.hold_until_in_flight = 6
        out = evaluate(tiny_release, capsys, *chat(server, "m-concurrency"), "--concurrency", "6")
        assert out["rows"] >= 6 and server.max_in_flight == 6


def test_timeout_gives_up_on_a_stalled_request_which_is_retried(tiny_release, capsys):
    """The first request stalls 3 s: with --timeout 1 the client gives up on it and asks again
    (one retry, one request more than rows); with the default timeout it would wait and get it."""
    assert DEFAULTS.timeout > 3
    with FakeOpenAIServer() as server:
        server.faults.append(3.0)
        out = evaluate(tiny_release, capsys, *chat(server, "m-timeout"), "--timeout", "1", "--max-retries", "2",
                       "--concurrency", "1")
        assert len(server.requests) == out["rows"] + 1
    config = json.loads((Path(out["path"]) / "config.json").read_text())
    assert config["predictor_details"]["retries"] == 1 and out["VRate"] == 1.0


def test_context_words_changes_what_the_tfidf_baseline_reads_around_each_mask(tiny_release,
                                                                            capsys):
    """tfidf-logreg reads `context_words` words around each mask: one word instead of the default
    thirty leaves it less to go on, and its answers change."""
    answers = {}
    for flags in ((), ("--context-words", "1")):
        out = evaluate(tiny_release, capsys, "--predictor", "tfidf-logreg", *flags)
        answers[flags] = [p["output"] for p in read_run_predictions(Path(out["path"]))]
    default, narrow = answers.values()
    assert len(default) == len(narrow) > 0 and default != narrow


def _refused(tiny_release, capsys, *flags: str) -> tuple[int, str]:
    code = main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
                 "--split", "test", "--no-report", "--bootstrap", "0", *flags])
    return code, capsys.readouterr().err


def _runs(tiny_release) -> set[str]:
    root = Path(tiny_release["warehouse"]) / "evaluations"
    return {p.name for p in root.iterdir()} if root.exists() else set()


def test_a_web_page_where_the_api_should_be_is_said_in_one_line(tiny_release, capsys):
    with FakeOpenAIServer() as server:
        server.models_page = "<!doctype html><html><body>Welcome to nginx!</body></html>"
        code, err = _refused(tiny_release, capsys, *chat(server, "m-html"))
        assert not server.requests  # no chat request was sent
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"{server.base_url} is not an OpenAI-compatible API: GET {server.base_url}/models answered 200 with " \
           "text/html" in err


def test_a_server_that_fails_every_request_fails_the_run_which_stays_off_the_leaderboard(tiny_release,
                                                                                        capsys):
    from evaluation.outputs.runs import leaderboard
    from warehouse.layout import Warehouse

    before = _runs(tiny_release)
    with FakeOpenAIServer() as server:
        server.fail_every_chat = 501
        code, err = _refused(tiny_release, capsys, *chat(server, "m-501"), "--max-retries", "0")
    assert code == 2 and "Traceback" not in err, err
    assert "no answer came back" in err and "501" in err and "chat completions are not implemented here" in err
    (new,) = _runs(tiny_release) - before
    config = json.loads((Path(tiny_release["warehouse"]) / "evaluations" / new / "config.json").read_text())
    assert config["status"] == "failed"
    board = leaderboard(Warehouse.at(tiny_release["warehouse"]), tiny_release["release"], "test", latest_only=False)
    assert board and new not in {r.run_id for r in board}


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_a_limit_below_one_row_is_refused_before_any_work(tiny_release, capsys, limit):
    before = _runs(tiny_release)
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--release", tiny_release["release"], "--warehouse", tiny_release["warehouse"],
              "--limit", limit])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument --limit: must be at least 1, got {limit}" in err
    assert _runs(tiny_release) == before
