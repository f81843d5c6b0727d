"""A release is read only as it was published: its manifest must be whole and have the sha256
recorded beside it (`manifest.json.sha256`, as `sha256sum -c` reads it), each of its data files
the size, sha256 and rows the manifest records, and each split as many rows as its files hold; or
the command refuses it, naming the file. Hashing is skipped for a file checked before with the
same size and modification time (a cache in the warehouse), so a release is hashed once, not by
every command that reads it."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common.checksums import sha256_file
from common.errors import UserError
from common.files import write_atomic
from warehouse.layout import MANIFEST, ReleasePaths

NEVER_CHANGED = "a published release is never changed (restore it from a copy or publish anew)"
MANIFEST_KEYS = ("dataset", "version")  # what every reader of a release relies on


class ReleaseChanged(UserError, ValueError):
    """A release file differs from what its manifest records: releases are immutable."""


def manifest_sum_line(data: bytes) -> str:
    """The line `manifest.json.sha256` holds: `sha256sum`'s own format."""
    return f"{hashlib.sha256(data).hexdigest()}  {MANIFEST}\n"


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of the release at `root`, as published: missing, empty, cut short, changed
    since (its recorded sha256; releases published before it was recorded have none) or without
    a release's keys, it is refused naming the file."""
    paths = ReleasePaths(root)
    try:
        data = paths.manifest.read_bytes()
    except FileNotFoundError:
        raise ReleaseChanged(f"{paths.manifest}: missing: release {root.parent.name}/{root.name} cannot be read "
                             f"without it; {NEVER_CHANGED}") from None
    except OSError as exc:
        raise ReleaseChanged(f"{paths.manifest}: cannot be read ({exc.strerror})") from None
    try:
        recorded = paths.manifest_sum.read_text().split()[0]
    except (FileNotFoundError, IndexError):
        recorded = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReleaseChanged(f"{paths.manifest_sum}: cannot be read ({exc})") from None
    try:
        manifest = json.loads(data)
    except ValueError as exc:
        what = "empty" if not data.strip() else f"not whole JSON ({exc})"
        raise ReleaseChanged(f"{paths.manifest}: {what}; {NEVER_CHANGED}") from None
    actual = hashlib.sha256(data).hexdigest()
    if recorded is not None and actual != recorded:
        raise ReleaseChanged(f"{paths.manifest}: sha256 {actual[:12]}... where {paths.manifest_sum.name} records "
                             f"{recorded[:12]}...; {NEVER_CHANGED}")
    missing = [k for k in MANIFEST_KEYS if k not in manifest] if isinstance(manifest, dict) else list(MANIFEST_KEYS)
    if missing:
        raise ReleaseChanged(f"{paths.manifest}: not a release manifest (no {', '.join(missing)}); {NEVER_CHANGED}")
    return manifest


def check_release_files(root: Path, manifest: dict[str, Any], cache: Path | None = None) -> None:
    """Raise ReleaseChanged for the first data file of the release at `root` that is missing or
    differs from its manifest entry (size first, then sha256, then its rows), or for a split whose
    rows its files do not hold."""
    known = _read(cache)
    learned = {}
    for name, entry in sorted((manifest.get("files") or {}).items()):
        path = root / name
        try:
            stat = path.stat()
        except FileNotFoundError:
            raise ReleaseChanged(f"{path}: missing; its release's manifest lists it") from None
        expected = entry.get("bytes")
        if expected is not None and stat.st_size != expected:
            raise ReleaseChanged(f"{path}: {stat.st_size} bytes where its release's manifest records {expected}; "
                                 "a published release is never changed (restore the file or publish anew)")
        key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
        digest = known.get(key) or sha256_file(path)
        if digest != entry.get("sha256"):
            raise ReleaseChanged(f"{path}: sha256 {digest[:12]}... where its release's manifest records "
                                 f"{str(entry.get('sha256'))[:12]}...; a published release is never changed "
                                 "(restore the file or publish anew)")
        learned[key] = digest
        rows = pq.read_metadata(path).num_rows
        if entry.get("rows") is not None and rows != entry["rows"]:
            raise ReleaseChanged(f"{root / MANIFEST}: records {entry['rows']} rows for {name}, which holds {rows}; "
                                 f"{NEVER_CHANGED}")
    _check_split_rows(root, manifest)
    if cache is not None and not learned.keys() <= known.keys():
        _write(cache, {**known, **learned})


def _check_split_rows(root: Path, manifest: dict[str, Any]) -> None:
    """Each split's `rows` is what its files hold (their own counts were checked against the files)."""
    entries = list((manifest.get("files") or {}).values())
    if not entries or not all(isinstance(e.get("split"), str) and isinstance(e.get("rows"), int) for e in entries):
        return  # no file entries that name their split and rows: nothing to add up
    held: dict[str, int] = {}
    for entry in entries:
        held[entry["split"]] = held.get(entry["split"], 0) + entry["rows"]
    for split, rows in (manifest.get("rows") or {}).items():
        if rows != held.get(split, 0):
            raise ReleaseChanged(f"{root / MANIFEST}: records {rows} rows for the {split} split, whose files hold "
                                 f"{held.get(split, 0)}; {NEVER_CHANGED}")


def _read(cache: Path | None) -> dict[str, str]:
    if cache is None:
        return {}
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        return {}  # a cache that cannot be read is only a cost
    return data if isinstance(data, dict) else {}


def _write(cache: Path, data: dict[str, str]) -> None:
    """Whole or not at all (another command may read it meanwhile); a cache that cannot be written
    is only a cost."""
    try:
        write_atomic(cache, json.dumps(data, sort_keys=True).encode())
    except OSError:
        pass
