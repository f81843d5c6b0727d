"""Short messages for errors a user can fix (the message names the file and line or key); anything
else is reported as an internal error with a pointer to --debug."""
from __future__ import annotations


def _user_errors() -> tuple[type[BaseException], ...]:
    from pipeline.run import InputError
    from schemas.config import ConfigError
    from sources.dumps import DumpError
    from warehouse.locking import LockTimeout
    from warehouse.publish import PublishError

    return (ConfigError, InputError, DumpError, PublishError, LockTimeout, OSError, ValueError, KeyError)


PUBLISHING = {"build", "build-sharded", "rebuild", "demo"}  # commands that publish a release


def explain(exc: BaseException, command: str = "") -> str:
    """One short paragraph: what went wrong and, for a command that publishes, that nothing was."""
    reason = str(exc).strip() or type(exc).__name__
    if isinstance(exc, KeyError):
        reason = f"unknown key {reason}"
    if not isinstance(exc, _user_errors()):
        reason = f"internal error: {type(exc).__name__}: {reason} (run again with --debug for the traceback)"
    return f"nothing published: {reason}" if command in PUBLISHING else reason
