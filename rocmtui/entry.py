"""The ``rocmtui`` command (and ``python -m rocmtui``): the collector paused, then the CLI imported and run."""

from __future__ import annotations

from typing import NoReturn

from rocmtui.base import startup_gc

startup_gc.pause()  # before the CLI's imports: the command resumes it once its start is over


def entry() -> NoReturn:
    """The CLI, then ``outcome.leave`` (no slow teardown once torch is loaded)."""
    from rocmtui.cli.main import main
    from rocmtui.run.outcome import leave

    leave(main())
