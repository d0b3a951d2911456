"""Modules stay small: one job each, none over ``MOST_LINES`` lines."""

from __future__ import annotations

from pathlib import Path

MOST_LINES = 400
PACKAGE = Path(__file__).resolve().parents[1] / "rocmtui"


def test_no_module_of_the_package_is_over_the_limit() -> None:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in PACKAGE.rglob("*.py")}
    assert sizes, PACKAGE
    assert {str(path.relative_to(PACKAGE)): n for path, n in sizes.items() if n > MOST_LINES} == {}
