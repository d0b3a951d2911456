"""The one /dev/null redirect used after a broken pipe, a hangup and in the training child."""

from __future__ import annotations

import os
from pathlib import Path

from rocmtui.gpu.stdio import redirect_to_devnull


def test_writes_to_a_redirected_descriptor_vanish_and_reads_see_eof(tmp_path: Path) -> None:
    path = tmp_path / "out"
    path.write_bytes(b"kept")
    fd = os.open(path, os.O_RDWR)
    try:
        redirect_to_devnull((fd,))
        os.write(fd, b"lost")
        assert os.read(fd, 10) == b""
    finally:
        os.close(fd)
    assert path.read_bytes() == b"kept"
