"""Suite-wide settings.

Bytecode is cached for the tests and the package even where ``PYTHONDONTWRITEBYTECODE`` is set: without it
every worker recompiles every module and pytest rewrites every test module's asserts again, run after run
(about 4 s of each worker's start on the 2-core machine). The caches are git-ignored ``__pycache__`` folders.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = False
