"""Short messages for errors a user can fix (the message names the file and line or key), and the
exit codes (common/errors.py); anything else is reported as an internal error with a pointer to
--debug."""
from __future__ import annotations

import argparse
import errno
from collections.abc import Callable
from typing import Any

from common.errors import INTERNAL_ERROR, USER_ERROR, UserError

PUBLISHING = {"build", "rebuild", "demo"}  # commands that publish a release


# What a full or failing disk says through the libraries that write (SQLite under Prefect's
# database, DuckDB, the OS), when no errno comes with it.
DISK_FULL = ("database or disk is full", "disk I/O error", "No space left on device", "Disk quota exceeded")


def disk_full(exc: BaseException) -> BaseException | None:
    """The error in `exc`'s chain that a full (or failing) disk raised, if any."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if isinstance(at, OSError) and at.errno in (errno.ENOSPC, errno.EDQUOT):
            return at
        if any(mark in str(at) for mark in DISK_FULL):
            return at
        at = at.__cause__ or at.__context__
    return None


def is_user_error(exc: BaseException) -> bool:
    """Ours (UserError), or what a bad input raises from a library: an unreadable file, a bad value;
    or a disk that is full (the user's to free, not a bug)."""
    return isinstance(exc, (UserError, OSError, ValueError, KeyError)) or disk_full(exc) is not None


def exit_code(exc: BaseException) -> int:
    return USER_ERROR if is_user_error(exc) else INTERNAL_ERROR


def explain(exc: BaseException, command: str = "") -> str:
    """One short paragraph: what went wrong and, for a command that publishes, that nothing was."""
    reason = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError):
        reason = f"unknown key {reason}"
    if (full := disk_full(exc)) is not None:
        said = (getattr(full, "strerror", None) or str(full)).strip().splitlines()[0]
        where = f" writing {full.filename}" if getattr(full, "filename", None) else ""
        again = ": a build resumes where it stopped" if command in PUBLISHING else ""
        reason = (f"the disk is full or failing{where} ({said}); free some space (the warehouse, PREFECT_HOME, "
                  f"the temporary folder) and run the same command again{again}")
    if not is_user_error(exc):
        reason = f"internal error: {type(exc).__name__}: {reason} (run again with --debug for the traceback)"
    return f"nothing published: {reason}" if command in PUBLISHING else reason


def recipe_number(section: str, key: str) -> Callable[[str], int | float]:
    """An argparse type for a flag that overrides the recipe's [section] key: its value is checked
    as the recipe's would be, from the key's one declaration (a whole number where the recipe holds
    one, within its bounds)."""
    from schemas.config import check_number, declared

    whole = isinstance(declared(section, key).default, int)
    return _parsed(lambda value: check_number(section, key, value, ""), whole)


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type for a count of the command line's own (not a recipe key)."""
    def checked(value: int | float) -> int:
        if value < low or (high is not None and value > high):
            raise ValueError(f"must be {f'from {low} to {high}' if high is not None else f'at least {low}'}, got {value}")
        return int(value)

    return _parsed(checked, True)


def _parsed(check: Callable[[Any], Any], whole: bool) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {'an integer' if whole else 'a number'}, got {text!r}") from None
        try:
            return check(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).lstrip(": ")) from None

    return parse
