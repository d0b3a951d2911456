"""A run folder belongs to its writer: made 0700 (0750 in a team folder) whatever the umask, and never made in a
runs folder another user owns, or others can write without the sticky bit, unless a team folder is asked for."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from second_user import Stranger, open_tmp, stranger
from waiting import wait_for

from rocmtui.base.errors import UsageError
from rocmtui.cli.main import main
from rocmtui.events import RunControl
from rocmtui.run.layout import SHARED_ENV, create_run_dir, job_run_dir
from rocmtui.run.listing import find_run, my_runs
from rocmtui.run.session import RunSession

__all__ = ["open_tmp", "stranger"]


def session_run(runs: Path, name: str) -> tuple[Path, RunSession]:
    """A live run: its folder held by a session of this process."""
    run_dir = runs / name
    run_dir.mkdir(parents=True)
    return run_dir, RunSession(run_dir, RunControl(), name=name)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o002, 0o000])
def test_run_folders_are_private_whatever_the_umask(tmp_path: Path, mask: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    old = os.umask(mask)
    try:
        run = create_run_dir(tmp_path / "deep" / "runs", "r")
        shared = create_run_dir(tmp_path / "deep" / "runs", "s", shared=True)
    finally:
        os.umask(old)
    assert mode(run) == 0o700 and mode(shared) == 0o750
    assert mode(tmp_path / "deep") == mode(tmp_path / "deep" / "runs") == 0o755  # never group-writable
    assert run.is_absolute()


def test_a_relative_runs_folder_gives_an_absolute_run_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run = create_run_dir(Path("runs"), "r")
    assert run.is_absolute() and run.parent == tmp_path / "runs" and run.name.startswith("r-")


@pytest.mark.parametrize(
    ("bits", "says"),
    [(0o775, "writable by its group without"), (0o757, "writable by others without"), (0o777, "group and others")],
)
def test_a_runs_folder_others_can_write_is_refused_unless_shared(
    tmp_path: Path, bits: int, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    runs = tmp_path / "runs"
    runs.mkdir()
    runs.chmod(bits)
    with pytest.raises(UsageError, match=says) as refused:
        create_run_dir(runs, "r")
    assert "\n" not in str(refused.value) and "--shared-runs-dir" in str(refused.value)
    assert list(runs.iterdir()) == []
    assert mode(create_run_dir(runs, "r", shared=True)) == 0o750
    monkeypatch.setenv(SHARED_ENV, "1")
    assert mode(create_run_dir(runs, "e")) == 0o750
    runs.chmod(0o1777)  # sticky: nobody renames what is ours
    monkeypatch.delenv(SHARED_ENV)
    assert mode(create_run_dir(runs, "t")) == 0o700


def test_a_runs_folder_another_user_owns_is_refused_unless_shared(
    open_tmp: Path, stranger: Stranger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    theirs = open_tmp / "theirs"
    stranger.run(f"mkdir -m 755 {theirs}")
    with pytest.raises(UsageError, match=f"belongs to another user \\(uid {stranger.uid}\\)"):
        create_run_dir(theirs, "r")
    stranger.run(f"chmod 777 {theirs}")
    run = create_run_dir(theirs, "r", shared=True)
    assert run.stat().st_uid == os.geteuid() and mode(run) == 0o750
    # what the team folder's rights allow, as the help says: they may move the run folder aside
    stranger.run(f"mv {run} {theirs}/moved")
    assert not run.exists()


def chown_tree(folder: Path, who: Stranger) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, who.uid, who.gid, follow_symlinks=False)


def test_with_no_run_named_stop_and_watch_pick_only_the_callers_own_runs(
    tmp_path: Path, stranger: Stranger, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another user's live run, newer than ours, in the same runs folder: never the one picked."""
    runs = tmp_path / "runs"
    runs.mkdir()
    mine_dir, mine = session_run(runs, "20261201-080000-mine")
    theirs_dir, theirs = session_run(runs, "20261201-090000-theirs")
    chown_tree(theirs_dir, stranger)
    try:
        assert find_run(None, runs, live_only=True) == mine_dir
        assert find_run(None, runs) == mine_dir
        assert [Path(info.folder) for info in my_runs(runs)] == [mine_dir]
        assert main(["stop", "--no-wait", "--runs-dir", str(runs)]) == 0
        assert f"asked {mine_dir} to stop" in capsys.readouterr().out
        wait_for(mine.control.stop.is_set, what="our run to hear the stop")
        assert not theirs.control.stop.is_set()
    finally:
        mine.close()
        theirs.close()
    with pytest.raises(UsageError, match="no live run of yours under"):
        find_run(None, runs, live_only=True)


@pytest.mark.parametrize("mask", [0o000, 0o002])
def test_a_tracked_run_under_a_loose_umask_leaves_nothing_others_can_write(
    tmp_path: Path, mask: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rocmtui

    monkeypatch.delenv(SHARED_ENV, raising=False)
    old = os.umask(mask)
    try:
        with rocmtui.track("loose", runs_dir=tmp_path / "runs") as run:
            run.log(loss=1.0)
            assert mode(run.run_dir / "control") == 0o600
    finally:
        os.umask(old)
    assert mode(run.run_dir) == 0o700
    loose = [p for p in [tmp_path / "runs", *run.run_dir.rglob("*")] if p.stat().st_mode & 0o022]
    assert loose == []


@pytest.mark.parametrize("umask", [0o000, 0o002, 0o022])
def test_a_jobs_folder_is_private_whatever_the_umask_and_found_again_by_every_node(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        job = job_run_dir(tmp_path / "runs", "exp42", shared=False)
        assert job.name == "job-exp42" and mode(job) == 0o700
        assert job_run_dir(tmp_path / "runs", "exp42", shared=False) == job  # the next node's launcher
    finally:
        os.umask(old)


def test_a_jobs_folder_planted_by_another_user_or_left_open_is_refused(
    open_tmp: Path, stranger: Stranger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SHARED_ENV, raising=False)
    runs = open_tmp / "runs"
    runs.mkdir(mode=0o755)
    runs.chmod(0o1777)  # a team's folder: others may make folders in it, not take ours
    stranger.run(f"mkdir -m 700 {runs}/job-theirs")
    with pytest.raises(UsageError, match="not a private folder of yours"):
        job_run_dir(runs, "theirs", shared=True)
    (runs / "job-open").mkdir()
    (runs / "job-open").chmod(0o777)
    with pytest.raises(UsageError, match="give the job another --rdzv-id"):
        job_run_dir(runs, "open", shared=True)
    (runs / "elsewhere").mkdir()
    (runs / "job-link").symlink_to(runs / "elsewhere")
    with pytest.raises(UsageError, match="a link"):
        job_run_dir(runs, "link", shared=True)
