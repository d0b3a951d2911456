"""``monitor --once`` / ``--json`` text and JSON, in-process and as real subprocesses (host backend here)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from fakes.sysfs_tree import build_card
from gpu_factories import gpu, sample_set

from rocmtui.config import MonitorConfig
from rocmtui.gpu import headless_output as report
from rocmtui.gpu import sample_codec as codec
from rocmtui.gpu.sample import GpuProcess, GpuSample, SampleSet

_NO_HEAVY_IMPORTS = """
import sys
from rocmtui.cli import main
rc = main(sys.argv[1:])
heavy = sorted(m for m in ("torch", "textual", "torchvision", "plotext") if m in sys.modules)
print("HEAVY:" + ",".join(heavy), file=sys.stderr)
sys.exit(rc)
"""


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _NO_HEAVY_IMPORTS, *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_text_has_every_field_and_reasons() -> None:
    s = sample_set(n_gpus=2)
    text = report.format_sample_set(s)
    assert "backend: sysfs (2 GPUs)" in text
    assert "GPU 1: AMD Radeon Test 1" in text
    assert "3.0 / 16.0 GiB  (19%)" in text
    assert "edge 45°C, junction 52°C" in text
    assert "216 / 300 W" in text
    assert "sclk 2100 MHz, mclk 1000 MHz" in text
    assert "1200 RPM" in text
    assert "python train.py" in text and "ada" in text
    assert "rocm: libamd_smi.so not found" in text


def test_text_for_errors_unknown_gpus_and_missing_values() -> None:
    host = sample_set().host
    s = SampleSet(
        timestamp=1.0,
        backend="rocm",
        gpus=(GpuSample(index=0, name="x", timestamp=1.0, error="timed out after 2.0 s"), gpu(1, fan_rpm=None)),
        host=host,
        processes=(GpuProcess(gpu_index=-1, pid=7),),
    )
    text = report.format_sample_set(s)
    assert "error         timed out after 2.0 s" in text
    assert "fan           N/A" in text
    assert "\n  ?    7    N/A" in text


def test_print_once_on_a_sysfs_tree(tmp_path: Path) -> None:
    build_card(tmp_path, 0)
    out = io.StringIO()
    assert report.print_once(MonitorConfig(backend="sysfs", sysfs_root=tmp_path), out=out) == 0
    text = out.getvalue()
    assert "AMD Radeon RX 7900 XTX" in text and "87%" in text and "215 / 300 W" in text


def test_stream_json_count_on_a_sysfs_tree(tmp_path: Path) -> None:
    build_card(tmp_path, 0)
    out = io.StringIO()
    config = MonitorConfig(backend="sysfs", sysfs_root=tmp_path, interval_s=0.1)
    assert report.stream_json(config, 3, out=out) == 0
    samples = [codec.loads(line) for line in out.getvalue().splitlines()]
    assert len(samples) == 3
    assert all(s.gpus[0].utilization_pct == 87.0 for s in samples)
    assert samples[0].timestamp < samples[2].timestamp


def test_stream_json_ends_on_ctrl_c_with_130(monkeypatch) -> None:
    class Interrupting(io.StringIO):
        def write(self, text: str) -> int:
            raise KeyboardInterrupt

    assert report.stream_json(MonitorConfig(backend="host"), None, out=Interrupting()) == 130


def test_cli_once_runs_without_torch_or_textual() -> None:
    result = _run_cli("monitor", "--once")
    assert result.returncode == 0, result.stderr
    assert "host:" in result.stdout and "RAM" in result.stdout
    assert "HEAVY:\n" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_json_count_2_runs_without_torch_or_textual() -> None:
    result = _run_cli("monitor", "--json", "--count", "2", "--interval", "0.1")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        data = json.loads(line)
        assert data["schema"] == 1 and "host" in data
    assert codec.loads(lines[1]).host.cpu_pct is not None
    assert "HEAVY:\n" in result.stderr


def test_cli_json_into_a_closed_pipe_ends_quietly() -> None:
    producer = subprocess.Popen(
        [sys.executable, "-m", "rocmtui", "monitor", "--json", "--interval", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert producer.stdout is not None and producer.stderr is not None
    first = producer.stdout.readline()
    producer.stdout.close()  # what `| head -1` does
    assert producer.wait(timeout=30) == 0
    assert json.loads(first)["backend"] == "host"
    assert producer.stderr.read() == b""


def test_cli_monitor_into_a_pipe_prints_json_lines_not_the_ui() -> None:
    producer = subprocess.Popen(
        [sys.executable, "-m", "rocmtui", "monitor", "--interval", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert producer.stdout is not None and producer.stderr is not None
    first = producer.stdout.readline()
    producer.stdout.close()
    assert producer.wait(timeout=30) == 0
    assert json.loads(first)["schema"] == 1
    assert b"\x1b[" not in producer.stderr.read()  # no escape sequences: the UI never started


def test_monitor_once_shows_a_hostile_command_line_and_gpu_name_plain() -> None:
    from dataclasses import replace

    from gpu_factories import sample_set

    from rocmtui.gpu.headless_output import format_sample_set
    from rocmtui.gpu.sample import GpuProcess

    base = sample_set()
    hostile = "\x1b]52;c;cHduZWQ=\x1b\\ python\x9b2J"
    proc = GpuProcess(gpu_index=0, pid=7, user="\x1b[8mroot", command=hostile)
    shown = format_sample_set(replace(base, processes=(proc,), gpus=(replace(base.gpus[0], name="X\x1b]0;t\x07"),)))
    assert "\x1b" not in shown and "\x9b" not in shown and "\x07" not in shown
    assert "\\x1b]52;c;" in shown
