"""``rocmtui runs RUN --card``: one SVG image of a run, readable on its own, its curves drawn from the series."""

from __future__ import annotations

import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import rocmtui
from rocmtui.base.series import Series
from rocmtui.cli.main import main
from rocmtui.export.card_data import Chart, read_card, series_of
from rocmtui.export.card_svg import band_points, card_svg, chart_svg, frame_for, views
from rocmtui.run.stream import read_events

DATA = Path(__file__).resolve().parents[1] / "data"
SVG = "{http://www.w3.org/2000/svg}"


def parse(path: Path) -> ET.Element:
    return ET.fromstring(path.read_text(encoding="utf-8"))


def texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def polyline(root: ET.Element, series: str) -> list[tuple[float, float]]:
    (line,) = [node for node in root.iter(f"{SVG}polyline") if node.get("data-series") == series]
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in line.get("points", "").split())]


def copy_run(name: str, tmp_path: Path) -> Path:
    run_dir = tmp_path / name
    shutil.copytree(DATA / name, run_dir)
    return run_dir


def test_a_train_runs_card_has_its_curves_best_result_gpu_and_bench_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run("h200-fastnet-run", tmp_path)
    out = tmp_path / "card.svg"
    assert main(["runs", str(run_dir), "--card", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"rocmtui: run card of {run_dir} in {out}"
    root = parse(out)
    shown = "\n".join(texts(root))
    assert "best test accuracy 93.57% at epoch 10 of 10, 3.23s into training" in shown
    assert "time to accuracy: 92% at 2.93s, 93% at 3.23s" in shown
    assert "NVIDIA H200: GPU memory in use at peak 3.0 GiB of 140.4 GiB (all processes)" in shown
    assert "peak temperature 47°C" in shown
    assert "peak VRAM (PyTorch): 1.3 GiB, the most its tensors held at once" in shown
    assert "rocmtui: fastnet on cifar10 | NVIDIA H200 |" in shown  # the run's line as bench prints it
    assert "peak temp 47°C | test acc 93.57%" in shown
    loss = polyline(root, "loss")
    test_acc = polyline(root, "test_acc")
    assert len(test_acc) == 10  # one point an epoch
    assert [x for x, _ in loss] == sorted(x for x, _ in loss)
    steps = series_of(read_events(run_dir), ["loss"])["loss"]
    assert 100 < len(loss) < len(steps)  # downsampled, one group per two pixels


def test_the_polyline_follows_the_series_and_the_band_keeps_a_spike() -> None:
    series = Series()
    for step in range(1, 2001):
        series.add(step, 5.0 if step == 1234 else 1.0 / math.sqrt(step))
    chart = Chart("loss", (("loss", series),))
    root = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{"".join(chart_svg(chart, 0.0, 400.0))}</svg>')
    points = polyline(root, "loss")
    ((_, view),) = views(chart, 400.0 - 70)
    assert len(points) == len(view.x) < 2000
    frame = frame_for([("loss", view)], 0.0, 86, 400.0)
    assert points == [frame.point(x, y) for x, y in zip(view.x, view.mean, strict=True)]
    assert frame.x_low == 0  # step 1 of 2000: the axis starts at 0
    assert points[0][0] == frame.point(view.x[0], 0)[0] > frame.left and points[-1][0] == frame.left + frame.width
    # Lower values are lower on the image: the first (largest) loss is the highest point of the line
    assert min(y for _, y in points) == points[0][1]
    # The spike, averaged away in its group's mean, is the top of the band
    (band,) = root.iter(f"{SVG}polygon")
    band_top = min(float(pair.split(",")[1]) for pair in band.get("points", "").split())
    assert band_top == frame.point(1234, 5.0)[1] == min(y for _, y in band_points(frame, view))
    assert band_top < min(y for _, y in points) - 50


def test_a_tracked_runs_card_draws_its_first_two_series_and_its_lowest_loss(tmp_path: Path) -> None:
    with rocmtui.track("sweep", runs_dir=tmp_path / "runs", config={"lr": 0.003}) as run:
        for step in range(1, 121):
            run.log(step=step, loss=abs(step - 80) / 100 + 0.25, accuracy=step / 120, lr=0.003)
    out = tmp_path / "tracked.svg"
    assert main(["runs", str(run.run_dir), "--card", str(out)]) == 0
    root = parse(out)
    assert [node.get("data-series") for node in root.iter(f"{SVG}polyline")] == ["loss", "accuracy"]
    shown = "\n".join(texts(root))
    assert "lowest loss 0.25 at step 80" in shown
    assert "lr 0.003" in shown
    assert "no GPU samples in the run folder" in shown
    assert len(polyline(root, "loss")) == 120  # fewer points than pixels: every one drawn


def test_the_default_card_is_named_after_the_run_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run("cpu-ddp-run", tmp_path)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["runs", str(run_dir), "--card"]) == 0
    assert capsys.readouterr().out.strip().endswith(" in cpu-ddp-run-card.svg")
    assert [path.name for path in here.iterdir()] == ["cpu-ddp-run-card.svg"]
    assert "best test accuracy 38.50%" in "\n".join(texts(parse(here / "cpu-ddp-run-card.svg")))


def test_a_card_that_cannot_be_written_is_one_line_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = copy_run("cpu-ddp-run", tmp_path)
    assert main(["runs", str(run_dir), "--card", str(tmp_path / "missing" / "card.svg")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rocmtui runs: error: cannot write ") and "\n" not in err
    assert not (tmp_path / "missing").exists()
    assert main(["runs", str(run_dir), "--card", "--csv"]) == 2
    assert "give one of them" in capsys.readouterr().err


HOSTILE = "<b>&amp;\x1b]52;c;cHduZWQ=\x07\u202e</text><script>alert(1)</script>\"'"


def test_hostile_names_are_plain_escaped_text(tmp_path: Path) -> None:
    with rocmtui.track(HOSTILE, runs_dir=tmp_path / "runs", config={HOSTILE: HOSTILE}) as run:
        for step in range(1, 20):
            run.log(step=step, **{HOSTILE: 1.0 / step, "x\x00y\x9b": float(step)})
    svg = card_svg(read_card(run.run_dir))
    root = ET.fromstring(svg)  # parses: nothing closed a tag early or left a raw control character
    assert not list(root.iter(f"{SVG}script"))
    assert all(ord(ch) >= 0x20 or ch == "\n" for ch in svg)
    assert "\x1b" not in svg and "\u202e" not in svg
    title = texts(root)[0]
    assert title.startswith("<b>&amp;\\x1b]52;c;cHduZWQ=\\x07\\u202e</text><script>")
    first, second = sorted(node.get("data-series") or "" for node in root.iter(f"{SVG}polyline"))
    assert first.startswith("<b>&amp;\\x1b]52;c;cHduZWQ=\\x07\\u202e</text><script>alert(1)")
    assert second == "x\\x00y\\x9b"


def test_the_sample_card_is_the_card_of_the_recorded_run(tmp_path: Path) -> None:
    """A snapshot: ``screenshots/run-card.svg`` is what ``runs tests/data/h200-fastnet-run --card`` writes today
    (regenerate it with that command when the card changes on purpose, then look at it)."""
    out = tmp_path / "card.svg"
    assert main(["runs", str(DATA / "h200-fastnet-run"), "--card", str(out)]) == 0
    sample = Path(__file__).resolve().parents[2] / "screenshots" / "run-card.svg"
    assert out.read_text(encoding="utf-8") == sample.read_text(encoding="utf-8")
