"""The boundary for outside text (``rocmtui.base.text``): what comes out is plain, visible and bounded, and the UI
hands Textual's markup-parsing calls nothing but its own literals or text that crossed the boundary."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.base.text import DEFAULT_LIMIT, ELLIPSIS, REPLACEMENT, one_line, plain
from rocmtui.events import LogMessage, MetricsLogged, RunFailed
from rocmtui.gpu.sample import GpuProcess
from rocmtui.ui.look.safe_text import cleaned, safe_text

OSC52 = "\x1b]52;c;cHduZWQ=\x1b\\"
HOSTILE = [
    OSC52,
    "\x1b[2J\x1b[H",  # clear the screen
    "\x1b]0;title\x07",  # set the window title
    "\x9b31m",  # CSI as one C1 byte
    "a\x00b\x7fc",
    "\u202eevil\u202c",  # right-to-left override
    "\u2066isolate\u2069",
    "line\u2028break",
    "\r\x08\x0b\x0c",
]


def _is_safe(text: str) -> bool:
    """No C0, C1 or DEL character, no bidi control, no lone surrogate."""
    bidi = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029, 0xFEFF}
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or ord(c) in bidi or 0xD800 <= ord(c) < 0xE000 for c in text)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_control_characters_and_escape_sequences_are_made_visible(hostile: str) -> None:
    shown = plain(f"python {hostile} train.py")
    assert _is_safe(shown)
    assert shown.startswith("python ") and shown.endswith(" train.py")


def test_escapes_read_as_escapes_and_printable_text_is_kept() -> None:
    assert plain(OSC52) == "\\x1b]52;c;cHduZWQ=\\x1b\\"
    assert plain("\u202e") == "\\u202e"
    assert plain("naïve 日本 [/] [@click=app.quit]") == "naïve 日本 [/] [@click=app.quit]"
    assert plain(string.printable.strip()) == string.printable.strip().translate({9: "\\x09", 10: "\\x0a"})


def test_newlines_and_tabs_are_kept_only_when_asked() -> None:
    assert plain("a\nb\tc") == "a\\x0ab\\x09c"
    assert plain("a\nb\tc\x1b", lines=True) == "a\nb\tc\\x1b"
    assert one_line("python -c \n import torch\t\x1b") == "python -c import torch \\x1b"


def test_invalid_utf8_and_surrogates_become_replacement_characters() -> None:
    assert plain(b"ok \xff\xfe end") == f"ok {REPLACEMENT}{REPLACEMENT} end"
    assert plain("name \udcff") == f"name {REPLACEMENT}"  # os.fsdecode of a non-UTF-8 argv byte


def test_length_is_bounded_even_when_escapes_grow_the_text() -> None:
    assert len(plain("x" * 10**6)) == DEFAULT_LIMIT and plain("x" * 10**6).endswith(ELLIPSIS)
    grown = plain("\x1b" * 100, limit=50)
    assert len(grown) == 50 and grown.endswith(ELLIPSIS) and _is_safe(grown)
    assert plain(b"\xff" * 10**7, limit=10) == REPLACEMENT * 9 + ELLIPSIS


ESCAPED = [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F)]
ESCAPED += [*range(0x2066, 0x206A), 0x2028, 0x2029, 0xFEFF]
"""Every code point ``plain`` shows as an escape, listed here from the design, not from the module."""


def test_every_control_and_bidi_code_is_escaped_and_its_neighbours_kept() -> None:
    for code in ESCAPED:
        escape = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        kept = code in (0x0A, 0x09)
        assert plain(f"a{chr(code)}b") == f"a{escape}b", hex(code)
        assert plain(f"a{chr(code)}b", lines=True) == (f"a{chr(code)}b" if kept else f"a{escape}b"), hex(code)
    neighbours = [0x20, 0x7E, 0xA0, 0xFF, 0x100, 0x061B, 0x061D, 0x200D, 0x2010, 0x2027, 0x202F, 0x2065, 0x206A]
    for code in neighbours:
        assert plain(f"a{chr(code)}b") == f"a{chr(code)}b", hex(code)


@pytest.mark.parametrize("lines", [False, True], ids=["one line", "lines"])
def test_every_code_point_comes_out_as_itself_its_escape_or_a_replacement(lines: bool) -> None:
    """All 1,114,112 code points, each at once: the many-examples test below draws sequences of them."""
    escaped, kept = set(ESCAPED), {0x09, 0x0A} if lines else set()

    def shown(code: int) -> str:
        if 0xD800 <= code < 0xE000:
            return REPLACEMENT
        if code in escaped and code not in kept:
            return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        return chr(code)

    block = 1 << 16
    for start in range(0, 0x110000, block):
        codes = range(start, start + block)
        assert plain("".join(map(chr, codes)), limit=8 * block, lines=lines) == "".join(map(shown, codes)), hex(start)


def test_a_text_of_exactly_the_limit_is_kept_whole_and_one_more_is_cut() -> None:
    assert plain("x" * 10, limit=10) == "x" * 10
    assert plain("x" * 11, limit=10) == "x" * 9 + ELLIPSIS

    class Shown:
        def __init__(self, size: int) -> None:
            self.size = size

        def __str__(self) -> str:
            return "y" * self.size

    assert plain(Shown(10), limit=10) == "y" * 10
    assert plain(Shown(11), limit=10) == "y" * 9 + ELLIPSIS
    assert one_line("a  b\n" * 50, limit=10) == "a b a b a" + ELLIPSIS
    assert one_line("a\tb", limit=10) == "a b"


def test_text_dropped_before_the_cut_still_ends_in_an_ellipsis() -> None:
    wide = "😀".encode()  # 4 bytes, one character
    assert plain(wide * 10, limit=10) == "😀" * 10
    assert plain(wide * 11, limit=10) == "😀" * 9 + ELLIPSIS
    assert one_line("a" + " " * 20 + "b", limit=10) == "a" + ELLIPSIS  # spaces collapse: what was past them is cut
    assert one_line("a" + " " * 18 + "b", limit=10) == "a b"  # 20 characters: the pre-cut keeps them all


def test_other_objects_are_shown_through_str_and_a_broken_str_by_its_type() -> None:
    class Broken:
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert plain(3.5) == "3.5"
    assert plain(ValueError("bad \x1b[31m")) == "bad \\x1b[31m"
    assert plain(Broken()) == "<Broken: unprintable (RuntimeError)>"


def test_a_text_for_widgets_is_never_markup() -> None:
    text = safe_text("[bold]x[/] [@click=app.quit]q[/] \x1b[31m")
    assert text.plain == "[bold]x[/] [@click=app.quit]q[/] \\x1b[31m" and not text.spans


def test_events_and_samples_are_cleaned_field_by_field_and_untouched_when_clean() -> None:
    failed = RunFailed(message=f"boom {OSC52}", kind="error")
    assert cleaned(failed).message == f"boom {plain(OSC52)}"
    clean = LogMessage(message="epoch 1 done\nnext")
    assert cleaned(clean) is clean
    proc = GpuProcess(gpu_index=0, pid=7, user="\x1b[8m", command=f"python {OSC52}")
    out = cleaned((proc, {"loss\x1b": 1.0}))
    assert out[0].pid == 7 and _is_safe(out[0].user or "") and _is_safe(out[0].command or "")
    assert out[1] == {"loss\\x1b": 1.0}


@settings(max_examples=1500, deadline=None)
@given(st.text() | st.binary().map(lambda b: b.decode("utf-8", "surrogateescape")), st.integers(1, 300), st.booleans())
def test_any_text_comes_out_safe_and_bounded(text: str, limit: int, lines: bool) -> None:
    shown = plain(text, limit=limit, lines=lines)
    assert len(shown) <= limit
    assert _is_safe(shown.replace("\n", "").replace("\t", "") if lines else shown)


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_come_out_safe(data: bytes) -> None:
    assert _is_safe(plain(data))


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)  # each code point alone: test_every_code_point_comes_out_as_itself_...
@given(st.text(alphabet=st.characters(codec=None), max_size=500), st.booleans())
def test_any_text_comes_out_safe_many_examples(text: str, lines: bool) -> None:
    shown = plain(text, lines=lines)
    assert _is_safe(shown.replace("\n", "").replace("\t", "") if lines else shown)


# -- the UI feeds markup-parsing calls only literals or text that crossed the boundary ------------------------
UI = Path(__file__).resolve().parents[1] / "rocmtui" / "ui"
MARKUP_CALLS = {"Static", "Label", "update", "notify", "add_row", "add_column"}
"""Textual calls that parse a ``str`` as markup (``notify`` only when its ``markup`` is not False)."""
SAFE_WRAPPERS = {
    "safe_text",
    "Text",
    "escape",
    "plain",
    "help_text",
    "rank_lines",
    "help_grid",
    "status_line",
    "differences_table",
    "settings_table",
}
"""Calls whose result is safe: the boundary itself, or a ``Text`` built from cleaned values."""
OWN_TEXT = {
    "sample_set",  # Peaks.update: not a widget
    "scalars.last_epoch.values if scalars.last_epoch else {}",  # dict.update
    "self.title_text",  # a help screen's title, given by rocmtui's own code
    "f'Send SIG{self.signal_name} to PID {self.proc.pid}?'",  # a signal name and an int
    "f'SIG{self.signal_name} will {what}.'",
    "self._header(column.label)",  # the process table's own headers, with their sort mark
    "self._header(COMMAND)",
    "['-'] * len(self.shown_columns)",
    "row",  # process_rows.cells: outside columns as Text
    "note",  # the empty table's own note
    "f'Settings that differ between the {len(self.runs)} runs'",  # a count
    "f'Settings that differ between the {len(self.rows)} runs'",
    "dict.fromkeys(series_keys(scalars))",  # dict.update
}
"""Arguments that are rocmtui's own words (each read once); anything new must cross the boundary or join here."""


def _safe_call(node: ast.expr) -> bool:
    """A call of one of ``SAFE_WRAPPERS``."""
    return isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in SAFE_WRAPPERS


def _fed_raw(call: ast.Call) -> list[str]:
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name not in MARKUP_CALLS:
        return []
    if name == "notify" and any(k.arg == "markup" and isinstance(k.value, ast.Constant) for k in call.keywords):
        return []
    bad = []
    for given_arg in call.args:
        arg = given_arg.value if isinstance(given_arg, ast.Starred) else given_arg
        if isinstance(arg, ast.Constant) or ast.unparse(arg) in OWN_TEXT:
            continue
        if _safe_call(arg) or (isinstance(arg, ast.GeneratorExp | ast.ListComp) and _safe_call(arg.elt)):
            continue
        if isinstance(arg, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in arg.values):
            continue
        bad.append(ast.unparse(arg))
    return bad


def test_widgets_are_never_fed_raw_strings() -> None:
    """A ``str`` that is not a literal reaches ``Static``/``update``/``notify``/``add_row`` only through the
    boundary (``safe_text``), or with markup off: anything else is a place where outside text could be markup."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                found += [f"{path.relative_to(UI)}:{node.lineno}: {arg}" for arg in _fed_raw(node)]
    assert not found, "\n".join(found)


def test_compared_runs_folder_names_are_plain_labels() -> None:
    from rocmtui.ui.state.compare import run_labels

    labels = run_labels([f"/runs/20261201-101500-{OSC52}", "/runs/20261201-101600-b"])
    assert _is_safe("".join(labels)) and "\\x1b" in labels[0]


def test_headless_lines_and_doctor_show_escapes_as_text() -> None:
    import io

    from rocmtui.doctor.checks import WARN, Check
    from rocmtui.doctor.report import format_checks
    from rocmtui.events import LogMessage
    from rocmtui.launch.headless import LinePrinter

    out = io.StringIO()
    LinePrinter(out)(LogMessage(f"data from /tmp/{OSC52}"))
    assert "\x1b" not in out.getvalue() and plain(OSC52) in out.getvalue()
    text = format_checks([Check("GPU", WARN, f"card {OSC52}", fix=f"do {OSC52}")])
    assert "\x1b" not in text and text.count(plain(OSC52)) == 2


def test_a_windows_names_are_cleaned_and_its_numbers_left_as_they_are() -> None:
    steps = tuple(range(1, 1001))
    values = tuple(float(n) for n in steps)
    dirty = MetricsLogged(1000, {"loss\x1b": 1.0}, 1.0, 1000, steps=steps, logged={"loss\x1b": values})
    out = cleaned(dirty)
    assert list(out.logged) == list(out.values) == [plain("loss\x1b")]
    assert out.steps is steps and out.logged[plain("loss\x1b")] is values
    clean = msgspec.structs.replace(dirty, values={"loss": 1.0}, logged={"loss": values})
    assert cleaned(clean) is clean


def test_strings_cleaned_again_come_out_the_same_and_the_kept_ones_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmtui.ui.look import safe_text as module

    monkeypatch.setattr(module, "_MEMO_ENTRIES", 8)
    monkeypatch.setattr(module, "_CLEANED", {})
    hostile = "GPU\x1b[31m\x07"
    first, second = cleaned((hostile, "clean")), cleaned((hostile, "clean"))
    assert first == second == (plain(hostile, lines=True), "clean")
    for i in range(50):
        assert cleaned(f"name {i}\x1b") == plain(f"name {i}\x1b", lines=True)
    assert len(module._CLEANED) <= 8
    long = "x\x1b" * 200  # longer than the strings kept: cleaned, not kept
    assert cleaned(long) == plain(long, lines=True) and long not in module._CLEANED


def test_a_dataclass_field_typed_as_a_number_that_holds_text_is_still_cleaned() -> None:
    from rocmtui.gpu.sample import GpuSample

    sample = GpuSample(index=0, name="ok", timestamp=1.0, utilization_pct="[red]\x1b")  # type: ignore[arg-type]
    assert cleaned(sample).utilization_pct == plain("[red]\x1b", lines=True)


def test_a_clean_string_equal_to_one_seen_before_comes_back_as_itself() -> None:
    first = "".join(["lo", "ss"])
    second = "".join(["l", "oss"])
    assert first == second and first is not second
    assert cleaned(first) is first
    assert cleaned(second) is second
    logged: dict[str, tuple[float, ...]] = {second: (1.0,)}
    event = MetricsLogged(1, {second: 1.0}, 1.0, 1, steps=(1,), logged=logged)
    assert cleaned(event) is event


def test_a_sample_like_a_clean_one_but_for_its_numbers_is_given_back_and_any_other_is_cleaned() -> None:
    from dataclasses import replace

    from rocmtui.gpu.sample import GpuSample
    from rocmtui.ui.look.safe_text import cleaned_like

    before = GpuSample(index=0, name="NVIDIA H100", timestamp=1.0, utilization_pct=5.0, temperatures_c=(("gpu", 40.0),))
    assert cleaned(before) is before
    numbers = replace(before, utilization_pct=6.0, power_w=None, timestamp=2.0)
    assert cleaned_like(numbers, before, before) is numbers
    hostile = replace(numbers, name="\x1b[31mH100")
    assert cleaned_like(hostile, before, before).name == cleaned(hostile).name != hostile.name
    sensors = replace(numbers, temperatures_c=(("\x1b]0;x", 40.0),))
    assert cleaned_like(sensors, before, before).temperatures_c == cleaned(sensors).temperatures_c
    dirty = replace(before, error="\x07")
    assert cleaned_like(replace(dirty, utilization_pct=7.0), dirty, cleaned(dirty)).error == cleaned(dirty).error
