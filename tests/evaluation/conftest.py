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


@pytest.fixture(scope="session")
def tiny_release(tmp_path_factory) -> dict:
    from common.parquet import ParquetSink
    from schemas.config import recipe_from_dict
    from schemas.records import EXAMPLES
    from warehouse.layout import Warehouse
    from warehouse.publish import publish_release

    root = tmp_path_factory.mktemp("tiny-warehouse")
    examples = root / "examples.parquet"
    with ParquetSink(examples, EXAMPLES) as sink:
        for row in tiny_examples():
            sink.write(row)
    recipe = recipe_from_dict({"dataset": {"name": "tiny"},
                               "splits": {"train": 0.6, "validation": 0.1, "test": 0.3, "seed": "tiny"}})
    release = publish_release(examples, Warehouse(Path(root)), recipe, {})
    return {"warehouse": str(root), "release": f"{release.dataset}/{release.version}", "path": str(release.path)}
