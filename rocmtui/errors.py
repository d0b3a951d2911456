"""Errors that the CLI turns into one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: a flag, a value, a path. Exit code 2."""

    exit_code = 2


class DataError(UsageError):
    """A dataset that is missing, truncated or of the wrong shape."""


class CheckpointError(UsageError):
    """A checkpoint or run folder that cannot be resumed from."""
