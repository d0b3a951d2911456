"""What a launcher (``rocmtui run``) tells the script it starts, through the environment."""

from __future__ import annotations

from rocmtui.run.layout import RUNS_DIR_ENV

RUN_DIR = "ROCMTUI_RUN_DIR"
"""The exact run folder to report into (made by the launcher, so its viewer knows it at once)."""
RUNS_DIR = RUNS_DIR_ENV
"""Where ``track()`` makes a new run folder when no launcher gave one (default ``runs``)."""
RUN_NAME = "ROCMTUI_RUN_NAME"
"""The run's name when ``track()`` is given none."""
LINK = "ROCMTUI_LINK_FDS"
"""``EVENTS_FD,COMMANDS_FD``: the pipes to the supervisor that holds the run folder (``supervise``)."""
