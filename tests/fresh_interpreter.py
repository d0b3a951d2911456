"""What a fresh interpreter has imported after running some code: for tests of what a start must not load."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_loaded_by(code: str) -> set[str]:
    """The names in ``sys.modules`` of a new ``python -c`` once ``code`` has run (json is loaded to report them)."""
    report = "\nimport json as _json, sys as _sys\nprint(_json.dumps(sorted(_sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code + report], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))
