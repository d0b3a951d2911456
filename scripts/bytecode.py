"""Bytecode for rocmtui's modules, as an installed package has it, for the scripts that time a start-up.

Where ``PYTHONDONTWRITEBYTECODE`` is set (the lent GPU machines set it) and the tree was copied without its
``__pycache__`` folders, every process compiles each module it imports: on an H200 machine that added about
0.1 s to each of the UI's and the trainer's starts. An installed package has its bytecode, so the scripts
write it first (``py_compile`` writes whatever that variable says).

Not run on its own: imported by ``scripts/time_to_result.py`` and ``scripts/startup_profile.py``
(``compile_rocmtui``).
"""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path


def _stale(source: Path) -> bool:
    cached = Path(importlib.util.cache_from_source(str(source)))
    return not cached.is_file() or cached.stat().st_mtime < source.stat().st_mtime


def compile_rocmtui() -> int:
    """Compile the modules of the rocmtui that ``python -m rocmtui`` would import here, where their bytecode is
    missing or older than the source; returns how many were compiled."""
    spec = importlib.util.find_spec("rocmtui")
    if spec is None or not spec.submodule_search_locations:
        return 0
    stale = [p for root in spec.submodule_search_locations for p in Path(root).rglob("*.py") if _stale(p)]
    for source in stale:
        py_compile.compile(str(source), quiet=1)
    return len(stale)
