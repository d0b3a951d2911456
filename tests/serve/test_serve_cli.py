"""``rocmtui serve`` before it listens: what each tab runs, what is refused, the warning beyond 127.0.0.1."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from rocmtui.cli.listen import warn_if_exposed
from rocmtui.cli.main import main
from rocmtui.cli.parser import build_parser
from rocmtui.cli.web_commands import served_command

H200 = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"


def test_train_is_refused_in_one_line(capsys) -> None:
    assert main(["serve", "train", "cifar", "--epochs", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "serve watch" in err


def test_each_tab_runs_the_served_entry_with_the_checked_arguments(tmp_path) -> None:
    run = tmp_path / "runs" / "20261201-071828-cifar10-fastnet"
    shutil.copytree(H200, run)
    args = build_parser().parse_args(["serve", "watch", "--runs-dir", str(tmp_path / "runs")])
    assert shlex.split(served_command(args)) == [sys.executable, "-m", "rocmtui.serve.tab_process", "watch", str(run)]
    args = build_parser().parse_args(["serve", "demo", "--speed", "0.5", "--loop"])
    assert shlex.split(served_command(args))[-4:] == ["demo", "--speed", "0.5", "--loop"]


def test_defaults_listen_on_localhost_only() -> None:
    args = build_parser().parse_args(["serve", "monitor"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    assert build_parser().parse_args(["export"]).host == "127.0.0.1"


@pytest.mark.parametrize(("host", "warned"), [("127.0.0.1", False), ("localhost", False), ("0.0.0.0", True)])
def test_a_host_beyond_loopback_is_warned_about(capsys, host, warned) -> None:
    warn_if_exposed("serve", host, 8000)
    assert ("no authentication" in capsys.readouterr().err) is warned
