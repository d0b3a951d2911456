"""Drawing a run's scalar series (``rocmtui.ui.state.scalars``) for the two plots.

For a tracked script (``rocmtui.track()``) the loss plot shows its loss (each logged window, faint, and
its EMA) with any per-epoch losses, against the step. For any run the second plot shows one view at a
time, cycled with a key: a series, or a group of per-epoch series (a train run's accuracies).
"""

from __future__ import annotations

from rocmtui.base.series import Series
from rocmtui.ui.look.axis_ticks import nice_step
from rocmtui.ui.look.series_line import drawn_xs, envelope
from rocmtui.ui.look.y_range import PERCENT, fitted_range
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.state.scalars import EPOCH, GROUP, Scalars
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot

LOSS_COLORS = {"step": "gray", "EMA": "cyan+"}
EPOCH_COLORS = ("magenta+", "orange", "green+")
SERIES_COLORS = {"step": "gray", "EMA": "green+"}
EPOCH_SERIES_COLOR = "green+"
GROUP_COLORS = ("orange", "green+", "magenta+", "cyan+")
"""Colours of a group's series, in order (a train run's accuracies: train orange, test green, as before)."""


def loss_legend(scalars: Scalars, log_scale: bool) -> tuple[str, dict[str, str]]:
    name = scalars.loss_name or "loss"
    colors = dict(LOSS_COLORS)
    for index, epoch_name in enumerate(scalars.epoch_losses()):
        colors[epoch_name] = EPOCH_COLORS[index % len(EPOCH_COLORS)]
    return (f"{name} (log)" if log_scale else name), colors


def series_legend(scalars: Scalars, index: int) -> tuple[str, dict[str, str]]:
    others = scalars.others()
    if not others:
        return "no other series", {}
    key = others[index % len(others)]
    where = f"{index % len(others) + 1}/{len(others)}, n: next" if len(others) > 1 else "1/1"
    if key.startswith(GROUP):  # first in its cycle, it keeps the title it always had: the legend fits beside
        names = [legend for legend, _ in scalars.members(key)]
        title = key.removeprefix(GROUP) if index % len(others) == 0 else f"{key.removeprefix(GROUP)} ({where})"
        return title, dict(zip(names, GROUP_COLORS, strict=False))
    if key.startswith(EPOCH):
        return f"{key.removeprefix(EPOCH)} per epoch ({where})", {}
    return f"{key} ({where})", SERIES_COLORS


def _step_line(plot: ThrottledPlot, series: Series, colors: dict[str, str]) -> None:
    """Each point faint and the EMA over it; zoomed, the part shown (its EMA still of the whole series)."""
    view = series.view(plot.view_start, drawn_xs(plot.size.width), plot.smoothing)
    if not view.x:
        return
    if plot.smoothing > 0:
        plot.canvas.plot(*envelope(view), color=colors["step"], marker="braille")
        plot.canvas.plot(view.x, view.smoothed, color=colors["EMA"], marker="braille")
    else:  # no smoothing: the raw line alone, in the smoothed line's colour (as the loss plot draws it)
        plot.canvas.plot(*envelope(view), color=colors["EMA"], marker="braille")
    low, high = min(view.low), max(view.high)
    if plot.log_scale:
        return
    if high - low <= 1e-9 * max(1.0, abs(high)):  # a constant (a fixed lr): a readable axis around it
        pad = abs(high) * 0.1 or 1.0
        plot.canvas.ylim(low - pad, high + pad)


def _epoch_line(plot: ThrottledPlot, series: Series, color: str) -> None:
    """A per-epoch series, a point at each epoch (every one kept: runs have far fewer epochs than buckets)."""
    view = series.view()
    plot.epoch_line(view.x, view.last, color)


def step_axis(plot: ThrottledPlot, scalars: Scalars) -> None:
    """x from step 0 to the run's last step (or the steps it said it would take, if more)."""
    steps_to(plot, step_end(scalars))


def step_end(scalars: Scalars) -> float:
    """A run's last step, or the steps it said it would take if more (1 at least)."""
    last = scalars.last
    return max(float(last.step) if last else 1.0, float(last.total_steps or 0) if last else 0.0, 1.0)


def steps_to(plot: ThrottledPlot, end: float) -> None:
    """x from step 0 (zoomed: from the first step shown) to ``end``, ticked at round steps."""
    low = plot.shown_from or 0.0
    plot.canvas.xlim(low, low + (end - low) * 1.02)
    ticks = [tick for tick in step_ticks(end - low, start=low) if low <= tick <= end]
    plot.canvas.xticks([float(tick) for tick in ticks], [f"{tick:,}" for tick in ticks])
    plot.x_label("step")


def step_ticks(end: float, start: float = 0.0) -> list[int]:
    """Whole steps over ``end`` steps from ``start``, at most five, each a round number (1, 2 or 5 times a power
    of ten)."""
    step = max(1, round(nice_step(end, 4)))
    first = -(-int(start) // step) * step
    return list(range(first, int(start + end) + 1, step))


def draw_loss(plot: ThrottledPlot, scalars: Scalars, log_scale: bool) -> None:
    plot.zoom_from(step_end(scalars), step_axis=True)
    name = scalars.loss_name
    if name is not None:
        _step_line(plot, scalars.steps[name], LOSS_COLORS)
    _, colors = loss_legend(scalars, log_scale)
    for epoch_name in scalars.epoch_losses():
        _epoch_line(plot, scalars.epochs[epoch_name], colors[epoch_name])
    if log_scale:
        plot.canvas.yscale("log")
    step_axis(plot, scalars)


def draw_compared_losses(plot: ThrottledPlot, runs: list[tuple[RunState, str]], log_scale: bool) -> None:
    """Tracked runs compared (``watch RUN1 RUN2``): each run's loss, smoothed, in the run's colour."""
    ends: list[float] = []
    plot.zoom_from(max([step_end(state.scalars) for state, _ in runs] + [1.0]), step_axis=True)
    for state, color in runs:
        scalars = state.scalars
        plot.canvas.use(state.timeline)
        name = scalars.loss_name
        series = scalars.steps.get(name) if name is not None else None
        if series is None or not len(series):
            continue
        view = series.view(plot.view_start, drawn_xs(plot.size.width), plot.smoothing)
        plot.canvas.plot(view.x, view.smoothed if plot.smoothing > 0 else view.last, color=color, marker="braille")
        ends.append(max(float(series.last_x or 0.0), float(scalars.last.total_steps or 0) if scalars.last else 0.0))
    plot.canvas.use(plot.timeline)
    if log_scale:
        plot.canvas.yscale("log")
    steps_to(plot, max([*ends, 1.0]))


def fit_percent(plot: ThrottledPlot, values: list[float]) -> None:
    """A y range that fits percentages drawn (accuracies), with a margin, inside 0..100 (all of it before any);
    on a log axis, the range the values drawn span."""
    if plot.log_scale:
        return
    low, high = (min(values), max(values)) if values else PERCENT
    plot.canvas.ylim(*fitted_range(low, high, PERCENT))


def view_key(scalars: Scalars, index: int) -> str | None:
    """The key of the ``index``-th view of the cycle (it wraps), None when there is none."""
    others = scalars.others()
    return others[index % len(others)] if others else None


def draw_series(plot: ThrottledPlot, scalars: Scalars, index: int) -> None:
    """The ``index``-th view of the cycle; a tracked script's x axis (a train run's: the caller's)."""
    key = view_key(scalars, index)
    if scalars.x_name == "step":
        plot.zoom_from(step_end(scalars), step_axis=True)
    if key is not None and key.startswith(GROUP):
        for (_, member), color in zip(scalars.members(key), GROUP_COLORS, strict=False):
            if len(member):
                _epoch_line(plot, member, color)
        if "%" in key:
            fit_percent(plot, [value for _, member in scalars.members(key) for value in member.view().last])
    elif key is not None:
        series = scalars.series(key)
        if series is not None and len(series):
            if key.startswith(EPOCH):
                _epoch_line(plot, series, EPOCH_SERIES_COLOR)
            else:
                _step_line(plot, series, SERIES_COLORS)
    if scalars.x_name == "step":
        step_axis(plot, scalars)
