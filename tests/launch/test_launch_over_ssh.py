"""Over real SSH: a run started in an SSH session trains on when the ssh client is killed, a new login watches
it, and stopping it from that watcher ends it with a checkpoint and no process left.

A real sshd (Debian's openssh-server) listens on 127.0.0.1 with keys made for the test; the ssh clients run in
local ptys of 80x24, as a user's terminal. Skipped where sshd or ssh is not installed.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import Terminal, first_epoch, pid_alive, trains_on, wait_until

from rocmtui.run.lock import is_locked
from rocmtui.run.status import read_status

SSHD = Path("/usr/sbin/sshd")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not SSHD.exists() or shutil.which("ssh") is None, reason="openssh-server is not installed"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Sshd:
    """An sshd on 127.0.0.1 that lets this user in with one key, and the ssh command line that logs in."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        keygen(folder / "host_key")
        keygen(folder / "client_key")
        (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
        self.port = free_port()
        config = folder / "sshd_config"
        config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
            f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile {folder / 'sshd.pid'}\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
            "PermitRootLogin yes\nAcceptEnv no\n"
        )
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(exist_ok=True)  # its privilege-separation folder
        self.process = subprocess.Popen([str(SSHD), "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
        wait_until(lambda: listening(self.port), 10, "sshd to listen")
        self.client = [
            "ssh", "-tt", "-p", str(self.port), "-i", str(folder / "client_key"), "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=no", "-o", f"UserKnownHostsFile={os.devnull}", "-o", "LogLevel=ERROR",
            "127.0.0.1",
        ]  # fmt: skip

    def login(self, command: list[str], cwd: Path) -> tuple[int, int]:
        """``ssh -tt`` running ``command`` in a new login, from a local 80x24 pty: (client pid, pty fd)."""
        remote = (
            f"cd {shlex.quote(str(cwd))} && exec env {shlex.join(['TERM=xterm-256color', *environment(), *command])}"
        )
        pid, master = pty.fork()
        if pid == 0:  # the user's terminal, running ssh
            os.execvp("ssh", [*self.client, remote])
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        return pid, master

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def environment() -> list[str]:
    """What the login needs from this test's environment (a login shell starts from its own)."""
    keep = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "PYTHONPATH", "HOME", "PATH")
    return [f"{name}={os.environ[name]}" for name in keep if name in os.environ]


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[Sshd]:
    server = Sshd(tmp_path / "ssh")
    try:
        yield server
    finally:
        server.close()


def reap(pid: int) -> int:
    _, wait_status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(wait_status)


def test_a_run_outlives_its_ssh_client_and_a_new_login_watches_and_stops_it(sshd: Sshd, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    rocmtui = [sys.executable, "-m", "rocmtui"]
    client, master = sshd.login([*rocmtui, "train", "cifar", "--epochs", "200", "--runs-dir", str(runs)], tmp_path)

    run_dir, status = first_epoch(runs, master, "over SSH")
    trainer_pid, epoch_then = status.pid, status.epoch

    os.kill(client, signal.SIGKILL)  # the SSH link goes away without a word
    assert reap(client) == -signal.SIGKILL
    os.close(master)

    trains_on(run_dir, epoch_then, "the ssh client died")  # the run trains on
    assert is_locked(run_dir) and pid_alive(trainer_pid)

    watcher, master = sshd.login([*rocmtui, "watch", str(run_dir)], tmp_path)  # a new login
    screen = Terminal(master)
    latest = read_status(run_dir)
    assert latest is not None

    def caught_up() -> bool:  # the progress line reaches the epoch the run was at when the watcher started
        shown = [int(n) for n in re.findall(rb"Epoch (\d+)/200", screen.read())]
        return bool(shown) and max(shown) >= latest.epoch

    wait_until(caught_up, 60, "the watcher to catch up")
    os.write(master, b"q")  # from the watcher: quit, then "stop and quit"
    wait_until(lambda: b"Quit while training?" in screen.read(), 20, "the quit question")
    os.write(master, b"y")
    wait_until(lambda: not pid_alive(trainer_pid), 60, "the trainer to stop")
    wait_until(lambda: screen.read() and _exited(watcher), 30, "the watcher's ssh to end")

    final = read_status(run_dir)
    assert final is not None and final.state == "stopped"
    assert (run_dir / "checkpoint-last.pt").is_file() and not is_locked(run_dir)
    left = [pid for pid in _pids() if str(runs) in _cmdline(pid)]
    assert left == [], left  # no UI, watcher or trainer of this run left running
    os.close(master)


def _exited(pid: int) -> bool:
    done, _ = os.waitpid(pid, os.WNOHANG)
    return done == pid


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
