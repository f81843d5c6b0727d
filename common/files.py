"""The one way to write a file: under a temp name beside it, fsynced, then renamed into place, so a
reader sees the old file or the new one, never half of one. Whole files (`write_atomic`,
`write_json`), streams (`writing`), a finished file or folder (`place`, `place_folder`), and several
files of a folder that change together (a journal of renames, replayed after a crash).

One temp-name scheme (`temp_path`): `.tmp-<stem>-<tag><suffix>`, beside the final path. A killed
writer leaves only such a name, which `remove_temps` clears; nothing else renames a file into place.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

JOURNAL = ".commit-journal.json"
TEMP_PREFIX = ".tmp-"
TEMP_GLOB = TEMP_PREFIX + "*"  # every temp file or folder, whoever wrote it


def temp_path(final: Path, tag: str | None = None) -> Path:
    """Where `final` is written before it is renamed into place. The suffix stays last (a tool that
    reads it, np.save or a zstd reader, sees the same kind of file); `tag` is random unless given:
    a fixed tag lets a rerun write over what a killed run left (one writer at a time only)."""
    final = Path(final)
    return final.with_name(f"{TEMP_PREFIX}{final.stem}-{tag or uuid.uuid4().hex[:8]}{final.suffix}")


def is_temp(path: Path) -> bool:
    """Is `path` a temp name of the scheme (a file no reader should take for a finished one)?"""
    return Path(path).name.startswith(TEMP_PREFIX)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


@contextmanager
def writing(path: Path, mode: str = "wb", *, encoding: str = "utf-8", fsync: bool = True,
            overwrite: bool = True, tag: str | None = None) -> Iterator[IO[Any]]:
    """An open file ("wb" or "w") that becomes `path` only when the block ends without an error:
    written under `temp_path(path, tag)`, fsynced, renamed (or, `overwrite=False`, linked: a
    FileExistsError rather than replacing `path`). An error in the block removes the temp file and
    leaves `path` as it was; a kill leaves only the temp file."""
    if mode not in ("w", "wb"):
        raise ValueError(f"writing() opens a new file to write ('w' or 'wb'), not {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path, tag)
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": encoding})) as fh:
            yield fh
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # FileExistsError rather than replacing a batch
    finally:
        tmp.unlink(missing_ok=True)
    if fsync:
        fsync_dir(path.parent)


def write_atomic(path: Path, data: bytes, overwrite: bool = True, fsync: bool = True) -> None:
    """Write a whole file or nothing (see `writing`)."""
    with writing(path, "wb", overwrite=overwrite, fsync=fsync) as fh:
        fh.write(data)


def write_json(path: Path, data: Any, *, indent: int | None = 2, sort_keys: bool = False,
               ensure_ascii: bool = True, fsync: bool = True) -> None:
    """A JSON document as one line of text or indented, with a final newline, written whole."""
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii) + "\n"
    write_atomic(path, text.encode("utf-8"), fsync=fsync)


def place(src: Path, final: Path, fsync: bool = True) -> None:
    """Rename a finished file (a step's output, a completed pull) onto `final`, replacing it; with
    `fsync`, its bytes and the rename reach the disk first and last."""
    if fsync:
        _fsync_file(src)
    os.replace(src, final)
    if fsync:
        fsync_dir(Path(final).parent)


def place_folder(src: Path, final: Path) -> None:
    """Rename a finished folder into place; never over another: FileExistsError (or the OSError of
    the rename) when `final` exists."""
    if os.path.lexists(final):
        raise FileExistsError(f"{final} exists")
    os.rename(src, final)  # and fails if a non-empty folder appeared since
    fsync_dir(Path(final).parent)


def remove_temps(folder: Path, deep: bool = False) -> list[Path]:
    """Delete the temp files and folders of the scheme in `folder` (`deep`: in its subfolders too),
    what killed writers left; returns them. Only for a caller that holds the folder's lock: a live
    writer's temp goes too."""
    found = sorted(folder.rglob(TEMP_GLOB) if deep else folder.glob(TEMP_GLOB)) if folder.is_dir() else []
    gone = [p for p in found if not any(q in p.parents for q in found)]
    for p in gone:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)
    return gone


def staged(path: Path, tag: str = "commit") -> Path:
    """Where the new version of `path` is written before `commit_together` renames it: a temp name
    with a fixed tag, so a rerun after a crash writes over what the crash left."""
    return temp_path(path, tag)


def commit_together(folder: Path, changes: dict[Path, Path | None]) -> None:
    """Rename each staged file (value) onto its final path (key), or delete the final path (value
    None), as one change: the journal in `folder` lists them before the first rename, so a crash
    part-way is finished by `finish_commits` and no reader is left with half of it."""
    if not changes:
        return
    for tmp in changes.values():
        if tmp is not None:
            _fsync_file(tmp)
    journal = folder / JOURNAL
    write_atomic(journal, json.dumps([[str(f), str(t) if t else None] for f, t in changes.items()]).encode())
    _replay(journal)


def _replay(journal: Path) -> None:
    entries = json.loads(journal.read_text())
    for final, tmp in entries:
        if tmp is None:
            Path(final).unlink(missing_ok=True)
        elif Path(tmp).exists():  # gone: renamed before the crash
            place(Path(tmp), Path(final), fsync=False)  # fsynced before the journal was written
    for folder in sorted({Path(final).parent for final, _ in entries}):
        fsync_dir(folder)
    journal.unlink()


def finish_commits(root: Path) -> int:
    """Finish every change a crash interrupted under `root`; returns how many."""
    found = sorted(root.rglob(JOURNAL)) if root.is_dir() else []
    for journal in found:
        _replay(journal)
    return len(found)
