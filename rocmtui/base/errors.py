"""Errors that the CLI turns into one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: a flag, a value, a path. Exit code 2."""

    exit_code = 2


class DataError(UsageError):
    """A dataset that is missing, truncated or of the wrong shape."""


class CheckpointError(UsageError):
    """A checkpoint or run folder that cannot be resumed from."""


def first_line(err: BaseException, *, with_type: bool = False) -> str:
    """The first line of ``err``'s message, or its type's name when the message is empty. A first line that
    ends in a colon introduces its reason on the next lines: they are joined to it up to the first line that
    does not (``Error downloading x.gz: Tried https://..., got: <urlopen error ...>``).

    ``with_type`` prefixes the type (``KeyError: 'x'``), for errors the user did not cause and may report.
    """
    lines = [part.strip() for part in str(err).strip().splitlines() if part.strip()]
    end = next((i for i, part in enumerate(lines) if not part.endswith(":")), len(lines) - 1)
    line = " ".join(lines[: end + 1])
    name = type(err).__name__
    if not line:
        return name
    return f"{name}: {line}" if with_type else line
