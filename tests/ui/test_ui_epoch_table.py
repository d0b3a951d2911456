"""The epoch table: columns that fit 3-digit epochs, every row kept, and scrolling that follows the newest
row unless the user scrolled back (keys and the mouse wheel)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.events import MouseScrollUp
from ui_helpers import recorded_events

from rocmtui.events import EpochCompleted, EpochMetrics
from rocmtui.ui.widgets.epoch_table import COLUMNS, EpochTable, epoch_row, table_line


def epochs(count: int, total: int = 200) -> list[EpochCompleted]:
    """``count`` epochs of a ``total``-epoch run, made from the recorded run's first epoch."""
    import msgspec

    first = next(e for e in recorded_events() if isinstance(e, EpochCompleted))
    return [msgspec.structs.replace(first, epoch=i, epochs=total, test_acc=0.5 + i / (4 * total)) for i in range(count)]


def test_a_three_digit_epoch_keeps_a_space_before_the_next_column() -> None:
    line = table_line(epoch_row(epochs(100)[-1], best=True))
    assert line.startswith("*100/200 ")
    loss = f"{epochs(1)[0].train_loss:.4f}"
    assert line[COLUMNS[0][1] :].startswith(loss)
    assert table_line(epoch_row(epochs(60)[59], best=False)).startswith(" 60/200  ")


class TableApp(App[None]):
    CSS = "EpochTable { height: 6; }"  # a header and five rows

    def compose(self) -> ComposeResult:
        yield EpochTable(id="epochs")


def shown(table: EpochTable) -> list[str]:
    """The epoch numbers of the rows drawn."""
    lines = str(table.render()).splitlines()[1:]
    return [line[1:].split("/")[0] for line in lines]


async def test_it_follows_the_newest_row_until_scrolled_back() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(EpochTable)
        assert app.focused is table  # focusable: the arrows reach it
        table.show(epochs(20))
        await pilot.pause()
        assert table.row_count == 20 and shown(table) == ["16", "17", "18", "19", "20"]
        await pilot.press("up", "up")
        assert not table.following and shown(table) == ["14", "15", "16", "17", "18"]
        table.show(epochs(21))  # a new epoch does not move a view the user scrolled back
        assert shown(table) == ["14", "15", "16", "17", "18"]
        await pilot.press("pageup")
        assert shown(table) == ["10", "11", "12", "13", "14"]
        await pilot.press("home")
        assert shown(table) == ["1", "2", "3", "4", "5"]
        assert table.where == "1-5/21 (End: newest)" == table.border_subtitle  # drawn by a bordered table
        assert str(table.render()).splitlines()[0].endswith("  1-5/21 (End: new")  # no border: the header, cut
        await pilot.press("end")
        assert table.following and shown(table) == ["17", "18", "19", "20", "21"]
        table.show(epochs(22))
        assert shown(table) == ["18", "19", "20", "21", "22"]


async def test_scrolling_down_to_the_end_follows_again_and_the_wheel_scrolls() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(EpochTable)
        table.show(epochs(8))
        await pilot.pause()
        await pilot.press("pageup")
        assert shown(table)[0] == "1" and not table.following
        await pilot.press("down", "down", "down")
        assert table.following and shown(table)[-1] == "8"
        table.post_message(MouseScrollUp(table, 1, 1, 0, -1, 0, False, False, False))  # the mouse wheel
        await pilot.pause()
        assert shown(table) == ["3", "4", "5", "6", "7"]


async def test_few_rows_draw_no_position_and_another_run_starts_at_its_newest_row() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(EpochTable)
        table.show(epochs(3, total=3))
        await pilot.pause()
        assert shown(table) == ["1", "2", "3"] and "/" not in str(table.render()).splitlines()[0]
        table.show(epochs(30), key=1)
        await pilot.press("home")
        table.show(epochs(30, total=30), key=2)  # the compare view switched runs
        assert table.following and shown(table)[-1] == "30"


async def test_a_scripts_epochs_get_a_column_for_each_name_it_logged() -> None:
    app = TableApp()
    async with app.run_test(size=(80, 10)) as pilot:
        table = app.query_one(EpochTable)
        logged = [
            EpochMetrics(epoch=1, values={"eval_loss": 2.25, "eval_acc": 0.41}, elapsed_s=3.0, step=100),
            EpochMetrics(epoch=2, values={"eval_loss": 1.5, "eval_acc": 0.5, "bleu": 12.5}, elapsed_s=6.0, step=200),
        ]
        table.show_metrics(logged[:1])
        await pilot.pause()
        header, *rows = str(table.render()).splitlines()
        assert header.split() == ["epoch", "eval_loss", "eval_acc"] and rows[0].split() == ["1", "2.25", "0.41"]
        table.show_metrics(logged)  # a name first logged later gets its own column; a row without it, a gap
        header, *rows = str(table.render()).splitlines()
        assert header.split() == ["epoch", "eval_loss", "eval_acc", "bleu"]
        assert [row.split() for row in rows] == [["1", "2.25", "0.41"], ["2", "1.5", "0.5", "12.5"]]
        assert table.get_content_width(table.size, table.size) >= max(len(line) for line in (header, *rows))
