"""A run card's keys and axes, and the card of runs that end badly, have not ended, or logged odd values:
every panel a curve or a word, every number in the SVG finite (the SVG parsed as XML)."""

from __future__ import annotations

import itertools
import json
import math
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import rocmtui
from rocmtui.export.card_data import metric_stem, read_card
from rocmtui.export.card_svg import card_svg

DATA = Path(__file__).resolve().parents[1] / "data"
SVG = "{http://www.w3.org/2000/svg}"
GEOMETRY = ("x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "points")
PANEL_TITLE_Y = 86 + 22


def card_of(run_dir: Path) -> ET.Element:
    return ET.fromstring(card_svg(read_card(run_dir)))


def texts(root: ET.Element, class_: str | None = None) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text") if class_ in (None, node.get("class"))]


def numbers(root: ET.Element) -> list[str]:
    """Every number written in a geometry attribute."""
    found: list[str] = []
    for node in root.iter():
        for name in GEOMETRY:
            found += re.split(r"[\s,]+", node.get(name, "").strip()) if node.get(name) else []
    return found


def x_ticks(root: ET.Element) -> list[ET.Element]:
    return [
        node for node in root.iter(f"{SVG}text") if node.get("class") == "tick" and node.get("text-anchor") == "middle"
    ]


def assert_drawable(root: ET.Element) -> None:
    """Every geometry number finite, and every panel holds a curve or says why it has none."""
    assert numbers(root) and all(math.isfinite(float(value)) for value in numbers(root))
    panels = [node for node in root.iter(f"{SVG}rect") if node.get("rx")]
    curves = list(root.iter(f"{SVG}polyline"))
    words = texts(root, "note")
    assert len(panels) <= len(curves) + words.count("no finite values")
    assert panels or "no series logged" in words


def partial_run(tmp_path: Path, keep: int, ending: dict[str, object] | None = None) -> Path:
    """The H200 run cut after ``keep`` stream lines, the summary gone, maybe with ``ending`` written last."""
    run_dir = tmp_path / "run"
    shutil.copytree(DATA / "h200-fastnet-run", run_dir)
    (run_dir / "summary.json").unlink()
    lines = (run_dir / "metrics.jsonl").read_text(encoding="utf-8").splitlines()[:keep]
    lines += [json.dumps({"seq": keep, "t": 1796109519.0, **ending})] if ending else []
    (run_dir / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run_dir


def test_each_legend_name_follows_a_swatch_in_its_curves_colour_and_dash() -> None:
    root = card_of(DATA / "h200-fastnet-run")
    curves = {node.get("data-series"): node for node in root.iter(f"{SVG}polyline")}
    swatches = [node for node in root.iter(f"{SVG}line") if node.get("class") == "swatch"]
    names = [node for node in root.iter(f"{SVG}text") if node.get("class") == "legend"]
    assert [node.text for node in names] == ["loss", "test_loss", "test_acc", "train_acc"]
    assert len(swatches) == len(names)
    for swatch, name in zip(swatches, names, strict=True):
        curve = curves[name.text]
        assert swatch.get("stroke") == curve.get("stroke") and name.get("style") == f"fill: {curve.get('stroke')}"
        assert swatch.get("stroke-dasharray") == curve.get("stroke-dasharray")
        assert float(swatch.get("x2", "")) < float(name.get("x", ""))  # the swatch comes first
    assert curves["test_acc"].get("stroke-dasharray") is None
    assert curves["train_acc"].get("stroke-dasharray") is not None


def test_a_train_runs_curves_are_drawn_against_epochs_from_zero() -> None:
    root = card_of(DATA / "h200-fastnet-run")
    assert texts(root, "axis-name") == ["epoch", "epoch"]
    ticks = x_ticks(root)
    assert ["".join(node.itertext()) for node in ticks] == ["0", "2", "4", "6", "8", "10"] * 2
    test_acc = next(node for node in root.iter(f"{SVG}polyline") if node.get("data-series") == "test_acc")
    xs = [float(pair.split(",")[0]) for pair in test_acc.get("points", "").split()]
    accuracy_ticks = [float(node.get("x", "")) for node in ticks[6:]]
    assert len(xs) == 10 and xs[-1] == accuracy_ticks[-1]  # epoch 10 under the tick 10
    assert abs(xs[4] - (accuracy_ticks[2] + accuracy_ticks[3]) / 2) < 0.2  # epoch 5 between the ticks 4 and 6
    dots = [node for node in root.iter(f"{SVG}circle") if node.get("fill") == test_acc.get("stroke")]
    assert len(dots) >= 10  # a dot at each epoch


def test_a_tracked_runs_axis_counts_whole_steps_and_related_series_share_a_panel(tmp_path: Path) -> None:
    with rocmtui.track("fit", runs_dir=tmp_path, config={"lr": 0.05}) as run:
        for step in range(1, 8):
            run.log(step=step, loss=1.0 / step, lr=0.05)
            if step % 3 == 0:
                run.log_epoch(epoch=step // 3, val_loss=1.2 / step)
        run.log(step=8, loss=0.1, lr=0.05, grad_norm=2.0)
    root = card_of(run.run_dir)
    # a panel's curves drawn last to first, so that its first is on top
    assert [node.get("data-series") for node in root.iter(f"{SVG}polyline")] == ["val_loss", "loss", "lr"]
    assert texts(root, "axis-name") == ["step", "step"]
    ticks = [float(node.text or "") for node in x_ticks(root)]
    assert ticks and all(tick == int(tick) for tick in ticks)
    assert [node.text for node in root.iter(f"{SVG}text") if node.get("class") == "legend"] == ["loss", "val_loss"]
    assert_drawable(root)


def test_a_series_stem_leaves_out_the_split() -> None:
    assert {metric_stem(name) for name in ("loss", "val_loss", "train/loss", "eval-loss", "Test Loss")} == {"loss"}
    assert metric_stem("train") == "train"
    assert metric_stem("val_acc") != metric_stem("val_loss")


def test_a_failed_runs_card_says_why_and_shares_its_epochs_between_panels(tmp_path: Path) -> None:
    failure = {"event": "RunFailed", "message": "CUDA out of memory", "kind": "oom", "step": 200, "epoch": 4}
    root = card_of(partial_run(tmp_path, 9, failure))
    assert "failed (oom): CUDA out of memory" in texts(root, "note")
    ticks = x_ticks(root)
    loss_ticks, accuracy_ticks = ticks[: len(ticks) // 2], ticks[len(ticks) // 2 :]
    assert [n.text for n in loss_ticks] == [n.text for n in accuracy_ticks] == ["0", "1", "2", "3", "4"]
    assert_drawable(root)


def test_a_run_without_an_end_says_so(tmp_path: Path) -> None:
    root = card_of(partial_run(tmp_path, 7))
    assert "no end recorded yet: 2 of 10 epochs done" in texts(root)
    assert "best test accuracy 73.20% at epoch 2 of 10" in "\n".join(texts(root))
    assert_drawable(root)
    early = card_of(partial_run(tmp_path / "early", 3))  # no epoch ended: the loss alone
    assert [node.get("data-series") for node in early.iter(f"{SVG}polyline")] == ["loss"]
    assert_drawable(early)


def test_non_finite_and_extreme_values_leave_no_nan_in_the_svg(tmp_path: Path) -> None:
    with rocmtui.track("odd", runs_dir=tmp_path) as run:
        for step in range(1, 40):
            loss = math.nan if step % 7 == 0 else math.inf if step == 30 else 1 / step
            run.log(step=step, loss=loss, grad_norm=math.nan, huge=1e308 if step % 2 else -1e308)
    root = card_of(run.run_dir)
    assert_drawable(root)
    assert [node.get("data-series") for node in root.iter(f"{SVG}polyline")] == ["loss", "huge"]
    y_ticks = [node.text for node in root.iter(f"{SVG}text") if node.get("text-anchor") == "end"]
    assert "1e+308" in y_ticks and "-1e+308" in y_ticks
    with rocmtui.track("all-nan", runs_dir=tmp_path) as run:
        run.log(step=1, loss=math.nan)
    root = card_of(run.run_dir)
    assert "no finite values" in texts(root, "note") and "loss: no finite value" in texts(root, "best")
    assert not [number for number in numbers(root) if not math.isfinite(float(number))]


def test_a_single_point_is_a_dot_on_a_ticked_axis(tmp_path: Path) -> None:
    with rocmtui.track("one", runs_dir=tmp_path) as run:
        run.log(step=5, loss=0.42)
    root = card_of(run.run_dir)
    assert_drawable(root)
    (dot,) = root.iter(f"{SVG}circle")
    (tick,) = x_ticks(root)
    assert tick.text == "5" and float(tick.get("x", "")) == float(dot.get("cx", ""))
    with rocmtui.track("none", runs_dir=tmp_path) as run:
        pass
    root = card_of(run.run_dir)
    assert "no series logged" in texts(root, "note") and "no end recorded yet" not in texts(root)


def test_a_loss_falling_over_decades_is_drawn_on_a_log_scale(tmp_path: Path) -> None:
    with rocmtui.track("fit", runs_dir=tmp_path) as run:
        for step in range(1, 101):
            run.log(step=step, loss=10.0 ** (1 - step / 25), accuracy=step / 100)
    root = card_of(run.run_dir)
    assert_drawable(root)
    titles = texts(root, "chart-title")
    assert titles == ["loss log scale", "accuracy"]  # accuracy's 100x from 0.01 to 1 stays linear
    loss_panel_ticks = [node.text for node in root.iter(f"{SVG}text") if node.get("text-anchor") == "end"]
    assert {"0.01", "1", "10"} <= set(loss_panel_ticks)
    points = [
        float(pair.split(",")[1])
        for pair in next(n for n in root.iter(f"{SVG}polyline") if n.get("data-series") == "loss")
        .get("points", "")
        .split()
    ]
    drops = [b - a for a, b in itertools.pairwise(points)]
    assert max(drops) - min(drops) < 0.2  # a straight line: the same fall each step
