"""A release is read only as it was published: each of its data files must have the size and
sha256 its manifest records, or the command refuses it, naming the file. Hashing is skipped for a
file checked before with the same size and modification time (a cache in the warehouse), so a
release is hashed once, not by every command that reads it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from common.checksums import sha256_file
from common.errors import UserError
from common.files import write_atomic


class ReleaseChanged(UserError, ValueError):
    """A release file differs from what its manifest records: releases are immutable."""


def check_release_files(root: Path, manifest: dict[str, Any], cache: Path | None = None) -> None:
    """Raise ReleaseChanged for the first data file of the release at `root` that is missing or
    differs from its manifest entry (size first, then sha256)."""
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
    if cache is not None and not learned.keys() <= known.keys():
        _write(cache, {**known, **learned})


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
