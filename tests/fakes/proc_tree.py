"""FAKE /proc entries for DRM clients, in the kernel's fdinfo format (drm-usage-stats.rst).

``fd/<n>`` is a symlink to the device node, as in /proc; ``fdinfo/<n>`` has the generic fdinfo lines
(pos, flags, mnt_id, ino) followed by the DRM keys amdgpu prints.
"""

from __future__ import annotations

from pathlib import Path


def add_fd(proc: Path, pid: int, fd: int, target: str, fdinfo: str) -> None:
    """One open descriptor: ``fd/<fd>`` -> ``target`` and its ``fdinfo/<fd>`` text."""
    for folder in ("fd", "fdinfo"):
        (proc / str(pid) / folder).mkdir(parents=True, exist_ok=True)
    (proc / str(pid) / "fd" / str(fd)).symlink_to(target)
    (proc / str(pid) / "fdinfo" / str(fd)).write_text(f"pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t{fd}\n{fdinfo}")


def drm_fdinfo(pdev: str, client_id: int, vram: str | None = None, *, key: str = "drm-memory-vram") -> str:
    """The DRM part of an amdgpu fdinfo file; ``vram`` like ``"1024 KiB"`` (None leaves it out)."""
    lines = [
        "drm-driver:\tamdgpu",
        f"drm-pdev:\t{pdev}",
        f"drm-client-id:\t{client_id}",
        "drm-engine-gfx:\t1234567 ns",
    ]
    if vram is not None:
        lines.append(f"{key}:\t{vram}")
    lines.append("drm-memory-gtt:\t2048 KiB")
    return "\n".join(lines) + "\n"


def add_drm_client(proc: Path, pid: int, fd: int, client: tuple[str, int], vram: str | None) -> None:
    """A render-node descriptor of ``client`` (PCI address, client id) holding ``vram``."""
    add_fd(proc, pid, fd, "/dev/dri/renderD128", drm_fdinfo(*client, vram))
