"""The gate's PII check: the scrubber's own detectors (filters/pii.py) over the released texts.

The suite (schemas/expectations/examples.json) expects the computed columns pii_in_text and
pii_in_masked_text to be null; here they are filled with what the detectors still find
('EMAIL: jo@example.com; ...'). Structured kinds are cheap and run on every row; names (NER) run
on the `text` of a deterministic sample of at most `names_sample_rows` rows (pii.json), chosen by
a hash of the example id, so the gate's NER time is bounded whatever the release size.
"""
from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from filters.pii import KINDS, KIND_OF, Found, cached_scrubber


class GatePii:
    def __init__(self, spec: dict[str, Any], kinds: tuple[str, ...] | None, files: dict[str, Path]) -> None:
        self.spec = spec
        self.kinds = tuple(KINDS if kinds is None else kinds)
        self.scrubber = cached_scrubber(self.kinds) if self.kinds else None
        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files.values())
        self.share = min(1.0, spec["names_sample_rows"] / rows) if rows else 1.0
        self.rows = self.name_rows = 0
        self.seconds = 0.0

    def _sampled(self, post_id: Any, segment_index: Any) -> bool:
        digest = hashlib.blake2b(f"{post_id}\0{segment_index}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64 < self.share

    def add_columns(self, frame: pd.DataFrame) -> pd.DataFrame:
        """frame with one pii_in_<column> per checked column: the PII found, or None."""
        t0 = time.perf_counter()
        for column in self.spec["columns"]:
            texts = [t if isinstance(t, str) else "" for t in frame[column]]
            found = self.scrubber.find_many(texts, names=False) if self.scrubber else [[] for _ in texts]
            if self.scrubber is not None and self.scrubber.names is not None and column == self.spec["names_column"]:
                picked = [i for i, (p, s) in enumerate(zip(frame["post_id"], frame["segment_index"])) if self._sampled(p, s)]
                for i, people in zip(picked, self.scrubber.names.find_many([texts[i] for i in picked])):
                    found[i] += [Found(KIND_OF[r.entity_type], r.entity_type, r.start, r.end) for r in people]
                self.name_rows += len(picked)
            frame[f"pii_in_{column}"] = pd.Series(
                ["; ".join(f"{s.kind.upper()}: {text[s.start:s.end]}" for s in spans) or None
                 for text, spans in zip(texts, found)], index=frame.index, dtype="object")
        self.rows += len(frame)
        self.seconds += time.perf_counter() - t0
        return frame

    def describe(self) -> dict[str, Any]:
        return {"check": self.spec["name"], "version": self.spec["version"], "sha256": self.spec.get("sha256"),
                "kinds": list(self.kinds), "columns": self.spec["columns"], "rows_checked": self.rows,
                "names_sample_rows": self.spec["names_sample_rows"], "rows_name_checked": self.name_rows,
                "seconds": round(self.seconds, 3),
                "detectors": self.scrubber.describe() if self.scrubber else None}
