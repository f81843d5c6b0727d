"""The gate's PII check: the scrubber's own detectors (privacy/scrubber.py) over the released texts.

The suite (schemas/expectations/examples.json) expects the computed columns pii_in_text and
pii_in_masked_text to be null; here they are filled with what the detectors still find
('EMAIL: jo@example.com; ...'). Structured kinds are cheap and run on every row; names (NER) run
on the `text` of a deterministic sample of at most `names_sample_rows` rows (pii.json), chosen by
a hash of the example id, so the gate's NER time is bounded whatever the release size.

The structured scan is a pure function of a text and the detectors, so a build runs it ahead, on
each extracted shard while the workers extract (`prescan`, on the otherwise idle flow process):
the gate then looks each released text up by its digest and scans only the texts no prescan of
the same detectors saw. A prescan of other detectors (kinds, code, library versions) is ignored.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from common.files import writing
from privacy.scrubber import KINDS, Found, Scrubber, cached_scrubber

PRESCAN = pa.schema([("digest", pa.binary(16)), ("found", pa.string())])
_DETECTORS_KEY = b"express.pii_detectors"


def text_digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def detectors_id(scrubber: Scrubber) -> str:
    """What the structured findings depend on: the kinds, the detectors and their libraries, and
    the source of the modules (and word lists) that define them."""
    import privacy.addresses
    import privacy.numbers
    import privacy.recognizers
    import privacy.scrubber

    h = hashlib.sha256(json.dumps(scrubber.describe(), sort_keys=True).encode())
    for module in (privacy.scrubber, privacy.recognizers, privacy.numbers, privacy.addresses):
        h.update(Path(module.__file__).read_bytes())
    h.update(privacy.addresses.WORDS_FILE.read_bytes())
    return h.hexdigest()


def _described(text: str, spans: Sequence[Found]) -> str | None:
    """The gate's report of the PII in one text ('EMAIL: jo@example.com; ...'), None when clean."""
    return "; ".join(f"{s.kind.upper()}: {text[s.start:s.end]}" for s in spans) or None


def prescan(texts: Iterable[str], out: Path, kinds: tuple[str, ...]) -> int:
    """Run the gate's structured scan over `texts` (each distinct text once) and write what it found
    to `out`: every digest, with the report where PII was found. Returns the texts scanned."""
    scrubber = cached_scrubber(tuple(kinds))
    unique = {text_digest(t): t for t in texts if t}
    found = scrubber.find_many(list(unique.values()), names=False)
    table = pa.table({"digest": list(unique), "found": [_described(t, f) for t, f in zip(unique.values(), found)]},
                     schema=PRESCAN.with_metadata({_DETECTORS_KEY: detectors_id(scrubber).encode()}))
    with writing(out, "wb") as fh:
        pq.write_table(table, fh)
    return len(unique)


def load_prescans(paths: Iterable[Path], scrubber: Scrubber) -> tuple[set[bytes], dict[bytes, str]]:
    """(digests of clean texts, report by digest of texts with PII) from the prescan files written
    with these detectors; files of other detectors, unreadable or partial ones are skipped."""
    clean: set[bytes] = set()
    dirty: dict[bytes, str] = {}
    wanted = detectors_id(scrubber).encode()
    for path in paths:
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException):
            continue
        if (table.schema.metadata or {}).get(_DETECTORS_KEY) != wanted or table.schema.remove_metadata() != PRESCAN:
            continue
        for digest, found in zip(table.column("digest").to_pylist(), table.column("found").to_pylist()):
            if found is None:
                clean.add(digest)
            else:
                dirty[digest] = found
    return clean, dirty


class GatePii:
    def __init__(self, spec: dict[str, Any], kinds: tuple[str, ...] | None, files: dict[str, Path],
                 prescans: Iterable[Path] = ()) -> None:
        self.spec = spec
        self.kinds = tuple(KINDS if kinds is None else kinds)
        self.scrubber = cached_scrubber(self.kinds) if self.kinds else None
        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in files.values())
        self.share = min(1.0, spec["names_sample_rows"] / rows) if rows else 1.0
        self.rows = self.name_rows = self.prescanned = 0
        self.seconds = 0.0
        self._clean, self._dirty = load_prescans(prescans, self.scrubber) if self.scrubber else (set(), {})

    def _structured(self, texts: list[str]) -> list[str | None]:
        """The structured report of each text: looked up in the prescans, else scanned now (texts
        are hashed only when there are prescans to look them up in)."""
        out: list[str | None] = [None] * len(texts)
        if not self._clean and not self._dirty:
            todo = [i for i, t in enumerate(texts) if t]
        else:
            todo = []
            for i, t in enumerate(texts):
                if not t or (d := text_digest(t)) in self._clean:
                    continue
                if d in self._dirty:
                    out[i] = self._dirty[d]
                else:
                    todo.append(i)
            self.prescanned += sum(1 for t in texts if t) - len(todo)
        for i, spans in zip(todo, self.scrubber.find_many([texts[i] for i in todo], names=False)):
            out[i] = _described(texts[i], spans)
        return out

    def _sampled(self, post_id: Any, segment_index: Any) -> bool:
        digest = hashlib.blake2b(f"{post_id}\0{segment_index}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64 < self.share

    def columns(self, table: pa.Table) -> dict[str, list[str | None]]:
        """One pii_in_<column> per checked column of `table` (examples rows): the PII found, or None."""
        t0 = time.perf_counter()
        out: dict[str, list[str | None]] = {}
        for column in self.spec["columns"]:
            texts = [t if isinstance(t, str) else "" for t in table.column(column).to_pylist()]
            found = self._structured(texts) if self.scrubber else [None] * len(texts)
            if self.scrubber is not None and self.scrubber.names is not None and column == self.spec["names_column"]:
                ids = zip(table.column("post_id").to_pylist(), table.column("segment_index").to_pylist())
                picked = [i for i, (p, s) in enumerate(ids) if self._sampled(p, s)]
                # the scrubber's own find: names from NER, cues and the gazetteer, and the name line
                # heading a contact block (which needs the structured finds beside it)
                for i, spans in zip(picked, self.scrubber.find_many([texts[i] for i in picked])):
                    names = _described(texts[i], [s for s in spans if s.kind == "name"])
                    if names:
                        found[i] = f"{found[i]}; {names}" if found[i] else names
                self.name_rows += len(picked)
            out[f"pii_in_{column}"] = found
        self.rows += len(table)
        self.seconds += time.perf_counter() - t0
        return out

    def describe(self) -> dict[str, Any]:
        return {"check": self.spec["name"], "version": self.spec["version"], "sha256": self.spec.get("sha256"),
                "kinds": list(self.kinds), "columns": self.spec["columns"], "rows_checked": self.rows,
                "texts_from_prescan": self.prescanned,
                "names_sample_rows": self.spec["names_sample_rows"], "rows_name_checked": self.name_rows,
                "seconds": round(self.seconds, 3),
                "detectors": self.scrubber.describe() if self.scrubber else None}
