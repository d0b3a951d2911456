"""``rocmtui runs`` on a terminal: every run in a table to sort, filter, compare, tag and clean up.

A row a run (train runs and tracked scripts alike): state, name, start, duration, progress, the best and last
value of one series (``m``: the next series), the settings that differ between the runs shown, and the tags.
The cursor moves over cells: ``s`` sorts by the column under it (again: the other way), ``/`` filters with the
expression ``rocmtui runs --filter`` takes (``rocmtui.run.run_filter``), space selects, enter opens the selected
runs compared in ``watch``, ``d`` shows the settings that differ between them, ``t`` and ``n`` edit a run's tags
and note (``notes.json`` in its folder), ``x`` deletes a run after a confirmation (never a live one).

The rows come from the folders' small files; each series' best and last value is folded from the streams on a
thread worker, newest run first, and the table's cells are updated as they come. Every cell was read from a run
folder, so it is drawn as ``Text`` (``safe_text``), never parsed as markup.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from rocmtui.base.errors import UsageError
from rocmtui.base.units import fmt_span
from rocmtui.run.format import clean_notes, write_notes
from rocmtui.run.run_filter import RunFilter, parse_filter
from rocmtui.run.run_table import (
    RunRow,
    differing_settings,
    fold_metrics,
    names_series,
    select,
    series_names,
    sort_rows,
)
from rocmtui.run.setting_differences import MISSING, differing
from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.quiet_input import QuietApp
from rocmtui.ui.widgets.rows_view import RowsView

CELL_LIMIT = 32
"""Characters of a cell at most (a name, a setting, the tags: from outside, any length)."""
SETTING_COLUMNS = 8
"""Differing settings shown as columns at most (``d`` lists them all)."""
FOLD_BATCH_S = 0.25
"""Seconds of folding between two updates of the table's cells."""
LIVE_MARK = "●"
SELECTED_MARK = "✓"
KEYS_LINE = "space select  enter watch  / filter  s sort  m series  d differences  t tags  n note  x delete  q leave"


@dataclass(frozen=True)
class Column:
    """A column: its key in the DataTable, its header, and the key of the value it sorts by (None: none)."""

    key: str
    label: str
    sort_key: str | None


class MetricsFolded(Message):
    """Rows whose series were folded from their streams since the last message (indexes in ``rows``)."""

    def __init__(self, indexes: list[int]) -> None:
        super().__init__()
        self.indexes = indexes


def fmt_value(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def start_text(started_at: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(started_at)) if started_at else "-"


def progress_text(row: RunRow) -> str:
    info = row.info
    if info.epochs:
        return f"{info.epoch}/{info.epochs} ep"
    return f"step {info.step:,}" if info.step else "-"


class DeleteConfirm(ModalScreen[bool]):
    """Dismisses with True (delete the folder) or False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Delete"),
        Binding("n,escape,q", "answer(False)", "Keep"),
    ]

    def __init__(self, row: RunRow) -> None:
        super().__init__()
        self.row = row

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Delete this run?", classes="dialog-title")
            yield Static(safe_text(f"{self.row.name} ({self.row.info.state})", limit=200))
            yield Static(safe_text(str(self.row.folder), limit=400))
            yield Static("Its folder goes, checkpoints and all; this cannot be undone.")
            yield Static("y: delete          n / escape: keep", classes="dialog-hint")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class SettingsDiff(ModalScreen[None]):
    """The settings that differ between the runs chosen, a column a run."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,d,q", "close", "Close")]

    def __init__(self, rows: Sequence[RunRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(f"Settings that differ between the {len(self.rows)} runs", classes="dialog-title")  # a count
            with VerticalScroll():
                yield Static(self.settings_table())
            yield Static("escape closes; ↑ ↓ scroll", classes="dialog-hint")

    def settings_table(self) -> Table | Text:
        found = differing([row.settings for row in self.rows])
        if not found:
            return Text("The runs have the same settings.")
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
        table.add_column("setting", no_wrap=True)
        for row in self.rows:
            table.add_column(safe_text(row.name, limit=CELL_LIMIT), overflow="fold")
        for difference in found:
            table.add_row(safe_text(difference.name), *(safe_text(value) for value in difference.values))
        return table

    def action_close(self) -> None:
        self.dismiss(None)


class RunsTableApp(QuietApp[list[Path] | None]):
    """Returns the runs to open compared in ``watch`` (the selected ones, else the one under the cursor), or None
    when the user left without."""

    TITLE = "rocmtui runs"
    CSS = """
    Screen { layout: vertical; }
    #runs-status {
        height: 1; padding: 0 1; background: $primary-background; text-wrap: nowrap; text-overflow: ellipsis;
    }
    #runs-table { height: 1fr; }
    #runs-prompt { height: 1; border: none; padding: 0 1; display: none; }
    #runs-keys { height: 1; padding: 0 1; color: $text-muted; text-wrap: nowrap; text-overflow: ellipsis; }
    .dialog {
        width: 74; max-width: 95%; height: auto; max-height: 100%; border: thick $accent; background: $surface;
        padding: 1 2;
    }
    SettingsDiff .dialog { width: auto; min-width: 40; }
    .dialog-title { text-style: bold; color: $accent; margin-bottom: 1; }
    .dialog-hint { color: $text-muted; margin-top: 1; }
    SettingsDiff, DeleteConfirm { align: center middle; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave", show=False),
        Binding("q", "leave", "Leave", show=False),
        Binding("ctrl+c", "leave", "Leave", show=False, priority=True),
        Binding("space", "toggle_select", "Select", show=False),
        Binding("enter,w", "watch", "Watch", show=False),
        Binding("slash", "prompt('filter')", "Filter", show=False),
        Binding("t", "prompt('tags')", "Tags", show=False),
        Binding("n", "prompt('note')", "Note", show=False),
        Binding("s", "sort", "Sort", show=False),
        Binding("m", "next_series", "Series", show=False),
        Binding("d", "differences", "Differences", show=False),
        Binding("x,delete", "delete", "Delete", show=False),
    ]

    def __init__(
        self, rows: list[RunRow], runs_dir: Path, *, run_filter: RunFilter | None = None, fold: bool = True
    ) -> None:
        """``rows``: every run, newest first; ``run_filter``: the one given on the command line; ``fold``: read
        each series' best and last value from the streams on a worker (the tests' snapshots wait for it)."""
        super().__init__()
        self.rows = rows
        self.runs_dir = runs_dir
        self.run_filter = run_filter or parse_filter("")
        self.fold = fold
        self.shown: list[RunRow] = []
        self.columns: list[Column] = []
        self.selected: set[Path] = set()
        self.sort_key: str | None = None
        self.descending = False
        self.series: str | None = None
        """The series whose best and last value the table shows (``m``: the next)."""
        self.message = ""
        """A one-line answer (a refused delete, a bad filter), shown in the status line until the next key."""
        self.prompt_mode: str | None = None
        self._stop = threading.Event()
        self.status = Static(id="runs-status")
        self.table = RowsView(self.shown_cell, frozen=3, max_width=CELL_LIMIT, id="runs-table")
        self.prompt = Input(id="runs-prompt")
        self.prompt.max_length = 2000

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.table
        yield self.prompt
        yield Static(Text(KEYS_LINE), id="runs-keys")

    def on_mount(self) -> None:
        names = series_names(self.rows)
        self.series = names[0] if names else None
        self.refill()
        self.table.focus()
        if self.fold:
            self.run_worker(self._fold_all, thread=True, name="runs-fold", exit_on_error=False)

    def on_unmount(self) -> None:
        self._stop.set()

    # -- the table ----------------------------------------------------------------------------------------------
    def refill(self, *, keep: Path | None = None) -> None:
        """Rows and columns again (after a filter, a sort, a new series): the filter, the sort, the columns."""
        shown = select(self.rows, self.run_filter)
        if self.sort_key is not None:
            shown = sort_rows(shown, self.sort_key, descending=self.descending)
        self.shown = shown
        self.columns = self.make_columns(shown)
        table = self.table
        cursor = table.cursor_coordinate
        table.set_rows([column.label for column in self.columns], len(shown))
        if shown:
            at = next((n for n, row in enumerate(shown) if row.folder == keep), min(cursor.row, len(shown) - 1))
            table.move_cursor(row=at, column=min(cursor.column, len(self.columns) - 1))
        self.show_status()

    def make_columns(self, shown: Sequence[RunRow]) -> list[Column]:
        series = self.series or "-"
        columns = [
            Column("mark", " ", None),
            Column("state", "state", "state"),
            Column("name", "name", "name"),
            Column("start", "start", "start"),
            Column("duration", "time", "duration"),
            Column("progress", "progress", "progress"),
            Column("best", f"best {series}"[:CELL_LIMIT], f"best.{series}"),
            Column("last", f"last {series}"[:CELL_LIMIT], f"last.{series}"),
        ]
        for name in [name for name in differing_settings(shown) if name != "name"][:SETTING_COLUMNS]:
            columns.append(Column(f"setting:{name}", name[:CELL_LIMIT], name))
        columns.append(Column("tags", "tags", "tags"))
        return columns

    def shown_cell(self, row: int, column: int) -> Text:
        """The cell the table draws at (row, column) of the runs shown."""
        return self.cell(self.shown[row], self.columns[column].key)

    def cell(self, row: RunRow, key: str) -> Text:
        info = row.info
        if key == "mark":
            mark = SELECTED_MARK if row.folder in self.selected else LIVE_MARK if row.live else " "
            return Text(mark, style=_live_style(row) if row.live else "bold")
        if key in ("best", "last"):
            best, last = row.ends(self.series or "")
            return Text(fmt_value(best if key == "best" else last), justify="right")
        if key.startswith("setting:"):
            return safe_text(row.settings.get(key.removeprefix("setting:"), MISSING), limit=CELL_LIMIT)
        texts = {
            "state": info.state,
            "name": row.name,
            "start": start_text(info.started_at),
            "duration": fmt_span(info.elapsed_s),
            "progress": progress_text(row),
            "tags": " ".join(row.notes.tags) or "",
        }
        style = _live_style(row) if key == "state" and row.live else ""
        return safe_text(texts.get(key, ""), style=style, limit=CELL_LIMIT)

    def show_status(self) -> None:
        self.status.update(self.status_line())

    def status_line(self) -> Text:
        """How many runs, under where, the filter, the sort, the selection, and the last answer to a key."""
        shown, every = len(self.shown), len(self.rows)
        noun = "run" if every == 1 else "runs"
        parts = [f"{shown:,} of {every:,} {noun}" if self.run_filter.terms else f"{every:,} {noun}"]
        parts.append(f"under {self.runs_dir}")
        if self.run_filter.terms:
            parts.append(f"filter: {self.run_filter.text}")
        if self.sort_key is not None:
            parts.append(f"sort: {self.sort_key} {'↓' if self.descending else '↑'}")
        if self.selected:
            parts.append(f"{len(self.selected)} selected")
        line = safe_text(" · ".join(parts), limit=400)
        if self.message:
            line.append(" · ")
            line.append(safe_text(self.message, style="bold", limit=300))
        return line

    def say(self, message: str) -> None:
        self.message = message
        self.show_status()

    def current(self) -> RunRow | None:
        """The run under the cursor."""
        if not self.shown:
            return None
        row = self.table.cursor_coordinate.row
        return self.shown[row] if 0 <= row < len(self.shown) else None

    def update_row(self, row: RunRow) -> None:
        """Redraw the row's cells (the table asks for each cell on screen as it draws)."""
        self.table.refresh()

    # -- folding each run's series, on a worker -----------------------------------------------------------------
    def _fold_all(self) -> None:
        """Runs on a thread worker: each run's series folded, newest first; the UI hears of them in batches."""
        batch: list[int] = []
        sent = time.monotonic()
        for index, row in enumerate(self.rows):
            if self._stop.is_set():
                return
            fold_metrics(row)
            batch.append(index)
            if time.monotonic() - sent >= FOLD_BATCH_S:
                self.post_message(MetricsFolded(batch))
                batch, sent = [], time.monotonic()
        self.post_message(MetricsFolded(batch))

    def on_metrics_folded(self, message: MetricsFolded) -> None:
        had = self.series
        if self.series is None or all(row.metrics is not None for row in self.rows):
            names = series_names(self.rows)
            self.series = self.series if self.series in names else (names[0] if names else None)
        keys = {*self.run_filter.keys, *([self.sort_key] if self.sort_key is not None else [])}
        if had != self.series or names_series(keys, self.rows):  # the order or the rows shown may change
            current = self.current()
            self.refill(keep=current.folder if current is not None else None)
            return
        self.table.refresh()  # the cells on screen are asked for again

    # -- keys ---------------------------------------------------------------------------------------------------
    def on_key(self) -> None:
        if self.message and self.prompt_mode is None:
            self.message = ""
            self.show_status()

    def action_leave(self) -> None:
        if self.prompt_mode is not None:
            self.close_prompt()
            return
        self._stop.set()
        self.exit(None)

    def action_toggle_select(self) -> None:
        row = self.current()
        if row is None:
            return
        self.selected.symmetric_difference_update({row.folder})
        self.update_row(row)
        self.show_status()

    def chosen(self) -> list[RunRow]:
        """The selected runs in the order shown, else the one under the cursor."""
        picked = [row for row in self.shown if row.folder in self.selected]
        current = self.current()
        return picked or ([current] if current is not None else [])

    def on_rows_view_chosen(self, _: RowsView.Chosen) -> None:
        """Enter on the table (the table takes the key before the app's binding)."""
        self.action_watch()

    def action_watch(self) -> None:
        if self.prompt_mode is not None:
            return
        chosen = self.chosen()
        if chosen:
            self._stop.set()
            self.exit([row.folder for row in chosen])

    def action_sort(self) -> None:
        column = self.columns[self.table.cursor_coordinate.column] if self.columns else None
        if column is None or column.sort_key is None:
            self.say("this column does not sort")
            return
        if self.sort_key == column.sort_key:
            self.descending = not self.descending
        else:
            self.sort_key, self.descending = column.sort_key, False
        current = self.current()
        self.refill(keep=current.folder if current else None)

    def action_next_series(self) -> None:
        names = series_names(self.rows)
        if not names:
            self.say("no series known yet")
            return
        at = names.index(self.series) + 1 if self.series in names else 0
        self.series = names[at % len(names)]
        self.refill()

    def action_differences(self) -> None:
        chosen = [row for row in self.shown if row.folder in self.selected] or self.shown
        if len(chosen) < 2:
            self.say("select two runs or more (space) to see their differences")
            return
        self.push_screen(SettingsDiff(chosen))

    def action_delete(self) -> None:
        row = self.current()
        if row is None:
            return
        if row.live:
            self.say(f"{row.name} is live ({row.info.state}): stop it first; a live run is never deleted")
            return
        self.push_screen(DeleteConfirm(row), lambda yes: self._delete(row) if yes else None)

    def _delete(self, row: RunRow) -> None:
        from rocmtui.run.run_table import delete_run

        try:
            delete_run(row.folder)
        except (UsageError, OSError) as err:
            self.say(f"not deleted: {err}")
            return
        self.rows = [other for other in self.rows if other is not row]
        self.selected.discard(row.folder)
        self.refill()
        self.say(f"deleted {row.folder.name}")

    # -- the prompt: filter, tags, note ------------------------------------------------------------------------
    def action_prompt(self, mode: str) -> None:
        row = self.current()
        if mode != "filter" and row is None:
            return
        self.prompt_mode = mode
        if mode == "filter":
            self.prompt.placeholder = "filter: state=finished lr>1e-3 name~mlp (enter applies, escape cancels)"
            self.prompt.value = self.run_filter.text
        elif mode == "tags" and row is not None:
            self.prompt.placeholder = "tags, separated by spaces (enter keeps them)"
            self.prompt.value = " ".join(row.notes.tags)
        elif row is not None:
            self.prompt.placeholder = "a note about the run (enter keeps it)"
            self.prompt.value = row.notes.note
        self.prompt.display = True
        self.set_focus(self.prompt)

    def close_prompt(self) -> None:
        self.prompt_mode = None
        self.prompt.display = False
        self.table.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        mode, text = self.prompt_mode, event.value
        self.close_prompt()
        if mode == "filter":
            try:
                self.run_filter = parse_filter(text)
            except UsageError as err:
                self.say(str(err))
                return
            self.refill()
            return
        row = self.current()
        if row is None:
            return
        notes = row.notes
        updated = clean_notes([text], notes.note) if mode == "tags" else clean_notes(list(notes.tags), text)
        try:
            write_notes(row.folder, updated)
        except (OSError, UsageError) as err:
            self.say(f"not saved: {err}")
            return
        row.notes = updated
        self.update_row(row)
        self.say(f"{'tags' if mode == 'tags' else 'note'} saved in {row.folder.name}/notes.json")

    def cell_at(self, row: int, column: int) -> str:
        """The text of a cell shown (tests read the table through it)."""
        return self.shown_cell(row, column).plain


def show_runs_table(rows: list[RunRow], runs_dir: Path, run_filter: RunFilter | None = None) -> list[Path] | None:
    """The table in the terminal; the runs to watch, or None."""
    return RunsTableApp(rows, runs_dir, run_filter=run_filter).run()


def _live_style(row: RunRow) -> str:
    """A live run in green; one whose writer stopped beating (stalled) in yellow, a warning."""
    return "bold yellow" if row.info.state == "stalled" else "bold green"
