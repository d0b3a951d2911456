"""Where ``serve`` and ``export`` listen: the loopback address by default, and one warning line beyond it."""

from __future__ import annotations

import sys

LOCALHOST = "127.0.0.1"


def warn_if_exposed(command: str, host: str, port: int, *, who: str = "anyone who can reach this port") -> None:
    """One warning line on stderr when listening beyond the loopback address."""
    if host not in (LOCALHOST, "localhost", "::1"):
        how = "with its token" if "token" in who else "with no authentication"
        print(f"rocmtui {command}: warning: listening on {host}:{port} {how}: {who} can use it", file=sys.stderr)
