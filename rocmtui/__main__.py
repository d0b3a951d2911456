"""Entry point for ``python -m rocmtui``."""

from rocmtui.cli.main import entry

if __name__ == "__main__":  # the spawned training process imports this module too: run nothing then
    entry()
