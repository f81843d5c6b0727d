"""An append-only folder of batch files, `000001.jsonl`, `000002.jsonl`, ...: each append is one
immutable file, written whole (temp file, fsync) and linked into place under a lock, so it is never
overwritten and never half written. Version N is batches 1..N, and its sha256 the hash of their
bytes in order, so a build can record exactly what it read. The review ledger and the takedown
ledger are two such folders."""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from common.files import write_atomic
from common.jsonl import read_jsonl
from common.locking import file_lock

_BATCH = re.compile(r"^(\d{6})\.jsonl$")
T = TypeVar("T")


def now(timespec: str = "seconds") -> str:
    """A batch line's time: UTC, ISO 8601 with a Z."""
    return datetime.now(timezone.utc).isoformat(timespec=timespec).replace("+00:00", "Z")


def record_from_json(cls: type[T], row: Any, where: str, error: type[ValueError], schema: str, what: str,
                     required: Sequence[str] = (), choices: Mapping[str, Sequence[str]] | None = None) -> T:
    """A batch line as a record of `cls` (a dataclass with a `schema` field): a JSON object of this
    schema, with its required fields and its fields' allowed values; errors name the file and line."""
    if not isinstance(row, dict):
        raise error(f"{where}: a {what} line must be a JSON object")
    if row.get("schema", schema) != schema:
        raise error(f"{where}: unknown {what} schema {row.get('schema')!r} (this code reads {schema})")
    missing = [k for k in required if row.get(k) in (None, "") and k not in (choices or {})]
    for name, allowed in (choices or {}).items():
        if row.get(name) not in allowed:
            raise error(f"{where}: {name} must be one of {', '.join(allowed)}, not {row.get(name)!r}")
    if missing:
        raise error(f"{where}: missing {', '.join(missing)}")
    return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in row})  # type: ignore[arg-type]


class BatchFolder:
    """`folder` holds the batches, `lock` serialises writers; errors are `error` (a ValueError the
    caller's command reports), worded with `name` ("ledger", "takedown"). A ledger subclasses it
    with its own record type (`append_rows` and `batches` take what writes and reads one)."""

    def __init__(self, folder: Path, lock: Path, error: type[ValueError], name: str, holder: str):
        self.folder, self.lock, self.error, self.name, self.holder = folder, lock, error, name, holder

    def batch_files(self) -> list[Path]:
        found = sorted(p for p in self.folder.iterdir() if _BATCH.match(p.name)) if self.folder.is_dir() else []
        for n, p in enumerate(found, start=1):
            if int(p.stem) != n:
                raise self.error(f"{p}: {self.name} batch {n:06d} is missing; the ledger is not contiguous")
        return found

    @property
    def version(self) -> int:
        return len(self.batch_files())

    def append_rows(self, rows: list[dict[str, Any]], check: Callable[[Any, str], Any]) -> int:
        """Add one batch of `rows` (all or none; each must pass `check(row, where)` as read back);
        returns the new version."""
        lines = [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in rows]
        if not lines:
            return self.version
        for n, line in enumerate(lines, start=1):
            check(json.loads(line), f"new batch line {n}")  # never write what cannot be read
        with file_lock(self.lock, timeout=60, holder=self.holder):
            version = self.version + 1
            write_atomic(self.folder / f"{version:06d}.jsonl", ("\n".join(lines) + "\n").encode("utf-8"),
                         overwrite=False)
        return version

    def parsed(self, parse: Callable[[Any, str], T], version: int | None = None,
               since: int = 0) -> list[tuple[int, list[T]]]:
        """(batch number, its rows as `parse(row, "file:line")` gives them) of batches since+1 .. version."""
        files = self.batch_files()
        if version is not None and version > len(files):
            raise self.error(f"{self.folder}: {self.name} version {version} does not exist (latest is {len(files)})")
        return [(k, [parse(row, f"{path}:{n}") for n, row in read_jsonl(path, self.error)])
                for k, path in enumerate(files[since:version], start=since + 1)]

    def sha256(self, version: int | None = None) -> str:
        """Hash of the bytes of batches 1..version: what a build records beside the version."""
        h = hashlib.sha256()
        for path in self.batch_files()[:version]:
            h.update(path.read_bytes())
        return h.hexdigest()
