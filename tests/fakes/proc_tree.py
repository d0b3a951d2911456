"""FAKE /proc entries for DRM clients, in the kernel's fdinfo format (drm-usage-stats.rst).

``fd/<n>`` is a symlink to the device node, as in /proc; ``fdinfo/<n>`` has the generic fdinfo lines
(pos, flags, mnt_id, ino) followed by the DRM keys amdgpu prints.

Where the lines come from: the key names and units follow the kernel's Documentation/gpu/drm-usage-stats.rst
(``drm-driver: <str>``, ``drm-pdev: <aaaa:bb.cc.d>``, ``drm-client-id: <uint>``, ``drm-engine-<keystr>:
<uint> ns`` for the cumulative busy time of an engine, ``drm-memory-<region>: <uint> [KiB|MiB]``), and
amdgpu's own names (``gfx``, ``compute``; ``vram``, ``gtt``) from its fdinfo output (drivers/gpu/drm/amd/
amdgpu/amdgpu_fdinfo.c). The values are re-typed test values, not a capture: no public repository was found
that holds a real amdgpu fdinfo file under a licence (``tests/data/amd/SOURCES.md`` lists the captures kept).
"""

from __future__ import annotations

from pathlib import Path


def add_fd(proc: Path, pid: int, fd: int, target: str, fdinfo: str) -> None:
    """One open descriptor: ``fd/<fd>`` -> ``target`` and its ``fdinfo/<fd>`` text."""
    for folder in ("fd", "fdinfo"):
        (proc / str(pid) / folder).mkdir(parents=True, exist_ok=True)
    (proc / str(pid) / "fd" / str(fd)).symlink_to(target)
    (proc / str(pid) / "fdinfo" / str(fd)).write_text(f"pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t{fd}\n{fdinfo}")


def drm_fdinfo(
    pdev: str, client_id: int, vram: str | None = None, *, key: str = "drm-memory-vram", gfx_ns: int | None = 1234567
) -> str:
    """The DRM part of an amdgpu fdinfo file; ``vram`` like ``"1024 KiB"``, ``gfx_ns`` the gfx engine's busy
    time (None leaves either out)."""
    lines = [
        "drm-driver:\tamdgpu",
        f"drm-pdev:\t{pdev}",
        f"drm-client-id:\t{client_id}",
    ]
    if gfx_ns is not None:
        lines.append(f"drm-engine-gfx:\t{gfx_ns} ns")
    lines.append("drm-engine-compute:\t0 ns")
    if vram is not None:
        lines.append(f"{key}:\t{vram}")
    lines.append("drm-memory-gtt:\t2048 KiB")
    return "\n".join(lines) + "\n"


def add_drm_client(
    proc: Path, pid: int, fd: int, client: tuple[str, int], vram: str | None, *, gfx_ns: int | None = 1234567
) -> None:
    """A render-node descriptor of ``client`` (PCI address, client id) holding ``vram``."""
    add_fd(proc, pid, fd, "/dev/dri/renderD128", drm_fdinfo(*client, vram, gfx_ns=gfx_ns))


def set_gfx_ns(proc: Path, pid: int, fd: int, gfx_ns: int) -> None:
    """Advance the gfx counter in an existing descriptor's fdinfo, as the kernel does while the client works."""
    path = proc / str(pid) / "fdinfo" / str(fd)
    lines = [
        f"drm-engine-gfx:\t{gfx_ns} ns" if ln.startswith("drm-engine-gfx:") else ln
        for ln in path.read_text().splitlines()
    ]
    path.write_text("\n".join(lines) + "\n")
