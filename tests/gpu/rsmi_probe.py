"""Run as root inside ``unshare -m``: for each laid-out tree, bind it over /sys and read it with AMD's library.

Arguments: NAME=TREE pairs. Prints one JSON object, {"cards": {NAME: {"devices": [...]}, {"error": "..."} or
{"crash": "..."}}}. Each tree is read in a forked child that loads the library afresh (the library keeps
its state, and files under /sys open, from one ``rsmi_init`` to the next), and the bind is undone when the
child is gone. Each child also gets an empty /dev/shm: the library keeps a cross-process mutex per card
there, and a child it aborted would leave it held for the next. The namespace is private: the mounts are
seen by this process tree only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict

from rocmtui.gpu import rsmi_lib


def _read_here(clocks: bool) -> dict[str, object]:
    try:
        lib = rsmi_lib.load_library()
        return {"devices": [asdict(r) for r in rsmi_lib.read_all(lib, clocks)]}
    except rsmi_lib.RsmiUnavailable as err:
        return {"error": str(err)}


def read_tree(tree: str) -> dict[str, object]:
    """The library's readings of ``tree``; where reading the clocks aborts the process, ``crash`` says so
    and ``devices`` are read again without the clocks."""
    first = _read_child(tree, clocks=True)
    if "crash" not in first:
        return first
    return {**_read_child(tree, clocks=False), "crash": first["crash"]}


def _read_child(tree: str, clocks: bool) -> dict[str, object]:
    """The library's readings of ``tree`` laid over /sys, from a child process."""
    subprocess.run(["mount", "--bind", tree, "/sys"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "rsmi-shm", "/dev/shm"], check=True)
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            pid = os.fork()
            if pid == 0:  # the child: its output (the library's messages) to ``err``
                os.dup2(err.fileno(), 1)  # the library prints some errors on stdout
                os.dup2(err.fileno(), 2)
                out.write(json.dumps(_read_here(clocks)).encode())
                out.flush()
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            out.seek(0)
            err.seek(0)
            said = err.read().decode(errors="replace").strip()
            if os.WIFSIGNALED(status):  # the library aborted (a failed assert)
                return {"crash": f"{signal.Signals(os.WTERMSIG(status)).name}: {said.splitlines()[-1] if said else ''}"}
            result: dict[str, object] = json.loads(out.read())
            result["stderr"] = said
            return result
    finally:
        subprocess.run(["umount", "/dev/shm"], check=True)
        subprocess.run(["umount", "/sys"], check=True)


def main(pairs: list[str]) -> int:
    cards = {name: read_tree(tree) for name, _, tree in (p.partition("=") for p in pairs)}
    print(json.dumps({"cards": cards}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
