"""Signalling a GPU process from the monitor: only the user's own, and only the process that was listed."""

from __future__ import annotations

import os
import signal

import psutil

from rocmtui.gpu.sample import GpuProcess

SIGNALS = {"TERM": signal.SIGTERM, "KILL": signal.SIGKILL}
START_TOLERANCE_S = 0.05
"""How far a process's start time may differ from the listed one and still be the same process."""


def refusal(proc: GpuProcess, uid: int | None = None) -> str | None:
    """Why ``proc`` may not be signalled from here, or None when it may."""
    me = os.getuid() if uid is None else uid
    if proc.pid <= 1:
        return f"PID {proc.pid} is the system's init: rocmtui never signals it"
    if proc.pid == os.getpid():
        return "this is rocmtui itself: quit with q"
    if proc.pid in _own_children():
        return f"PID {proc.pid} is rocmtui's own (its trainer): stop it from the training screen"
    if proc.uid is None:
        return f"PID {proc.pid}'s owner is unknown: rocmtui signals only your own processes"
    if proc.uid != me:
        owner = proc.user or f"uid {proc.uid}"
        return f"PID {proc.pid} belongs to {owner}: rocmtui signals only your own processes"
    return None


def _own_children() -> set[int]:
    """This process's descendants that run rocmtui (a trainer, a served app), not any child a script started."""
    own: set[int] = set()
    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return own
    for child in children:
        try:
            if any("rocmtui" in word for word in child.cmdline()):
                own.add(child.pid)
        except psutil.Error:
            continue
    return own


def send(proc: GpuProcess, name: str) -> str:
    """Send SIGTERM or SIGKILL (``name`` TERM or KILL) to ``proc``; one line saying what happened."""
    reason = refusal(proc)
    if reason is not None:
        return reason
    try:
        current = psutil.Process(proc.pid)
        started = current.create_time()
        if proc.started_at is not None and abs(started - proc.started_at) > START_TOLERANCE_S:
            return f"PID {proc.pid} has ended (its number now belongs to another process): nothing sent"
        if current.uids().real != proc.uid:
            return f"PID {proc.pid} changed owner: nothing sent"
        os.kill(proc.pid, SIGNALS[name])
    except psutil.NoSuchProcess:
        return f"PID {proc.pid} has already ended"
    except (psutil.Error, OSError) as err:
        return f"could not signal PID {proc.pid}: {err}"
    return f"sent SIG{name} to PID {proc.pid}"
