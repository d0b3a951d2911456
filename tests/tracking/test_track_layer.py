"""track() runs inside any script: it and its supervisor load neither torch nor Textual."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # functional tier: fresh interpreters

PROBE = """
import importlib, json, pkgutil, sys
import rocmtui
rocmtui.track
import rocmtui.tracking as pkg
for info in pkgutil.walk_packages(pkg.__path__, "rocmtui.tracking."):
    importlib.import_module(info.name)
print(json.dumps(sorted(m for m in ("torch", "textual", "plotext") if m in sys.modules)))
"""


def test_the_tracking_layer_loads_neither_torch_nor_textual() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
