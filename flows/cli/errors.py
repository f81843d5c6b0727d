"""Short messages for errors a user can fix (the message names the file and line or key), and the
exit codes (common/errors.py); anything else is reported as an internal error with a pointer to
--debug."""
from __future__ import annotations

from common.errors import INTERNAL_ERROR, USER_ERROR, UserError

PUBLISHING = {"build", "rebuild", "demo"}  # commands that publish a release


def is_user_error(exc: BaseException) -> bool:
    """Ours (UserError), or what a bad input raises from a library: an unreadable file, a bad value."""
    return isinstance(exc, (UserError, OSError, ValueError, KeyError))


def exit_code(exc: BaseException) -> int:
    return USER_ERROR if is_user_error(exc) else INTERNAL_ERROR


def explain(exc: BaseException, command: str = "") -> str:
    """One short paragraph: what went wrong and, for a command that publishes, that nothing was."""
    reason = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError):
        reason = f"unknown key {reason}"
    if not is_user_error(exc):
        reason = f"internal error: {type(exc).__name__}: {reason} (run again with --debug for the traceback)"
    return f"nothing published: {reason}" if command in PUBLISHING else reason
