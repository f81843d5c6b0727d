"""Withdrawn releases: a release that holds a taken-down post is marked withdrawn by a sidecar next
to its folder (`<dataset>/<version>.withdrawn.json`), so the release itself stays as published.
Purging deletes its data files and gate results and keeps its manifest, so the version number stays
taken and a later release's parent can still be read. What a withdrawn report or card says instead
of the release is here too."""
from __future__ import annotations

import html
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from common.errors import UserError
from common.files import write_json
from common.locking import file_lock
from warehouse.layout import ReleasePaths, Warehouse


def withdrawal(release_dir: Path) -> dict[str, Any] | None:
    """What the sidecar of a release says, or None when it is not withdrawn."""
    sidecar = ReleasePaths(release_dir).withdrawn
    return json.loads(sidecar.read_text()) if sidecar.exists() else None


class WithdrawnRelease(UserError, ValueError):
    """A command that would write from a withdrawn release without --force (nothing was written)."""


_WARNED: set[str] = set()


def withdrawn_note(release_id: str, record: dict[str, Any]) -> str:
    """One line naming why a release was withdrawn and what to use instead."""
    successor = record.get("successor")
    return f"{release_id} was {describe(record)}" + (f"; use {successor} instead" if successor else "")


def warn_withdrawn(release_id: str, record: dict[str, Any]) -> None:
    """Say once per process, on stderr, that a release read is withdrawn (docs/takedowns.md)."""
    if release_id not in _WARNED:
        _WARNED.add(release_id)
        print(f"express: warning: {withdrawn_note(release_id, record)}", file=sys.stderr, flush=True)


def refuse_withdrawn(release_id: str, record: dict[str, Any] | None, command: str, force: bool) -> None:
    """`express COMMAND` does not read a withdrawn release without --force: its rows left for a reason."""
    if record is not None and not force:
        raise WithdrawnRelease(f"{withdrawn_note(release_id, record)}; `express {command}` refuses it (with --force "
                               "it reads the release all the same, without its taken-down rows)")


def withdraw(release_dir: Path, record: dict[str, Any]) -> None:
    """Mark a release withdrawn, or say anew why (`record`: successor, rows, posts, ledger version,
    time): a later takedown names the newer successor and counts what the whole ledger took."""
    write_json(ReleasePaths(release_dir).withdrawn, record)


def purge(wh: Warehouse, release_dir: Path) -> bool:
    """Delete a withdrawn release's data files and gate results (its manifest stays) and its
    catalog views; returns whether anything was left to delete."""
    from warehouse.releases.catalog import drop_release  # DuckDB: only a purge opens the catalog

    record = withdrawal(release_dir)
    if record is None:
        raise ValueError(f"{release_dir}: not withdrawn; only a withdrawn release is purged")
    paths = ReleasePaths(release_dir)
    present = [p for p in (paths.data, paths.gate) if p.exists()]
    for p in present:
        shutil.rmtree(p)  # read-only files go with their folder
    with file_lock(wh.catalog_lock):
        drop_release(wh, release_dir.parent.name, release_dir.name)
    if not record.get("purged"):
        write_json(paths.withdrawn, {**record, "purged": True})
    return bool(present)


def describe(record: dict[str, Any]) -> str:
    """One phrase for listings: why, by what, and whether its files are gone."""
    why = f"withdrawn: {record.get('rows', 0)} rows of {record.get('posts', 0)} taken-down posts"
    by = f"; successor {record['successor']}" if record.get("successor") else ""
    return why + by + ("; files purged" if record.get("purged") else "")


def notice_html(release_id: str, record: dict[str, Any]) -> str:
    """The page a withdrawn release's report becomes (no example of it is shown any more)."""
    successor = record.get("successor")
    then = f"<p>Its successor is <b>{html.escape(successor)}</b>; see that release's report.</p>" if successor else ""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(release_id)}: withdrawn</title></head><body>"
            f"<h1>{html.escape(release_id)} was withdrawn</h1>"
            f"<p>{html.escape(describe(record))} (ledger version {record.get('ledger_version')}).</p>{then}"
            "<p>The data-quality report of a withdrawn release is not kept: it showed examples of it.</p>"
            "</body></html>\n")


def notice_card(release_id: str, record: dict[str, Any]) -> str:
    """The README.md a withdrawn release's card folder becomes (its data files are gone)."""
    successor = record.get("successor")
    then = (f"Use `{successor}` instead: `express card --release {successor} --out DIR`, then upload that "
            "folder over this one (docs/takedowns.md).\n") if successor else ""
    return (f"# {release_id} (withdrawn)\n\n{release_id} was {describe(record)}. Its data files were "
            f"removed from this folder.\n\n{then}")
