"""Suite-wide settings.

Bytecode is cached for the tests and the package even where ``PYTHONDONTWRITEBYTECODE`` is set: without it
every worker recompiles every module and pytest rewrites every test module's asserts again, run after run
(about 4 s of each worker's start on the 2-core machine). The caches are git-ignored ``__pycache__`` folders.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = False


def pytest_collection_modifyitems(config: object, items: list) -> None:
    """Tests marked ``gpu`` need a CUDA (or ROCm) device: skipped with their reason where torch sees none, and
    run by ``pytest -m gpu`` on a GPU machine. torch is imported only when such a test was collected."""
    import pytest

    marked = [(item, item.get_closest_marker("gpu")) for item in items]
    needing = [(item, mark) for item, mark in marked if mark is not None]
    if not needing:
        return
    import torch

    if torch.cuda.is_available():
        return
    for item, mark in needing:
        item.add_marker(pytest.mark.skip(reason=f"needs a GPU: {mark.kwargs.get('reason', 'marked gpu')}"))
