"""``rocmtui monitor --hosts / --hostfile / --prometheus``: bad input is one line and exit 2; --once and
--json read real HTTP pages (served on 127.0.0.1 by this process)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run_cli
from exporter_pages import EXPORTERS, Page, closed_port, serving

from rocmtui.codec import decode_json

BAD = [
    (["monitor", "--hosts", "node1", "--once"], "--hosts: 'node1': not HOST:PORT: the port is missing"),
    (["monitor", "--hosts", "node1:70000", "--once"], "the port is not a number from 1 to 65535"),
    (["monitor", "--hosts", ",", "--once"], "no host to watch"),
    (["monitor", "--hostfile", "/no/such/hosts", "--once"], "--hostfile /no/such/hosts: no such file"),
    (["monitor", "--hosts", "a:1", "--prometheus", "http://p:9090"], "give it alone"),
    (["monitor", "--hosts", "a:1", "--replay", "x.jsonl"], "--replay goes with this machine's monitor"),
    (["monitor", "--hosts", "a:1", "--token-file", "/no/such/token"], "--token-file /no/such/token: no such file"),
    (["monitor", "--token-file", "/no/such/token", "--once"], "--token-file goes with --hosts"),
    (["monitor", "--prometheus", "prom", "--once"], "--prometheus 'prom': not HOST:PORT"),
]


@pytest.mark.parametrize(("argv", "message"), BAD)
def test_bad_cluster_input_is_one_line_and_exit_2(argv, message, capsys) -> None:
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_hostfile_that_is_a_folder_is_one_line(tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["monitor", "--hostfile", str(tmp_path), "--once"], capsys)
    assert code == 2 and "is not a regular file (a folder)" in err


def test_once_prints_every_host(tmp_path: Path, capsys) -> None:
    with serving(Page((EXPORTERS / "dcgm-exporter-t4.prom").read_bytes())) as address:
        dead = closed_port()
        hosts = tmp_path / "hosts"
        hosts.write_text(f"# lab\n{address}\n{dead}  # switched off\n")
        code, out, err = run_cli(["monitor", "--hostfile", str(hosts), "--once"], capsys)
    assert code == 0, err
    assert "hosts 1/2 up · GPUs 1 · util 91%" in out
    assert f"cp-bm14r7 ({address})  dcgm-exporter" in out
    assert f"{dead}  DOWN: connection refused" in out


def test_json_count_writes_one_object_per_round_with_every_host(capsys) -> None:
    with serving(Page((EXPORTERS / "amd-device-metrics-exporter-mi300x.prom").read_bytes())) as address:
        code, out, _ = run_cli(["monitor", "--hosts", address, "--json", "--count", "2", "--interval", "0.1"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 2
    round_ = decode_json(lines[0], dict)
    (host,) = round_["hosts"]
    assert host["up"] and host["hostname"] == "tw038" and host["exporter"] == "amd-device-metrics-exporter"
    assert [g["utilization_pct"] for g in host["gpus"]] == [100.0, 0.0]
