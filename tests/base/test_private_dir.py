"""Private folders: 0700 whatever the umask, and refused (as ssh refuses a loose ~/.ssh) when another user
owns or can write them or a folder above them."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from second_user import Stranger, open_tmp, stranger

from rocmtui.base import private_dir as pd

__all__ = ["open_tmp", "stranger"]


@pytest.fixture
def restore_umask() -> Iterator[None]:
    """The test sets a umask of its own; the old one is back after it."""
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o002, 0o000])
@pytest.mark.usefixtures("restore_umask")
def test_made_0700_whatever_the_umask(tmp_path: Path, mask: int) -> None:
    os.umask(mask)
    made = pd.private_dir(tmp_path / "a" / "b" / "cache")
    assert made == tmp_path / "a" / "b" / "cache"
    for folder in (tmp_path / "a", tmp_path / "a" / "b", made):
        assert mode(folder) == 0o700, folder


@pytest.mark.parametrize("bits", [0o770, 0o707, 0o720])
def test_a_folder_writable_by_others_is_refused(tmp_path: Path, bits: int) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(bits)
    with pytest.raises(pd.UnsafeFolderError, match=r"writable by .*chmod go-w"):
        pd.private_dir(folder)


def test_a_parent_writable_by_others_without_the_sticky_bit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team").chmod(0o777)
    with pytest.raises(pd.UnsafeFolderError, match="team is writable by its group and others without the sticky"):
        pd.private_dir(tmp_path / "team" / "cache")
    (tmp_path / "team").chmod(0o1777)  # as /tmp: nobody else may rename what is ours
    assert pd.private_dir(tmp_path / "team" / "cache") == tmp_path / "team" / "cache"


def test_a_link_is_resolved_and_its_target_checked(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    (tmp_path / "cache").symlink_to(loose)
    with pytest.raises(pd.UnsafeFolderError, match="loose is writable"):
        pd.private_dir(tmp_path / "cache")


def test_a_folder_or_parent_of_another_user_is_refused(open_tmp: Path, stranger: Stranger) -> None:
    theirs = open_tmp / "theirs"
    stranger.run(f"mkdir -m 700 {theirs}")
    with pytest.raises(pd.UnsafeFolderError, match=f"theirs belongs to another user \\(uid {stranger.uid}\\)"):
        pd.private_dir(theirs)
    stranger.run(f"chmod 755 {theirs} && mkdir -m 777 {theirs}/inner")
    (theirs / "inner" / "cache").mkdir(mode=0o700)  # ours, but under their folder: they can rename it away
    with pytest.raises(pd.UnsafeFolderError, match="inner belongs to another user"):
        pd.private_dir(theirs / "inner" / "cache")


def test_first_private_warns_once_and_falls_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loose = tmp_path / "xdg"
    loose.mkdir()
    loose.chmod(0o777)
    good = tmp_path / "home-cache"
    for _ in range(2):
        assert pd.first_private([loose / "rocmtui", good], what="cache folder refused") == good
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rocmtui: warning: cache folder refused: ")
    assert "xdg is writable by its group and others" in lines[0]
    fallback = pd.first_private([loose / "rocmtui"], what="cache folder refused")
    assert fallback.parent == Path(os.environ.get("TMPDIR", "/tmp")) and mode(fallback) == 0o700
    assert "private temporary folder" in capsys.readouterr().err
    fallback.rmdir()


def test_tree_problem_names_any_entry_another_user_could_have_written(tmp_path: Path) -> None:
    tree = pd.private_dir(tmp_path / "tree")
    (tree / "sub").mkdir(mode=0o700)
    (tree / "sub" / "kernel.py").write_text("x")
    (tree / "sub" / "kernel.py").chmod(0o600)
    assert pd.tree_problem(tree) is None
    (tree / "sub" / "kernel.py").chmod(0o620)
    assert pd.tree_problem(tree) == f"{tree / 'sub' / 'kernel.py'} is writable by its group"
    (tree / "sub" / "kernel.py").chmod(0o600)
    (tree / "sub").chmod(0o703)
    assert pd.tree_problem(tree) == f"{tree / 'sub'} is writable by others"
    (tree / "sub").chmod(0o700)
    (tree / "sub" / "link.py").symlink_to(tree / "sub" / "kernel.py")
    assert pd.tree_problem(tree) == f"{tree / 'sub' / 'link.py'} is not a plain file or folder"
    assert pd.tree_problem(tree, skip=lambda relative: relative.name == "link.py") is None


def test_runs_dir_problem(open_tmp: Path, stranger: Stranger) -> None:
    mine = open_tmp / "mine"
    mine.mkdir(mode=0o755)
    assert pd.runs_dir_problem(mine, shared=False) is None
    mine.chmod(0o775)
    assert "writable by its group without the sticky bit" in str(pd.runs_dir_problem(mine, shared=False))
    assert pd.runs_dir_problem(mine, shared=True) is None
    mine.chmod(0o1777)
    assert pd.runs_dir_problem(mine, shared=False) is None
    theirs = open_tmp / "theirs"
    stranger.run(f"mkdir -m 755 {theirs}")
    assert "belongs to another user" in str(pd.runs_dir_problem(theirs, shared=False))
    assert "--shared-runs-dir" in str(pd.runs_dir_problem(theirs, shared=False))
