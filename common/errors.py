"""Errors a user can fix, and the exit code the `express` command gives them.

Every such error says what went wrong and names the file (and line or key); the command prints
it in one line and exits with USER_ERROR. Anything else is a bug: exit INTERNAL_ERROR, with a
pointer to --debug for the traceback.
"""
from __future__ import annotations

USER_ERROR = 2  # a bad input, recipe, option or release; a failed quality gate
INTERNAL_ERROR = 1


class UserError(Exception):
    """Base of the errors a user can fix."""


class InputError(UserError, ValueError):
    """An input the user named cannot be read (a missing file, a bad line): said before any work."""
