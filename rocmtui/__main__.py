"""Entry point for ``python -m rocmtui``."""

from rocmtui.cli import main

if __name__ == "__main__":  # the spawned training process imports this module too: run nothing then
    raise SystemExit(main())
