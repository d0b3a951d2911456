"""The one import contract (``[tool.importlinter]`` in pyproject.toml): kept by the package as it is, and broken by
each import it exists to refuse, added to a copy of the package."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package found under ``root``, with the project's contract."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_package_keeps_the_contract() -> None:
    done = lint_imports(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("rocmtui/ui/app.py", "import rocmtui.tracking.run", "layers"),
        ("rocmtui/ui/app.py", "import rocmtui.export.metrics_server", "layers"),
        ("rocmtui/ui/app.py", "import rocmtui.integrations.lightning", "layers"),
        ("rocmtui/ui/app.py", "import rocmtui.train.loop", "layers"),
        ("rocmtui/train/loop.py", "import rocmtui.tracking.run", "layers"),
        ("rocmtui/train/loop.py", "import rocmtui.export.metrics_server", "layers"),
        ("rocmtui/train/loop.py", "import rocmtui.doctor.checks", "layers"),
        ("rocmtui/train/loop.py", "import rocmtui.ui.app", "layers"),
        ("rocmtui/run/follow.py", "import rocmtui.gpu.sample", "layers"),
        ("rocmtui/gpu/sampler.py", "import rocmtui.run.format", "layers"),
        ("rocmtui/base/units.py", "import rocmtui.events", "layers"),
        ("rocmtui/serve/guarded_server.py", "import rocmtui.cli.main", "layers"),
        ("rocmtui/launch/trainer.py", "import rocmtui.export.metrics_server", "layers"),
        ("rocmtui/gpu/sampler.py", "import torch", "never load torch"),
        ("rocmtui/ui/app.py", "import torchvision", "never load torch"),
        ("rocmtui/tracking/run.py", "import torch", "never load torch"),
        ("rocmtui/train/loop.py", "import textual", "only the screens draw"),
        ("rocmtui/run/follow.py", "import plotext", "only the screens draw"),
        ("rocmtui/ui/app.py", "import pynvml", "vendor libraries"),
        ("rocmtui/train/loop.py", "import pyrsmi", "vendor libraries"),
    ],
)
def test_an_added_forbidden_import_breaks_the_contract(tmp_path: Path, module: str, line: str, contract: str) -> None:
    shutil.copytree(REPO / "rocmtui", tmp_path / "rocmtui", ignore=shutil.ignore_patterns("__pycache__", "data"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    done = lint_imports(tmp_path)
    assert done.returncode != 0, done.stdout
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken
    assert module.removesuffix(".py").replace("/", ".") in broken


def circles(imports: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other, directly or around a circle (Tarjan's strongly connected
    components of more than one module, or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in imports.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == module:
                    break
            if len(group) > 1 or module in imports.get(module, ()):
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def package_imports() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports (under ``TYPE_CHECKING`` and
    inside functions too): a package's ``__init__`` stands for itself, not for its submodules."""
    import grimp

    graph = grimp.build_graph("rocmtui")
    return {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}


def test_no_modules_import_each_other() -> None:
    assert circles(package_imports()) == []


def test_circles_are_found() -> None:
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(imports) == [["a", "b", "c"], ["e"]]


def test_no_two_modules_share_a_file_name() -> None:
    """A file name says which module it is: grep, tracebacks and editors' tabs name it alone."""
    names: dict[str, list[str]] = {}
    for path in (REPO / "rocmtui").rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}
