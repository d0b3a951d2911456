"""``monitor --record`` / ``--replay`` files, and the temperature limits read from hwmon."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.sysfs_tree import build_card
from gpu_factories import sample_set

from rocmtui.cli.main import main
from rocmtui.codec import CodecError
from rocmtui.config import MonitorConfig
from rocmtui.gpu import sysfs
from rocmtui.gpu.recorder import Recorder
from rocmtui.gpu.replay import load_replay


def test_a_recording_replays_sample_for_sample_at_its_own_pace(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = Recorder(path)
    samples = [sample_set(t=100.0 + 0.5 * i) for i in range(4)]
    for s in samples:
        recorder(s)
    recorder.close()
    recorder(samples[0])  # after close: ignored, not an error
    assert recorder.written == 4 and recorder.error is None
    source = load_replay(path, speed=2.0)
    assert source.samples == tuple(samples)
    assert source.interval_s == pytest.approx(0.25)


def test_a_recording_that_cannot_be_written_stops_and_says_why() -> None:
    recorder = Recorder(Path("/dev/full"))  # a real full disk: every write fails with ENOSPC
    recorder(sample_set())
    recorder(sample_set())
    assert recorder.written == 0
    assert recorder.error == "recording to /dev/full stopped: No space left on device"


def test_bad_recordings_are_refused_in_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ValueError, match="no samples"):
        load_replay(empty)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": 1, "timestamp": "x"}\n')
    with pytest.raises(CodecError, match=r"bad\.jsonl:1"):
        load_replay(bad)


@pytest.mark.parametrize(
    "argv",
    [
        ["monitor", "--speed", "2"],
        ["monitor", "--record", "a.jsonl", "--replay", "b.jsonl"],
        ["monitor", "--json", "--replay", "b.jsonl"],
    ],
)
def test_record_and_replay_flags_that_do_not_go_together(argv: list[str], capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("rocmtui monitor: error: ") and err.count("\n") == 1


def test_hwmon_limits_of_the_junction_sensor(tmp_path: Path) -> None:
    """FAKE sysfs tree; limits in the driver's millidegrees, junction preferred over edge."""
    build_card(
        tmp_path,
        0,
        hwmon={
            "temp1_crit": "100000",
            "temp1_emergency": "105000",
            "temp2_crit": "110000",
            "temp2_emergency": "115000",
            "temp3_crit_hyst": "-273150",
        },
    )
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path, proc_root=tmp_path / "proc"))
    gpu = backend.sample(0)
    assert (gpu.temp_crit_c, gpu.temp_emergency_c) == (110.0, 115.0)


def test_no_limit_files_no_limits(tmp_path: Path) -> None:
    build_card(tmp_path, 0)
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path, proc_root=tmp_path / "proc"))
    gpu = backend.sample(0)
    assert gpu.temp_crit_c is None and gpu.temp_emergency_c is None
