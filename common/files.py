"""Writing files whole or not at all: one file (temp file, fsync, rename), or several files of a
folder that must change together (a journal of renames, replayed after a crash)."""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

JOURNAL = ".commit-journal.json"


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes, overwrite: bool = True) -> None:
    """Write a whole file or nothing: temp file, fsync, rename (or link, to never overwrite)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # FileExistsError rather than replacing a batch
    finally:
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def staged(path: Path, tag: str = "commit") -> Path:
    """Where the new version of `path` is written before `commit_together` renames it: a fixed
    name, so a rerun after a crash writes over what the crash left."""
    return path.with_name(f".{tag}-{path.name}")


def commit_together(folder: Path, changes: dict[Path, Path | None]) -> None:
    """Rename each staged file (value) onto its final path (key), or delete the final path (value
    None), as one change: the journal in `folder` lists them before the first rename, so a crash
    part-way is finished by `finish_commits` and no reader is left with half of it."""
    if not changes:
        return
    for final, tmp in changes.items():
        if tmp is not None:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
    journal = folder / JOURNAL
    write_atomic(journal, json.dumps([[str(f), str(t) if t else None] for f, t in changes.items()]).encode())
    _replay(journal)


def _replay(journal: Path) -> None:
    for final, tmp in json.loads(journal.read_text()):
        if tmp is None:
            Path(final).unlink(missing_ok=True)
        elif Path(tmp).exists():  # gone: renamed before the crash
            os.replace(tmp, final)
    fsync_dir(journal.parent)
    journal.unlink()


def finish_commits(root: Path) -> int:
    """Finish every change a crash interrupted under `root`; returns how many."""
    found = sorted(root.rglob(JOURNAL)) if root.is_dir() else []
    for journal in found:
        _replay(journal)
    return len(found)
