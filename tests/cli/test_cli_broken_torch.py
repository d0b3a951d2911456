"""A torch that cannot be loaded is one line on stderr, not a long traceback.

The broken installs are fakes at the edge of a library we cannot break for real here: a ``torch`` package
put first on ``PYTHONPATH`` whose import fails as a real broken one does (a missing shared library, a
missing compiled part, a version clash)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rocmtui.cli.main import torch_failed_to_load

BROKEN = {
    "a missing shared library": 'raise OSError("libtorch_cpu.so: cannot open shared object file: No such file")',
    "no compiled part": "import torch._C_missing_for_this_test",
    "a version clash": 'raise ImportError("numpy.core.multiarray failed to import")',
}


@pytest.mark.slow
@pytest.mark.parametrize("what", list(BROKEN))
@pytest.mark.parametrize(
    "argv", [("train", "cifar", "--headless", "--device", "cpu"), ("bench", "--device", "cpu")], ids=["train", "bench"]
)
def test_a_torch_that_cannot_load_is_one_line(tmp_path: Path, what: str, argv: tuple[str, ...]) -> None:
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(BROKEN[what] + "\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rocmtui",
            *argv,
            *(("--runs-dir", str(tmp_path / "runs")) if argv[0] == "train" else ()),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "torch cannot be loaded" in lines[0] and "Traceback" not in result.stderr, lines
    assert not (tmp_path / "runs").exists()


def test_an_error_raised_by_rocmtui_itself_is_not_taken_for_torch() -> None:
    assert not torch_failed_to_load(ValueError("a bug of ours"))
    assert not torch_failed_to_load(ImportError("No module named 'textual'", name="textual"))
    assert torch_failed_to_load(ModuleNotFoundError("No module named 'torch'", name="torch"))
    assert torch_failed_to_load(ImportError("x", name="torchvision.io"))
