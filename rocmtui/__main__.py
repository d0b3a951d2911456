"""Entry point for ``python -m rocmtui``."""

from rocmtui.cli import main

raise SystemExit(main())
