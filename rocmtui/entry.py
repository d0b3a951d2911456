"""The ``rocmtui`` command (and ``python -m rocmtui``): the collector paused, then the CLI imported and run."""

from __future__ import annotations

from typing import NoReturn

from rocmtui import gc_pause

gc_pause.pause()  # before the CLI's imports: the command resumes it once its start is over


def entry() -> NoReturn:
    from rocmtui.cli.main import entry as run_cli

    run_cli()
