"""The command line: the grammar (``parser``), its value checks (``argtypes``) and the commands (``main``)."""

from rocmtui.cli.main import main

__all__ = ["main"]
