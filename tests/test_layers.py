"""The layers stay apart: checked in fresh interpreters through sys.modules (default tier: a few seconds)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("torch", "torchvision", "textual", "textual_plotext", "plotext")


def loaded_after(code: str) -> set[str]:
    """Run ``code`` in a fresh interpreter and return which heavy top-level packages it loaded."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def import_all(package: str) -> str:
    """Code that imports every module of a subpackage, so a stray import anywhere is caught."""
    return textwrap.dedent(
        f"""
        import importlib, pkgutil
        import {package} as pkg
        for info in pkgutil.walk_packages(pkg.__path__, "{package}."):
            importlib.import_module(info.name)
        """
    )


def test_gpu_layer_loads_neither_torch_nor_textual() -> None:
    assert loaded_after(import_all("rocmtui.gpu")) == set()


def test_run_folder_layer_loads_neither_torch_nor_textual() -> None:
    """Viewers, ``rocmtui runs`` and ``rocmtui.track()`` read and write run folders without either."""
    assert loaded_after(import_all("rocmtui.run")) == set()


def test_train_layer_loads_no_textual() -> None:
    loaded = loaded_after(import_all("rocmtui.train"))
    assert "torch" in loaded  # the probe really imported the engine
    assert not loaded & {"textual", "textual_plotext", "plotext"}


def test_ui_layer_loads_no_torch() -> None:
    loaded = loaded_after(import_all("rocmtui.ui"))
    assert "textual" in loaded  # the probe really imported the UI
    assert not loaded & {"torch", "torchvision"}


@pytest.mark.parametrize(
    "module",
    ["rocmtui", "rocmtui.cli", "rocmtui.cli.main", "rocmtui.launch.trainer", "rocmtui.events", "rocmtui.config"],
)
def test_light_modules_load_nothing_heavy(module: str) -> None:
    assert loaded_after(f"import {module}") == set()


@pytest.mark.parametrize("argv", [["--help"], ["monitor", "--help"], ["train", "--help"], ["--version"]])
def test_help_loads_nothing_heavy(argv: list[str]) -> None:
    code = f"""
        from rocmtui.cli import main
        try:
            main({argv!r})
        except SystemExit:
            pass
        """
    assert loaded_after(code) == set()


def test_ui_never_imports_train_or_vendor_libraries() -> None:
    code = import_all("rocmtui.ui") + textwrap.dedent(
        """
        import sys
        bad = [m for m in sys.modules if m.startswith("rocmtui.train") or m in ("pyrsmi", "pynvml", "amdsmi")]
        assert not bad, bad
        """
    )
    loaded_after(code)


def rocmtui_modules_after(code: str) -> set[str]:
    """The ``rocmtui`` subpackages a fresh interpreter loaded while running ``code``."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        """
        import json, sys
        print(json.dumps(sorted({m.split(".")[1] for m in sys.modules if m.startswith("rocmtui.") and "." in m})))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    ("package", "never"),
    [
        ("rocmtui.base", {"run", "gpu", "train", "ui", "tracking", "export", "cli", "doctor", "events", "config"}),
        ("rocmtui.run", {"gpu", "train", "ui", "tracking", "export", "cli", "doctor"}),
        ("rocmtui.tracking", {"gpu", "train", "ui", "export", "cli", "doctor"}),
        ("rocmtui.gpu", {"run", "train", "ui", "tracking", "export", "cli", "doctor", "events"}),
    ],
)
def test_lower_layers_never_load_the_ones_above(package: str, never: set[str]) -> None:
    assert rocmtui_modules_after(import_all(package)) & never == set()


def test_the_shared_contract_loads_no_layer() -> None:
    loaded = rocmtui_modules_after("import rocmtui.events, rocmtui.config, rocmtui.codec, rocmtui.base.errors")
    assert loaded <= {"events", "config", "codec", "errors", "base"}
