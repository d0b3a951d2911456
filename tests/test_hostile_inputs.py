"""A hostile and clumsy user, as a table: every case is one line on stderr, the right exit code, no traceback,
nothing run from a file and nothing of an existing run overwritten.

Cases run in-process through ``rocmtui.cli.main.main`` (fast); a few run as real processes in the slow tier.
Placeholders in argv: ``{w}`` is a module-wide folder of prepared inputs (see ``world``), ``{run}`` a finished
two-epoch run in it, ``{ckpt}`` a folder of crafted and broken checkpoint files.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from rocmtui.cli.main import main
from rocmtui.config import TrainConfig
from rocmtui.events import RunControl, RunFinished
from rocmtui.train import checkpoints
from rocmtui.train.data import NPZ_KEYS, SAMPLE_PATH
from rocmtui.train.loop import train

MARKER = "pwned"
pytestmark = pytest.mark.xdist_group("hostile")  # one worker builds the shared run folder, not each


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    expect: str
    """A part of the one stderr line."""
    code: int = 2
    tty: bool = False
    """Run as if stdout were a terminal (``monitor --replay`` is refused before that otherwise)."""
    out: str | None = None
    """Set for an input that is ignored rather than refused (a planted notes file): the command succeeds
    (``code`` 0) with nothing on stderr, and its stdout holds this."""


def T(*flags: str, dataset: str = "cifar") -> tuple[str, ...]:
    """A headless CPU training command whose run folders (if any) go under {out}, the case's own folder."""
    return ("train", dataset, "--headless", "--device", "cpu", "--runs-dir", "{out}", *flags)


def R(path: str, *flags: str, dataset: str = "cifar") -> tuple[str, ...]:
    return T("--resume", path, *flags, dataset=dataset)


FINITE = "positive finite"
NUMBERS = {  # flag: (a bad value, what the error says) for each numeric train option
    "--epochs": [("0", "positive integer"), ("-1", "positive integer"), ("2.5", "not a whole number")],
    "--batch-size": [("0", "out of range"), ("x", "not a whole number"), ("", "not a whole number")],
    "--lr": [("0", FINITE), ("-1", FINITE), ("nan", FINITE), ("inf", FINITE), ("1e999", FINITE), ("x", "not a number")],
    "--weight-decay": [("-0.1", "0 or more"), ("nan", "0 or more"), ("x", "not a number")],
    "--label-smoothing": [("1", "below 1"), ("-0.1", "below 1"), ("nan", "below 1")],
    "--seed": [("-1", "0 or more"), ("1.5", "not a number"), ("99999999999999999999999", "below 2**63")],
}  # fmt: skip

OUT = "is out of range"
BAD_SETTINGS = [  # (field, value, what the one line says) in a checkpoint's or a run folder's saved settings
    ("batch_size", -1, f"-1 {OUT}"),
    ("batch_size", 0, f"0 {OUT}"),
    ("lr", float("nan"), f"nan {OUT}"),
    ("lr", -0.1, f"-0.1 {OUT}"),
    ("lr", 0.0, f"0.0 {OUT}"),
    ("lr", float("inf"), f"inf {OUT}"),
    ("epochs", -3, f"-3 {OUT}"),
    ("weight_decay", -1.0, f"-1.0 {OUT}"),
    ("label_smoothing", 1.5, f"1.5 {OUT}"),
    ("jitter", 1.0, f"1.0 {OUT}"),
    ("epoch_share", 0.0, f"0.0 {OUT}"),
    ("epoch_share", 2.0, f"2.0 {OUT}"),
    ("tta_share", -1.0, f"-1.0 {OUT}"),
    ("seed", -1, f"-1 {OUT}"),
    ("newton_schulz_steps", 0, f"0 {OUT}"),
    ("newton_schulz_steps", 99, f"99 {OUT}"),
    ("crop_sizes", [1], f"(1,) {OUT}"),
    ("nproc", 0, f"0 {OUT}"),
    ("nproc", -4, f"-4 {OUT}"),
    ("emit_interval_s", -1.0, f"-1.0 {OUT}"),
    ("max_steps_per_epoch", 0, f"0 {OUT}"),
]

HOSTILE_TEXT = {  # text a user, a script or a file name may carry: none of it may reach the terminal as it is
    "clipboard write": "\x1b]52;c;cHduZWQ=\x1b\\",
    "window title": "\x1b]0;pwned\x07",
    "clear screen": "\x1b[2J\x1b[H",
    "C1 CSI": "\x9b31m",
    "bidi override": "evil\u202etxt.exe",
    "markup close": "[/]",
    "markup action": "[@click=app.quit]x[/]",
    "newline": "one\ntwo",
    "DEL and BEL": "a\x7fb\x07",
    "invalid UTF-8": os.fsdecode(b"bad\xff\xfe"),  # argv bytes that are not UTF-8, as Python hands them over
}
HOSTILE_SITES = {  # where a hostile value enters (X), and what the one line says
    "dataset": (("train", "X"), "unknown dataset"),
    "--model": (T("--model", "X"), "unknown model"),
    "--optimizer": (T("--optimizer", "X"), "unknown optimizer"),
    "--amp": (T("--amp", "X"), "unknown amp mode"),
    "--device": (T("--device", "X"), "is not a device"),
    "--recipe": (T("--recipe", "X"), "unknown recipe"),
    "--resume": (R("{w}/X"), "does not exist"),
    "--data-dir": (T("--data-dir", "{w}/X"), "does not exist"),
    "watch": (("watch", "X", "--runs-dir", "{w}/runs"), "is not a run folder"),
    "stop": (("stop", "X", "--runs-dir", "{w}/runs"), "is not a run folder"),
    "runs --card": (("runs", "X", "--card", "{out}/card.svg", "--runs-dir", "{w}/runs"), "is not a run folder"),
    "serve app": (("serve", "X"), "invalid choice"),
    "monitor --backend": (("monitor", "--backend", "X"), "unknown backend"),
}
SPECIAL_FILES = {  # monitor --replay of what is not a recording: refused at once, in one line
    "/dev/zero": ("/dev/zero", "not a regular file"),
    "/dev/null": ("/dev/null", "not a regular file"),
    "/dev/urandom": ("/dev/urandom", "not a regular file"),
    "a FIFO": ("{w}/fifo.jsonl", "not a regular file"),
    "a symlink to /dev/zero": ("{w}/zero-link.jsonl", "not a regular file"),
    "a folder": ("{w}", "{w}"),
    "a missing file": ("{w}/missing.jsonl", "No such file"),
    "an empty file": ("{w}/a-file", "a-file:1"),
    "blank lines only": ("{w}/replay/blank.jsonl", "no samples"),
    "a torn line only": ("{w}/replay/torn.jsonl", "no samples"),
    "a JSON array": ("{w}/replay/array.jsonl", "replay/array.jsonl:1"),
    "a JSON string": ("{w}/replay/string.jsonl", "replay/string.jsonl:1"),
    "wrong types": ("{w}/replay/types.jsonl", "replay/types.jsonl:1"),
    "NUL bytes": ("{w}/replay/nul.jsonl", "replay/nul.jsonl:1"),
    "invalid UTF-8": ("{w}/replay/utf8.jsonl", "replay/utf8.jsonl:1"),
    "a line over the cap": ("{w}/replay/long.jsonl", "longer than"),
    "a torn line mid-file": ("{w}/replay/torn-middle.jsonl", "replay/torn-middle.jsonl:1"),
    "escapes in its name": ("{w}/no-\x1b]52;c;eA==\x07.jsonl", "No such file"),
}

NAN, INF = float("nan"), float("inf")
OUT_OF_RANGE_BY_KIND: dict[str, list[object]] = {  # each kind of numeric setting: values a hand-edited or planted
    # settings file may hold, out of the kind's range (ranges.RANGES) or of the wrong type
    "positive_int": [-1, 0, 2**63, 1.5, "4", None, True],
    "positive_float": [-1e-3, 0.0, NAN, INF, -INF, "0.1", [0.1]],
    "non_negative_float": [-1e-9, NAN, INF, "0"],
    "fraction": [-0.01, 1.0, NAN, INF, "0.1"],
    "share": [0.0, -0.5, 1.01, NAN, INF, "1"],
    "newton_schulz_steps": [0, 11, -1, 2**63, 2.0, "5"],
    "non_negative_int": [-1, 2**63, 2**64, 1.0, "3"],
    "crop_sizes": [[8], [4097], [-24], [24.0], ["24"], [24] * 4097, 24],
    "node_rank": [-1, 2**63, 1.5, "0"],
    "endpoint": ["node0", "h:0", "h:65536", "a b:1", "h:1\x1b[2J", 29500],
    "job_id": ["../up", ".hidden", "x" * 65, "a/b", 7],
}


def _settings_family() -> list[tuple[str, object]]:
    """(field, value) for every numeric TrainConfig setting and every bad value of its kind, but those
    ``BAD_SETTINGS`` already has (and ``epochs`` 0, which a resume reads as "the run's own")."""
    from rocmtui.config import train_options

    known = {(field, repr(value)) for field, value, _ in BAD_SETTINGS}
    family = [
        (field, value)
        for field, option in train_options().items()
        for value in OUT_OF_RANGE_BY_KIND.get(option.parse, [])
        if (field, repr(value)) not in known and not (field == "epochs" and value == 0)
    ]
    for field, values in (("emit_interval_s", [NAN, INF, "1"]), ("max_steps_per_epoch", [-1, 2**63, "1"])):
        family += [(field, value) for value in values]
    return family


SETTINGS_FAMILY = _settings_family()


def _wrong_type(field: str, value: object) -> bool:
    """Whether ``value`` is refused by type (msgspec) rather than by range: not the field's JSON kind (from the
    field's annotation: ``int``, ``int | None``, ``str | None``, a float, the crop sizes)."""
    import typing

    from rocmtui.config import TrainConfig

    if field == "crop_sizes":
        return not isinstance(value, list) or not all(type(side) is int for side in value)
    hint = typing.get_type_hints(TrainConfig)[field]
    kinds = set(typing.get_args(hint) or (hint,)) - {type(None)}
    if kinds == {int}:
        return type(value) is not int
    if kinds == {str}:
        return type(value) is not str
    return type(value) not in (int, float)


def _checkpoint_says(field: str, value: object) -> str:
    """What resuming a checkpoint whose settings hold ``field: value`` says."""
    if _wrong_type(field, value):
        return "unreadable config"
    shown = tuple(value) if isinstance(value, list) else value
    return f"{field} {shown!r}"[:60]  # a long value is cut in the line; its start names it


def _config_json_says(field: str, value: object) -> str:
    """What watching a run whose config.json holds ``field: value`` (as Python's json writes it) says."""
    if isinstance(value, float) and not math.isfinite(value):
        return "config.json cannot be read"  # NaN and Infinity are not JSON
    if _wrong_type(field, value):
        return f"$.{field}"
    return _checkpoint_says(field, value)


FILTERS = {  # a --filter expression that cannot be read, and what the one line says
    "an open quote": ('"baseline', "quote left open"),
    "an open quote after a key": ('name="mlp', "quote left open"),
    "an open quote among terms": ('state=finished note="long run lr>1', "quote left open"),
    "three quotes": ('"a" "b', "quote left open"),
    "an escaped closing quote": ('"a\\"', "quote left open"),
    "an operator without a key": ("=finished", "has no key before '='"),
    "a comparison without a key": (">0.5", "has no key before '>'"),
    "a regex without a key": ("~mlp", "has no key before '~'"),
    "not equal without a key": ("!=x", "has no key before '!='"),
    "a key without a value": ("state=", "has no value after '='"),
    "a comparison without a value": ("lr>=", "has no value after '>='"),
    "a not-match without a value": ("name!~", "has no value after '!~'"),
    "an empty quoted value": ('name=""', "has no value after '='"),
    "a bang operator": ("lr!5", "is not KEY=VALUE"),
    "a caret operator": ("lr^2", "is not KEY=VALUE"),
    "a percent operator": ("lr%2", "is not KEY=VALUE"),
    "a pipe": ("state|finished", "is not KEY=VALUE"),
    "parentheses": ("(lr>1)", "is not KEY=VALUE"),
    "a negation": ("!state=finished", "is not KEY=VALUE"),
    "a dash before a key": ("-lr>1", "expected one argument"),  # argparse reads it as a flag
    "a key that starts with a digit": ("1lr>1", "is not KEY=VALUE"),
    "a key with a space in quotes": ('"lr x">1', "has no key before '>'"),
    "an escape in a key": ("l\x1b[2Jr=1", "is not KEY=VALUE"),
    "a bell in a key": ("lr\x07=1", "is not KEY=VALUE"),
    "a bidi override in a key": ("lr\u202e=1", "is not KEY=VALUE"),
    "a C1 control in a key": ("lr\x9b=1", "is not KEY=VALUE"),
    "invalid UTF-8 in a key": (os.fsdecode(b"lr\xff=1"), "is not KEY=VALUE"),
    "a newline inside a term": ("lr\n>1=", "has no key before '>'"),
    "1,001 characters": ("a" * 1001, "a filter of 1,001 characters"),
    "a megabyte": ("lr>1 " * 200_000, "a filter of 1,000,000 characters"),
    "1,001 spaces": (" " * 1001, "a filter of 1,001 characters"),
    "1,001 quotes": ('"' * 1001, "a filter of 1,001 characters"),
    "a huge number": ("lr>" + "9" * 1000, "a filter of 1,003 characters"),
}

HOST_FORMS = {  # a --hosts (or --prometheus) address that is not one, and what the one line says
    "no port": ("gpu1", "the port is missing"),
    "an empty port": ("gpu1:", "the port is missing"),
    "port 0": ("gpu1:0", "from 1 to 65535"),
    "port 65536": ("gpu1:65536", "from 1 to 65535"),
    "port 99999999999999999999": ("gpu1:99999999999999999999", "from 1 to 65535"),
    "a negative port": ("gpu1:-1", "from 1 to 65535"),
    "a port in words": ("gpu1:http", "from 1 to 65535"),
    "a port with a sign": ("gpu1:+80", "from 1 to 65535"),
    "two ports": ("gpu1:80:90", "from 1 to 65535"),
    "no host": (":9400", "not a host name or address"),
    "a colon alone": (":", "the port is missing"),
    "an underscore in the host": ("gpu_1:9400", "not a host name or address"),
    "a space in the host": ("gpu 1:9400", "not a host name or address"),
    "a host that starts with a dash": ("-gpu1:9400", "expected one argument"),  # argparse reads it as a flag
    "an empty label": ("gpu1..lan:9400", "not a host name or address"),
    "a label of 64 characters": ("a" * 64 + ".lan:9400", "not a host name or address"),
    "a host beyond ASCII": ("gpü1:9400", "not a host name or address"),
    "an escape in the host": ("gpu\x1b]0;pwned\x07:9400", "not a host name or address"),
    "an IPv6 address unbracketed": ("::1", "from 1 to 65535"),
    "a bracketed address that is not one": ("[gpu1]:9400", "not a host name or address"),
    "a bracketed IPv6 address without a port": ("[::1]", "the port is missing"),
    "a bracketed IPv6 address with port 0": ("[::1]:0", "from 1 to 65535"),
    "an unclosed bracket": ("[::1:9400", "not"),
    "a user": ("admin@127.0.0.1:9400", "no user, password or #fragment"),
    "a user and password": ("admin:secret@127.0.0.1:9400", "no user, password or #fragment"),
    "a URL with a password": ("http://admin:secret@127.0.0.1:9400/metrics", "no user, password or #fragment"),
    "a URL with a user": ("https://admin@127.0.0.1:9400", "no user, password or #fragment"),
    "a fragment": ("127.0.0.1:9400#top", "no user, password or #fragment"),
    "an ftp URL": ("ftp://127.0.0.1:21", "an http:// or https:// URL"),
    "a file URL": ("file:///etc/passwd", "an http:// or https:// URL"),
    "a gopher URL": ("gopher://127.0.0.1:70", "an http:// or https:// URL"),
    "a websocket URL": ("ws://127.0.0.1:9400", "an http:// or https:// URL"),
    "a javascript URL": ("javascript://alert(1)", "an http:// or https:// URL"),
    "a closing bracket alone": ("gpu1]:9400", "not a host name or address"),
    "a URL without a host": ("http://:9400/metrics", "not a host name or address"),
    "a URL with a bad port": ("http://127.0.0.1:70000/", "from 1 to 65535"),
    "a URL of nothing": ("https://", "not a host name or address"),
}


def _hostfile_worlds(w: Path) -> None:
    """Host files and token files that are not, for ``monitor --hostfile`` and ``--token-file``."""
    from rocmtui.gpu.cluster.fetch import MAX_TOKEN_BYTES
    from rocmtui.gpu.cluster.targets import MAX_HOSTFILE_BYTES, MAX_TARGETS

    d = w / "cluster"
    d.mkdir()
    os.mkfifo(d / "fifo")
    (d / "zero-link").symlink_to("/dev/zero")
    (d / "fifo-link").symlink_to(d / "fifo")
    (d / "dangling-link").symlink_to(d / "nowhere")
    (d / "folder").mkdir()
    (d / "empty").write_text("")
    (d / "comments").write_text("# the lab's GPUs\n   # none yet\n\n")
    (d / "large").write_text("127.0.0.1:1\n" * (MAX_HOSTFILE_BYTES // 12 + 1))
    (d / "too-many").write_text("".join(f"gpu{i}:9400\n" for i in range(MAX_TARGETS + 1)))
    (d / "no-port").write_text("127.0.0.1:1\ngpu2\n")
    (d / "port-zero").write_text("gpu1:9400\ngpu2:0 # spare\n")
    (d / "ftp-line").write_text("ftp://127.0.0.1:21\n")
    (d / "credentials").write_text("http://root:hunter2@127.0.0.1:1/metrics\n")
    (d / "binary").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    (d / "escape-line").write_text("gpu\x1b]52;c;cHduZWQ=\x07:9400\n")
    (d / "comma-line").write_text("gpu1:9400,gpu2:9400\n")
    (d / "hosts").write_text("127.0.0.1:1\n")  # good: the token's problem comes first
    (d / "token-empty").write_text("")
    (d / "token-blank").write_text("  \n\t\n")
    (d / "token-two-lines").write_text("abc\ndef\n")
    (d / "token-space").write_text("Bearer abc\n")
    (d / "token-escape").write_text("abc\x1b[2Jdef\n")
    (d / "token-nul").write_bytes(b"abc\x00def\n")
    (d / "token-utf8").write_text("tökén\n")
    (d / "token-large").write_text("a" * (MAX_TOKEN_BYTES + 1))


HOSTFILES = {  # --hostfile X: what the one line says
    "a FIFO": ("{w}/cluster/fifo", "--hostfile {w}/cluster/fifo is not a regular file (a FIFO)"),
    "a link to /dev/zero": (
        "{w}/cluster/zero-link",
        "--hostfile {w}/cluster/zero-link is not a regular file (a character device)",
    ),
    "a link to a FIFO": ("{w}/cluster/fifo-link", "--hostfile {w}/cluster/fifo-link is not a regular file (a FIFO)"),
    "a dangling link": ("{w}/cluster/dangling-link", "no such file"),
    "/dev/zero": ("/dev/zero", "--hostfile /dev/zero is not a regular file (a character device)"),
    "/dev/null": ("/dev/null", "--hostfile /dev/null is not a regular file (a character device)"),
    "/dev/stdin": ("/dev/stdin", "--hostfile /dev/stdin is not a regular file"),
    "a folder": ("{w}/cluster/folder", "--hostfile {w}/cluster/folder is not a regular file (a folder)"),
    "a missing file": ("{w}/cluster/missing", "no such file"),
    "a file under a file": ("{w}/a-file/hosts", "Not a directory"),
    "an empty file": ("{w}/cluster/empty", "no host to watch"),
    "comments only": ("{w}/cluster/comments", "no host to watch"),
    "a file over the cap": ("{w}/cluster/large", "--hostfile {w}/cluster/large is larger than 1,048,576 bytes"),
    "more hosts than the cap": ("{w}/cluster/too-many", "more than 4096 hosts"),
    "a line without a port": ("{w}/cluster/no-port", "'gpu2': not HOST:PORT: the port is missing"),
    "a line with port 0": ("{w}/cluster/port-zero", "'gpu2:0': the port is not a number"),
    "an ftp line": ("{w}/cluster/ftp-line", "an http:// or https:// URL"),
    "a line with credentials": ("{w}/cluster/credentials", "no user, password or #fragment"),
    "a binary file": ("{w}/cluster/binary", "--hostfile: "),
    "an escape in a line": ("{w}/cluster/escape-line", "not a host name or address"),
    "two hosts on a line": ("{w}/cluster/comma-line", "from 1 to 65535"),
}
TOKEN_FILES = {  # --token-file X: what the one line says
    "missing": ("{w}/cluster/no-token", "no such file"),
    "a FIFO": ("{w}/cluster/fifo", "not a regular file (a FIFO)"),
    "a link to /dev/zero": ("{w}/cluster/zero-link", "not a regular file (a character device)"),
    "/dev/urandom": ("/dev/urandom", "not a regular file (a character device)"),
    "a folder": ("{w}/cluster/folder", "not a regular file (a folder)"),
    "a dangling link": ("{w}/cluster/dangling-link", "no such file"),
    "empty": ("{w}/cluster/token-empty", "not one line of printable ASCII"),
    "blank": ("{w}/cluster/token-blank", "not one line of printable ASCII"),
    "two lines": ("{w}/cluster/token-two-lines", "not one line of printable ASCII"),
    "a space inside": ("{w}/cluster/token-space", "not one line of printable ASCII"),
    "an escape inside": ("{w}/cluster/token-escape", "not one line of printable ASCII"),
    "a NUL inside": ("{w}/cluster/token-nul", "not one line of printable ASCII"),
    "beyond ASCII": ("{w}/cluster/token-utf8", "not one line of printable ASCII"),
    "over the cap": ("{w}/cluster/token-large", "is larger than 16,384 bytes"),
}
GRACES = {  # stop --grace X: what the one line says
    "1e9": "out of range", "1e308": "out of range", "-inf": "out of range", "+inf": "out of range",
    "Infinity": "out of range", "NaN": "out of range", "-1e-9": "out of range", "": "not a number",
    "10s": "not a number", "1,5": "not a number", "0x10": "not a number", "ten": "not a number",
    "1e": "not a number", "\x1b[2J": "not a number",
}  # fmt: skip


ANCHORS = {  # bench --anchor X (a file under {w}/anchors): what the one line says
    "missing": ("missing.json", "cannot open it (No such file"),
    "a FIFO": ("fifo.json", "not a regular file (a FIFO)"),
    "a link": ("link.json", "is a symbolic link"),
    "a link to /dev/zero": ("zero.json", "is a symbolic link"),
    "a folder": ("folder.json", "not a regular file (a folder)"),
    "too large": ("large.json", "is larger than 1,048,576 bytes"),
    "empty": ("empty.json", "--anchor {w}/anchors/empty.json"),
    "not JSON": ("text.json", "--anchor {w}/anchors/text.json"),
    "a JSON array": ("array.json", "--anchor"),
    "without times": ("no-times.json", "times_s"),
    "with no time": ("zero-times.json", "times_s needs 1 to 100,000 times"),
    "with a negative time": ("negative.json", "must be a positive number of seconds"),
    "with an infinite time": ("infinite.json", "--anchor"),
    "with text for a time": ("text-time.json", "times_s"),
    "with an accuracy above 1": ("accuracy.json", "every accuracy must be a fraction from 0 to 1"),
    "with a negative accuracy": ("negative-accuracy.json", "every accuracy must be a fraction from 0 to 1"),
    "with a name too long": ("long-name.json", "at most 200 characters"),
    "with a note too long": ("long-note.json", "at most 200 characters"),
    "with too many times": ("many.json", "times_s needs 1 to 100,000 times"),
}


def _anchors(w: Path) -> None:
    from rocmtui.bench.anchor_file import MAX_BYTES

    d = w / "anchors"
    d.mkdir()
    good = {"name": "llm.c", "times_s": [3.1, 3.2], "accuracies": [0.94, 0.95]}

    def put(file: str, **changes: object) -> None:
        (d / file).write_text(json.dumps({**good, **changes}))

    put("good.json")
    os.mkfifo(d / "fifo.json")
    (d / "link.json").symlink_to(d / "good.json")
    (d / "zero.json").symlink_to("/dev/zero")
    (d / "folder.json").mkdir()
    (d / "large.json").write_text(" " * (MAX_BYTES + 1))
    (d / "empty.json").write_text("")
    (d / "text.json").write_text("times: 3.1, 3.2\n")
    (d / "array.json").write_text("[3.1, 3.2]\n")
    (d / "no-times.json").write_text(json.dumps({"name": "x"}))
    put("zero-times.json", times_s=[])
    put("negative.json", times_s=[3.1, -1.0])
    (d / "infinite.json").write_text(json.dumps(good).replace("3.2", "1e999"))
    put("text-time.json", times_s=["3.1"])
    put("accuracy.json", accuracies=[94.1])
    put("negative-accuracy.json", accuracies=[-0.5])
    put("long-name.json", name="x" * 201)
    put("long-note.json", note="\x1b[2J" * 100)
    put("many.json", times_s=[1.0] * 100_001)


SINKS = {  # runs RUN --csv/--card X: a place that cannot take the file, and what the one line says
    "a FIFO": ("{w}/sinks/fifo", "not a regular file (a FIFO)"),
    "a character device": ("{w}/sinks/null", "not a regular file (a character device)"),
    "a link to a FIFO": ("{w}/sinks/fifo-link", "not a regular file (a FIFO)"),
    "a folder": ("{w}/sinks", "cannot write"),
    "an empty path": ("", "cannot write"),
    "the current folder": (".", "cannot write"),
    "the root folder": ("/", "cannot write"),
    "a path under a file": ("{w}/a-file/out", "cannot write"),
    "a missing folder": ("{w}/no/such/out", "cannot write"),
    "too long a name": ("{w}/" + "x" * 300, "File name too long"),
}


def _sinks(w: Path) -> None:
    import stat

    d = w / "sinks"
    d.mkdir()
    os.mkfifo(d / "fifo")
    (d / "fifo-link").symlink_to(d / "fifo")
    if os.geteuid() == 0:
        os.mknod(d / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null
    else:
        (d / "null").symlink_to("/dev/null")


TB_DAMAGE = {  # a TensorBoard log folder (under {w}/tb-damaged) whose event file is damaged or not one
    "a record's bytes flipped": "flipped",
    "text named as an event file": "text",
    "zeros named as an event file": "zeros",
    "a good file and a damaged one": "second",
    "a good run and a damaged one": "runs",
}


def _tensorboard_logs(w: Path) -> None:
    """A TensorBoard log folder of two runs (``tb``), and logs damaged each way of ``TB_DAMAGE``."""
    from torch.utils.tensorboard import SummaryWriter

    for name in ("a", "b"):
        with SummaryWriter(str(w / "tb" / name)) as writer:
            for step in range(20):
                writer.add_scalar("loss", 1.0 / (step + 1), step)
    good = next((w / "tb" / "a").iterdir()).read_bytes()
    name = "events.out.tfevents.1.host"
    damaged = {
        "flipped": good[:100] + bytes(b ^ 0xFF for b in good[100:120]) + good[120:],
        "text": b"loss 0.5 at step 1\n" * 20,
        "zeros": bytes(4096),
    }
    for folder, data in damaged.items():
        (w / "tb-damaged" / folder).mkdir(parents=True)
        (w / "tb-damaged" / folder / name).write_bytes(data)
    (w / "tb-damaged" / "second").mkdir()
    (w / "tb-damaged" / "second" / name).write_bytes(good)
    (w / "tb-damaged" / "second" / f"{name}.2").write_bytes(damaged["flipped"])
    for run, data in (("a", good), ("b", damaged["text"])):
        (w / "tb-damaged" / "runs" / run).mkdir(parents=True)
        (w / "tb-damaged" / "runs" / run / name).write_bytes(data)


def _settings_family_files(w: Path, run: Path) -> None:
    """``SETTINGS_FAMILY``: a checkpoint whose settings hold each, and a run folder whose config.json does."""
    good = checkpoints.load_checkpoint(run / checkpoints.LAST)
    body = {k: v for k, v in good.items() if k != "format"}
    config = json.loads((run / "config.json").read_text())
    for i, (field, value) in enumerate(SETTINGS_FAMILY):
        checkpoints.save_checkpoint(w / "ckpt" / f"family-{i}.pt", {**body, "config": {**good["config"], field: value}})
        folder = w / "family-config" / str(i)
        folder.mkdir(parents=True)
        shutil.copy(run / "metrics.jsonl", folder / "metrics.jsonl")
        (folder / "config.json").write_text(json.dumps({**config, field: value}))


PLANTED_NOTES = (  # a run's notes.json, each planted to say tags=planted where it cannot be trusted or read
    "a FIFO", "a link to good notes", "a link to /dev/zero", "a folder", "over a megabyte", "tags as text",
    "tags of numbers", "a note of a list", "not JSON", "a JSON array", "invalid UTF-8", "NUL bytes",
)  # fmt: skip


def _planted_notes(w: Path, run: Path) -> None:
    """For each of ``PLANTED_NOTES``, a runs folder of one copy of ``run`` (its small files) with that notes.json;
    and ``notes/sound``, whose notes.json is sound (the family's control)."""
    from rocmtui.run.format import NOTES

    good = json.dumps({"tags": ["planted"], "note": "kept"})
    (w / "notes").mkdir()
    (w / "notes" / "good-notes.json").write_text(good)
    for kind in (*PLANTED_NOTES, "sound"):
        folder = w / "notes" / kind / run.name
        folder.mkdir(parents=True)
        for path in run.iterdir():
            if path.is_file() and path.suffix != ".pt":
                shutil.copy(path, folder / path.name)
        notes = folder / NOTES
        planted: dict[str, object] = {
            "sound": good,
            "over a megabyte": json.dumps({"tags": ["planted"], "note": "x" * (1 << 20)}),
            "tags as text": json.dumps({"tags": "planted"}),
            "tags of numbers": json.dumps({"tags": [1, 2], "note": "planted"}),
            "a note of a list": json.dumps({"tags": ["planted"], "note": ["x"]}),
            "not JSON": "tags: planted\n",
            "a JSON array": json.dumps(["planted"]),
            "invalid UTF-8": b'{"tags": ["planted", "\xff\xfe"]}',
            "NUL bytes": b'{"tags": ["planted"]}\x00',
        }
        if kind == "a FIFO":
            os.mkfifo(notes)
        elif kind == "a link to good notes":
            notes.symlink_to(w / "notes" / "good-notes.json")
        elif kind == "a link to /dev/zero":
            notes.symlink_to("/dev/zero")
        elif kind == "a folder":
            notes.mkdir()
        elif isinstance(planted[kind], bytes):
            notes.write_bytes(planted[kind])  # type: ignore[arg-type]
        else:
            notes.write_text(str(planted[kind]))


NOT_RUNS = {  # a RUN argument that names no run folder
    "a file": "{w}/a-file",
    "a FIFO": "{w}/fifo.jsonl",
    "a link to /dev/zero": "{w}/zero-link.jsonl",
    "/dev/null": "/dev/null",
    "a data folder": "{w}/data-nokey",
    "a missing folder": "{w}/no-such-run",
}
RUN_READERS = {  # the commands that take one RUN, and where their refusal is drawn
    "runs --csv": (("runs", "X", "--csv", "-"), False),
    "runs --card": (("runs", "X", "--card", "{out}/card.svg"), False),
    "stop": (("stop", "X", "--no-wait"), False),
    "watch": (("watch", "X"), True),
}

CASES: dict[str, Case] = {
    # the command line itself
    "unknown command": Case(("fly",), "invalid choice: 'fly'"),
    "unknown top flag": Case(("--frobnicate",), "required: COMMAND"),
    "train without dataset": Case(("train",), "required: DATASET"),
    "train unknown dataset": Case(("train", "imagenet"), "unknown dataset 'imagenet'"),
    "train empty dataset": Case(("train", ""), "unknown dataset ''"),
    "train two datasets": Case(T("mnist"), "unrecognized arguments: mnist"),
    "train unknown flag": Case(T("--frobnicate"), "unrecognized arguments: --frobnicate"),
    "train flag without value": Case(T("--lr"), "expected one argument"),
    "train switch with value": Case(T("--augment=yes"), "ignored explicit argument 'yes'"),
    **{
        f"train {flag} {value!r}": Case(T(f"{flag}={value}"), says)
        for flag, bad in NUMBERS.items()
        for value, says in bad
    },
    "train bad model": Case(T("--model", "gpt5"), "unknown model 'gpt5'; choose from simplecnn, fastnet, resnet18"),
    "train empty model": Case(T("--model="), "unknown model ''"),
    "train bad optimizer": Case(T("--optimizer", "lion"), "unknown optimizer 'lion'"),
    "train bad schedule": Case(T("--schedule", "cosine"), "unknown schedule 'cosine'"),
    "train bad amp": Case(T("--amp", "fp8"), "unknown amp mode 'fp8'"),
    "train bad device": Case(T("--device", "tpu"), "'tpu' is not a device"),
    "train device cuda:": Case(T("--device", "cuda:"), "'cuda:' is not a device"),
    "train device cuda:-1": Case(T("--device", "cuda:-1"), "'cuda:-1' is not a device"),
    "train device without GPU": Case(T("--device", "cuda"), "torch sees no GPU"),
    "train device cuda:7 without GPU": Case(T("--device", "cuda:7"), "torch sees no GPU"),
    "train cuda graph on cpu": Case(T("--cuda-graph"), "--cuda-graph needs a GPU"),
    "train bad backend": Case(T("--backend", "cuda"), "unknown backend 'cuda'"),
    "train bad interval": Case(T("--interval", "0"), "give 0.1 to 60 seconds"),
    "train bad history": Case(T("--history", "0"), "positive integer"),
    # data folders
    "data dir missing": Case(T("--data-dir", "/no/such/folder"), "data folder '/no/such/folder' does not exist"),
    "data dir is a file": Case(T("--data-dir", "{w}/a-file"), "a-file' is not a folder"),
    "data dir empty": Case(T("--data-dir", "{w}/data-empty"), "has no cifar10 data in torchvision's layout"),
    "data dir garbage npz": Case(T("--data-dir", "{w}/data-garbage"), "unreadable or truncated"),
    "data dir truncated npz": Case(T("--data-dir", "{w}/data-truncated"), "unreadable or truncated"),
    "data dir npz missing key": Case(T("--data-dir", "{w}/data-nokey"), "key 'test_labels' is missing"),
    "data dir npz float images": Case(T("--data-dir", "{w}/data-float"), "must be uint8 pixels"),
    "data dir npz wrong shape": Case(T("--data-dir", "{w}/data-shape"), "images have shape"),
    "data dir npz label count": Case(T("--data-dir", "{w}/data-count"), "images but labels of shape"),
    "data dir npz empty split": Case(T("--data-dir", "{w}/data-zero"), "the dataset is empty"),
    "data dir npz pickled object": Case(T("--data-dir", "{w}/data-pickle"), "unreadable or truncated"),
    "data dir mnist layout missing": Case(T("--data-dir", "{w}/data-empty", dataset="mnist"), "missing MNIST/raw"),
    "mnist without data": Case(T(dataset="mnist"), "no mnist data found"),
    "fashion-mnist without data": Case(T(dataset="fashion-mnist"), "no fashionmnist data found"),
    # run folders
    "runs dir is a file": Case(T("--runs-dir", "{w}/a-file"), "is a file, not a folder"),
    "runs dir under a file": Case(T("--runs-dir", "{w}/a-file/runs"), "is a file, not a folder"),
    "runs dir empty": Case(T("--runs-dir", ""), "an empty path"),
    "run card under a file": Case(("runs", "{run}", "--card", "{w}/a-file/card.svg"), "cannot write"),
    "run card into a folder": Case(("runs", "{run}", "--card", "{w}"), "cannot write"),
    # checkpoints that are not ours, broken, or crafted
    "resume missing": Case(R("/no/such/run"), "'/no/such/run' does not exist"),
    "resume empty string": Case(R(""), "an empty path"),
    "data dir empty string": Case(T("--data-dir", ""), "an empty path"),
    "resume empty folder": Case(R("{w}"), "has no checkpoint-last.pt"),
    "resume folder whose last is a folder": Case(R("{ckpt}/last-is-dir"), "has no checkpoint-last.pt"),
    "resume /dev/null": Case(R("/dev/null"), "is not a file"),
    "resume empty file": Case(R("{ckpt}/empty.pt"), "not a torch zip archive"),
    "resume text file": Case(R("{ckpt}/text.pt"), "not a torch zip archive"),
    "resume json file": Case(R("{ckpt}/config.json"), "not a torch zip archive"),
    "resume truncated checkpoint": Case(R("{ckpt}/truncated.pt"), "corrupt or not a checkpoint"),
    "resume checkpoint with a flipped tail": Case(R("{ckpt}/flipped.pt"), "corrupt or not a checkpoint"),
    "resume zip that is not torch": Case(R("{ckpt}/plain.zip"), "corrupt or not a checkpoint"),
    "resume npz": Case(R("{ckpt}/data.npz"), "corrupt or not a checkpoint"),
    "resume raw pickle payload": Case(R("{ckpt}/payload-raw.pt"), "not a torch zip archive"),
    "resume torch payload": Case(R("{ckpt}/payload-zip.pt"), "holds objects, not just data"),
    "resume torch payload in config": Case(R("{ckpt}/payload-config.pt"), "holds objects, not just data"),
    "resume torch payload as a run folder": Case(R("{ckpt}/payload-run"), "holds objects, not just data"),
    "resume pickled module": Case(R("{ckpt}/module.pt"), "holds objects, not just data"),
    "resume a tensor": Case(R("{ckpt}/tensor.pt"), "is not a rocmtui checkpoint"),
    "resume a list": Case(R("{ckpt}/list.pt"), "is not a rocmtui checkpoint"),
    "resume a foreign state dict": Case(R("{ckpt}/foreign.pt"), "is not a rocmtui checkpoint"),
    "resume another format": Case(R("{ckpt}/format99.pt"), "is not a rocmtui checkpoint"),
    "resume without model": Case(R("{ckpt}/no-model.pt"), "it has no 'model'"),
    "resume config not a dict": Case(R("{ckpt}/config-str.pt"), "unreadable config"),
    "resume config with unknown model": Case(R("{ckpt}/config-model.pt"), "unreadable config"),
    "resume config with a wrong type": Case(R("{ckpt}/config-type.pt"), "unreadable config"),
    "resume unreadable epoch": Case(R("{ckpt}/epoch-str.pt"), "unreadable epoch count"),
    "resume a zip bomb": Case(R("{ckpt}/bomb.pt"), "bytes would inflate to"),
    **{
        f"resume settings with {field} {value!r}": Case(
            R(f"{{ckpt}}/settings-{i}.pt", "--epochs", "3"), f"{field} {says}"
        )
        for i, (field, value, says) in enumerate(BAD_SETTINGS)
    },
    "resume settings with nproc beyond the cores": Case(
        R("{ckpt}/nproc.pt", "--epochs", "3"), "more than this machine"
    ),
    **{
        f"watch a run whose config.json has {field} {value!r}": Case(
            ("watch", f"{{w}}/bad-config/{i}"), f"{field} {says}", tty=True
        )
        for i, (field, value, says) in enumerate(BAD_SETTINGS)
        if not (isinstance(value, float) and not math.isfinite(value))  # JSON has no NaN or infinity: refused by type
    },
    "watch a run whose config.json has lr null": Case(("watch", "{w}/bad-config/2"), "$.lr", tty=True),
    # resumes that conflict with the saved run
    "resume finished run": Case(R("{run}"), "already trained 2 of 2 epochs"),
    "resume fewer epochs": Case(R("{run}", "--epochs", "1"), "already trained 2 of 1 epochs"),
    "resume other dataset": Case(R("{run}", dataset="mnist"), "mnist"),
    "resume best of finished run": Case(R("{run}/checkpoint-best.pt", "--epochs", "1"), "already trained"),
    **{
        f"resume with {' '.join(flags)}": Case(R("{run}", "--epochs", "3", *flags), f"{' '.join(flags)}")
        for flags in (
            ("--model", "simplecnn"),  # simplecnn is the default: given explicitly, it still counts
            ("--model", "resnet18"),
            ("--batch-size", "64"),
            ("--lr", "0.001"),
            ("--lr", "0.5"),
            ("--optimizer", "adam"),
            ("--optimizer", "adamw"),
            ("--schedule", "constant"),
            ("--schedule", "onecycle"),
            ("--weight-decay", "0.0"),
            ("--label-smoothing", "0.0"),
            ("--augment",),
            ("--amp", "off"),
            ("--amp", "fp16"),
            ("--channels-last",),
            ("--compile",),
            ("--seed", "0"),
            ("--seed", "7"),
        )
    },
    "resume with two conflicts": Case(R("{run}", "--epochs", "3", "--lr", "0.5", "--seed", "7"), "--lr 0.5 (the run's"),
    # found only once train() has loaded the data (headless: still one line on stderr, exit 2)
    "resume on other data": Case(R("{run}", "--epochs", "3", "--data-dir", "{w}/data-relabelled"), "other data"),
    "data dir npz labels out of range": Case(T("--data-dir", "{w}/data-labels"), "labels outside 0..9"),
    "data dir torchvision files empty": Case(T("--data-dir", "{w}/data-tv-empty"), "cannot read cifar10"),
    # hostile text in every place it may enter: shown plain, in one line
    **{
        f"{site} with {what}": Case(tuple(a.replace("X", text) for a in argv), says)
        for site, (argv, says) in HOSTILE_SITES.items()
        for what, text in HOSTILE_TEXT.items()
    },
    # bounds
    "train --nproc far above the cores": Case(T("--nproc", "100000"), "CPU cores; give at most"),
    "train --nproc 0": Case(T("--nproc", "0"), "positive integer"),
    "serve max sessions 0": Case(("serve", "monitor", "--max-sessions", "0"), "positive integer"),
    "serve max sessions text": Case(("serve", "--max-sessions", "many", "demo"), "not a whole number"),
    "serve port 0": Case(("serve", "--port", "0", "monitor"), "needs a fixed --port"),
    "serve port 0 after the app": Case(("serve", "monitor", "--port", "0"), "needs a fixed --port"),
    "serve train": Case(("serve", "train", "cifar"), "serve watch"),
    "export port text": Case(("export", "--port", "x"), "not a number"),
    "stop grace negative": Case(("stop", "{run}", "--grace", "-1"), "out of range"),
    "stop grace nan": Case(("stop", "{run}", "--grace", "nan"), "out of range"),
    "stop grace text": Case(("stop", "{run}", "--grace", "soon"), "not a number"),
    "stop grace inf": Case(("stop", "{run}", "--grace", "inf"), "out of range"),
    "monitor readonly with value": Case(("monitor", "--readonly=yes"), "ignored explicit argument 'yes'"),
    **{
        f"monitor replay of {what}": Case(("monitor", "--replay", path), says, tty=True)
        for what, (path, says) in SPECIAL_FILES.items()
    },
    # monitor
    "monitor interval too short": Case(("monitor", "--interval", "0.01"), "give 0.1 to 60 seconds"),
    "monitor interval too long": Case(("monitor", "--interval", "61"), "give 0.1 to 60 seconds"),
    "monitor interval nan": Case(("monitor", "--interval", "nan"), "give 0.1 to 60 seconds"),
    "monitor interval text": Case(("monitor", "--interval", "soon"), "not a number"),
    "monitor bad backend": Case(("monitor", "--backend", "cuda"), "unknown backend 'cuda'"),
    "monitor once and json": Case(("monitor", "--once", "--json"), "not allowed with argument"),
    "monitor count without json": Case(("monitor", "--count", "3"), "--count goes with --json"),
    "monitor count 0": Case(("monitor", "--json", "--count", "0"), "positive integer"),
    "monitor count text": Case(("monitor", "--json", "--count", "x"), "not a whole number"),
    "monitor history 0": Case(("monitor", "--history", "0"), "positive integer"),
    "monitor unknown flag": Case(("monitor", "--frobnicate"), "unrecognized arguments"),
    "monitor positional": Case(("monitor", "gpu0"), "unrecognized arguments: gpu0"),
    # bench
    "bench epochs 0": Case(("bench", "--epochs", "0"), "positive integer"),
    "bench epochs text": Case(("bench", "--epochs", "many"), "not a whole number"),
    "bench bad model": Case(("bench", "--model", "gpt5"), "unknown model 'gpt5'"),
    "bench bad device": Case(("bench", "--device", "tpu"), "'tpu' is not a device"),
    "bench data dir missing": Case(("bench", "--data-dir", "/no/such/folder"), "does not exist"),
    "bench data dir empty": Case(("bench", "--data-dir", "{w}/data-empty", "--device", "cpu"), "has no cifar10 data"),
    "bench unknown flag": Case(("bench", "--frobnicate"), "unrecognized arguments"),
    "bench device without GPU": Case(("bench", "--device", "cuda"), "torch sees no GPU"),
    # runs folders other users can write
    **{
        f"{command} into a runs folder {who}": Case((*argv, "{w}/" + folder, *tail), says)
        for command, argv, tail in (
            ("train", ("train", "cifar", "--headless", "--device", "cpu", "--runs-dir"), ()),
            ("run", ("run", "--runs-dir"), ("--", "true")),
        )
        for who, folder, says in (
            ("its group can write", "loose-runs", "loose-runs is writable by its group without the sticky bit"),
            ("everyone can write", "open-runs", "open-runs is writable by its group and others without the sticky"),
            ("others can write", "other-runs", "other-runs is writable by others without the sticky bit"),
        )
    },
    "train --shared-runs-dir with a value": Case(T("--shared-runs-dir=yes"), "ignored explicit argument 'yes'"),
    # saved settings out of range, each numeric setting x each kind of bad value: resumed, and watched
    **{
        f"resume settings with {field} {value!r}"[:120]: Case(
            R(f"{{ckpt}}/family-{i}.pt", "--epochs", "3"), _checkpoint_says(field, value)
        )
        for i, (field, value) in enumerate(SETTINGS_FAMILY)
    },
    **{
        f"watch a run whose config.json has {field} {value!r}"[:120]: Case(
            ("watch", f"{{w}}/family-config/{i}"), _config_json_says(field, value), tty=True
        )
        for i, (field, value) in enumerate(SETTINGS_FAMILY)
    },
    # runs --filter
    **{
        f"runs --filter with {what}": Case(("runs", "--plain", "--filter", text, "--runs-dir", "{w}/runs"), says)
        for what, (text, says) in FILTERS.items()
    },
    "runs --json --filter with a single quote": Case(
        ("runs", "--json", "--filter", "'x", "--runs-dir", "{w}/runs"), "is not KEY=VALUE"
    ),
    "runs --filter without a value": Case(("runs", "--filter"), "expected one argument"),
    # the cluster view: addresses, host files, token files
    **{
        f"monitor --hosts with {what}": Case(("monitor", "--once", "--hosts", text), says)
        for what, (text, says) in HOST_FORMS.items()
    },
    **{
        f"monitor --hosts with a good host then {what}": Case(
            ("monitor", "--once", "--hosts", f"127.0.0.1:1,{text}"), says
        )
        for what, (text, says) in list(HOST_FORMS.items())[::4]
    },
    **{
        f"monitor --prometheus with {what}": Case(("monitor", "--once", "--prometheus", text), says)
        for what, (text, says) in list(HOST_FORMS.items())[::2]
    },
    **{
        f"monitor --hostfile of {what}": Case(("monitor", "--once", "--hostfile", path), says)
        for what, (path, says) in HOSTFILES.items()
    },
    **{
        f"monitor --token-file {what}": Case(
            ("monitor", "--once", "--hostfile", "{w}/cluster/hosts", "--token-file", path), f"--token-file {path}"
        )
        for what, (path, _) in TOKEN_FILES.items()
    },
    **{
        f"monitor --token-file {what} says why": Case(
            ("monitor", "--json", "--count", "1", "--prometheus", "127.0.0.1:1", "--token-file", path), says
        )
        for what, (path, says) in TOKEN_FILES.items()
    },
    "monitor --hosts of commas only": Case(("monitor", "--once", "--hosts", ",,,"), "no host to watch"),
    "monitor --hosts empty": Case(("monitor", "--once", "--hosts", ""), "no host to watch"),
    "monitor --hosts of 4097 hosts": Case(
        ("monitor", "--once", "--hosts", ",".join(f"gpu{i}:9400" for i in range(4097))), "more than 4096 hosts"
    ),
    "monitor --hosts and --prometheus": Case(
        ("monitor", "--once", "--hosts", "127.0.0.1:1", "--prometheus", "127.0.0.1:2"), "give it alone"
    ),
    "monitor --hostfile and --prometheus": Case(
        ("monitor", "--once", "--hostfile", "{w}/cluster/hosts", "--prometheus", "127.0.0.1:2"), "give it alone"
    ),
    "monitor --token-file alone": Case(("monitor", "--once", "--token-file", "{w}/cluster/fifo"), "goes with --hosts"),
    **{
        f"monitor --hosts with {flag}": Case(("monitor", "--hosts", "127.0.0.1:1", flag, *value), f"{flag} goes with")
        for flag, value in (
            ("--record", ("{out}/r.jsonl",)),
            ("--replay", ("{w}/a-file",)),
            ("--speed", ("2",)),
            ("--readonly", ()),
        )
    },
    "monitor --hosts without a value": Case(("monitor", "--hosts"), "expected one argument"),
    # stop --grace
    **{f"stop grace {text!r}": Case(("stop", "{run}", f"--grace={text}"), says) for text, says in GRACES.items()},
    "stop grace without a value": Case(("stop", "{run}", "--grace"), "expected one argument"),
    # bench --anchor: several files, one of them bad, refused before anything trains
    **{
        f"bench anchor {what} {where}": Case(("bench", "--device", "cpu", *anchors), says)
        for what, (name, says) in ANCHORS.items()
        for where, anchors in (
            ("after a good one", ("--anchor", "{w}/anchors/good.json", "--anchor", f"{{w}}/anchors/{name}")),
            ("before a good one", ("--anchor", f"{{w}}/anchors/{name}", "--anchor", "{w}/anchors/good.json")),
        )
    },
    # runs RUN --csv / --card to places that cannot take a file
    **{
        f"runs --{kind} to {what}": Case(("runs", "{run}", f"--{kind}", path), says)
        for kind in ("csv", "card")
        for what, (path, says) in SINKS.items()
        if not (kind == "card" and path == "")  # an empty --card is the default name
    },
    "runs --csv and --card": Case(("runs", "{run}", "--csv", "-", "--card", "x.svg"), "give one of them"),
    "runs a run without --csv or --card": Case(("runs", "{run}"), "a run is named with --csv, --card or --ranks only"),
    "runs --card of a TensorBoard log": Case(
        ("runs", "{w}/tb", "--card", "{out}/c.svg"), "a TensorBoard log has --csv"
    ),
    "runs --csv of a TensorBoard log of two runs": Case(("runs", "{w}/tb", "--csv", "-"), "holds 2 TensorBoard runs"),
    # --shared-runs-dir where it means nothing, or given a value
    **{
        f"{' '.join(argv[:1])} --shared-runs-dir": Case((*argv, "--shared-runs-dir"), "unrecognized arguments")
        for argv in (("watch", "{run}"), ("runs",), ("stop", "{run}"), ("monitor",), ("bench",), ("doctor",))
    },
    "run --shared-runs-dir with a value": Case(("run", "--shared-runs-dir=yes", "--", "true"), "ignored explicit"),
    "train --shared-runs-dir into a file": Case(T("--shared-runs-dir", "--runs-dir", "{w}/a-file"), "is a file"),
    **(
        {
            f"{command} into a runs folder of another user": Case(
                (*argv, "{w}/strangers-runs", *tail), "belongs to another user"
            )
            for command, argv, tail in (
                ("train", ("train", "cifar", "--headless", "--device", "cpu", "--runs-dir"), ()),
                ("run", ("run", "--runs-dir"), ("--", "true")),
            )
        }
        if os.geteuid() == 0
        else {}
    ),
    # notes.json planted where it cannot be read: the run is listed as if it had no notes, nothing waits
    **{
        f"runs --{form} of a run whose notes.json is {kind}": Case(
            ("runs", f"--{form}", "--filter", "tags=planted", "--runs-dir", f"{{w}}/notes/{kind}"),
            "",
            code=0,
            out=says,
        )
        for kind in PLANTED_NOTES
        for form, says in (("plain", "no runs under"), ("json", "[]"))
    },
    # runs LOGDIR of a TensorBoard log that is damaged or not a log: one line, never a short listing or CSV
    **{
        f"runs {' '.join(flags)} of a TensorBoard log with {what}": Case(
            ("runs", f"{{w}}/tb-damaged/{folder}", *flags), "not a readable TensorBoard event file"
        )
        for what, folder in TB_DAMAGE.items()
        for flags in (("--plain",), ("--json",), ("--csv", "-"), ("--csv", "{out}/log.csv"))
        if not (folder == "runs" and flags[0] == "--csv")  # --csv of a log of two runs: "give one of them"
    },
    # a RUN that is not a run folder, for each command that reads one; no run to pick under a runs folder that is not
    **{
        f"{command} of {what}": Case(
            tuple(a.replace("X", path) for a in argv), f"{path.split('/')[-1]}' is not a run folder", tty=tty
        )
        for command, (argv, tty) in RUN_READERS.items()
        for what, path in NOT_RUNS.items()
    },
    **{
        f"{' '.join(argv)} with no run under {what}": Case((*argv, "--runs-dir", path), f"run of yours under {path}")
        for argv in (("runs", "--csv", "-"), ("runs", "--card", "{out}/card.svg"), ("stop",))
        for what, path in (("a file", "{w}/a-file"), ("a FIFO", "{w}/fifo.jsonl"), ("a missing folder", "{w}/none"))
    },
    # doctor
    "doctor unknown flag": Case(("doctor", "--frobnicate"), "unrecognized arguments"),
    "doctor positional": Case(("doctor", "now"), "unrecognized arguments: now"),
    "doctor json with value": Case(("doctor", "--json=yes"), "ignored explicit argument 'yes'"),
}


def _payload(marker: Path) -> object:
    class Payload:
        def __reduce__(self) -> tuple[object, tuple[str, str]]:
            return builtins.open, (str(marker), "w")

    return Payload()


def _npz(path: Path, **arrays: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]


def _data_dirs(w: Path) -> None:
    with np.load(SAMPLE_PATH) as sample:
        good = {k: np.asarray(sample[k]) for k in ("train_images", "train_labels", "test_images", "test_labels")}
    (w / "data-empty").mkdir()
    (w / "data-garbage").mkdir()
    (w / "data-garbage" / "cifar10.npz").write_bytes(b"not a zip")
    (w / "data-truncated").mkdir()
    (w / "data-truncated" / "cifar10.npz").write_bytes(SAMPLE_PATH.read_bytes()[:5000])
    _npz(w / "data-nokey" / "cifar10.npz", **{k: v for k, v in good.items() if k != "test_labels"})
    _npz(w / "data-float" / "cifar10.npz", **{**good, "train_images": good["train_images"].astype(np.float32)})
    _npz(w / "data-shape" / "cifar10.npz", **{**good, "train_images": good["train_images"][:, :16]})
    _npz(w / "data-count" / "cifar10.npz", **{**good, "train_labels": good["train_labels"][:-1]})
    empty_test = {"test_images": good["test_images"][:0], "test_labels": good["test_labels"][:0]}
    _npz(w / "data-zero" / "cifar10.npz", **{**good, **empty_test})
    objects = np.array([_payload(w / MARKER)] * len(good["test_labels"]), dtype=object)
    _npz(w / "data-pickle" / "cifar10.npz", **{**good, "test_labels": objects})
    _npz(w / "data-labels" / "cifar10.npz", **{**good, "train_labels": good["train_labels"] + 50})
    _npz(w / "data-relabelled" / "cifar10.npz", **{**good, "train_labels": (good["train_labels"] + 1) % 10})
    for name in ("data_batch_1", "test_batch", "batches.meta"):
        target = w / "data-tv-empty" / "cifar-10-batches-py" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")


def _replays(w: Path) -> None:
    """Recordings that are not, for ``monitor --replay``."""
    from rocmtui.gpu.replay import MAX_LINE_BYTES

    d = w / "replay"
    d.mkdir()
    (d / "blank.jsonl").write_text("\n\n  \n")
    (d / "torn.jsonl").write_text('{"schema": 1, "timestamp": 1.0, "back')
    (d / "array.jsonl").write_text("[1, 2, 3]\n")
    (d / "string.jsonl").write_text('"a sample"\n')
    (d / "types.jsonl").write_text('{"schema": 1, "timestamp": "soon", "backend": 5}\n')
    (d / "nul.jsonl").write_bytes(b"\x00" * 64 + b"\n")
    (d / "utf8.jsonl").write_bytes(b'{"backend": "\xff\xfe"}\n')
    (d / "long.jsonl").write_bytes(b"x" * (MAX_LINE_BYTES + 10) + b"\n")
    (d / "torn-middle.jsonl").write_text('{"schema": 1, "times\n{"schema": 1}\n')
    os.mkfifo(w / "fifo.jsonl")
    (w / "zero-link.jsonl").symlink_to("/dev/zero")


def _checkpoints(c: Path, run: Path) -> None:
    c.mkdir()
    good = checkpoints.load_checkpoint(run / checkpoints.LAST)
    body = {k: v for k, v in good.items() if k != "format"}

    def save(name: str, state: object) -> None:
        torch.save(state, c / name)

    (c / "last-is-dir" / checkpoints.LAST).mkdir(parents=True)
    (c / "empty.pt").write_bytes(b"")
    (c / "text.pt").write_text("hello\n")
    (c / "config.json").write_text(json.dumps(good["config"]))
    raw = (run / checkpoints.LAST).read_bytes()
    (c / "truncated.pt").write_bytes(raw[: len(raw) // 2])
    (c / "flipped.pt").write_bytes(raw[:-200] + bytes(200))
    with zipfile.ZipFile(c / "plain.zip", "w") as archive:
        archive.writestr("hello.txt", "hello")
    _npz(c / "data.npz", x=np.arange(3))
    (c / "payload-raw.pt").write_bytes(pickle.dumps({"format": 1, "config": {}, "x": _payload(c / MARKER)}))
    save("payload-zip.pt", {"format": 1, "config": {}, "x": _payload(c / MARKER)})
    save("payload-config.pt", {**good, "config": _payload(c / MARKER)})
    (c / "payload-run").mkdir()
    save(f"payload-run/{checkpoints.LAST}", {**good, "epoch": _payload(c / MARKER)})
    save("module.pt", torch.nn.Linear(2, 2))
    save("tensor.pt", torch.zeros(3))
    save("list.pt", [1, 2, 3])
    save("foreign.pt", {"state_dict": {}})
    save("format99.pt", {**good, "format": 99})
    checkpoints.save_checkpoint(c / "no-model.pt", {k: v for k, v in body.items() if k != "model"})
    checkpoints.save_checkpoint(c / "config-str.pt", {**body, "config": "cifar10"})
    checkpoints.save_checkpoint(c / "config-model.pt", {**body, "config": {**good["config"], "model": "gpt5"}})
    checkpoints.save_checkpoint(c / "config-type.pt", {**body, "config": {**good["config"], "epochs": "many"}})
    checkpoints.save_checkpoint(c / "epoch-str.pt", {**body, "epoch": "two"})
    for i, (field, value, _) in enumerate(BAD_SETTINGS):
        checkpoints.save_checkpoint(c / f"settings-{i}.pt", {**body, "config": {**good["config"], field: value}})
    checkpoints.save_checkpoint(c / "nproc.pt", {**body, "config": {**good["config"], "nproc": 100_000}})
    _bomb(run / checkpoints.LAST, c / "bomb.pt", 1 << 28)


def _bomb(good: Path, out: Path, inflated: int) -> None:
    """``good``'s entries deflated, its tensors' storage replaced by ``inflated`` zero bytes: a file of about a
    megabyte whose zip directory says it inflates to ``inflated``."""
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as dst:
        bombed = False
        for info in src.infolist():
            with dst.open(info.filename, "w", force_zip64=True) as entry:
                if bombed or "/data/" not in info.filename:
                    entry.write(src.read(info.filename))
                    continue
                bombed, chunk = True, bytes(1 << 24)
                for _ in range(inflated // len(chunk)):
                    entry.write(chunk)


def _bad_configs(w: Path, run: Path) -> None:
    """Run folders whose config.json holds a value out of its range (``BAD_SETTINGS``)."""
    good = json.loads((run / "config.json").read_text())
    for i, (field, value, _) in enumerate(BAD_SETTINGS):
        folder = w / "bad-config" / str(i)
        folder.mkdir(parents=True)
        shutil.copy(run / "metrics.jsonl", folder / "metrics.jsonl")
        text = json.dumps({**good, field: value}).replace("NaN", "null").replace("Infinity", "1e999")
        (folder / "config.json").write_text(text)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Prepared inputs, shared by every case: none of them may change them."""
    w = tmp_path_factory.mktemp("hostile")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(w / "cache"))  # the bundled sample, never the user's cache
        # bf16 autocast on a CPU without bf16 instructions is emulated (about 25 times slower than fp32 for
        # fastnet): a few images keep this run to seconds
        with np.load(SAMPLE_PATH) as sample:
            _npz(
                w / "data-few" / "cifar10.npz",
                **{k: np.asarray(sample[k])[:2] for k in NPZ_KEYS},
            )
        config = TrainConfig(  # every kept setting but the switches away from its default
            model="fastnet",
            data_dir=w / "data-few",
            batch_size=2,
            lr=0.01,
            optimizer="sgd",
            schedule="linear",
            weight_decay=1e-3,
            label_smoothing=0.1,
            amp="bf16",
            given=("amp",),  # typed: kept on a CPU without bf16 instructions (a recipe's is dropped there)
            seed=3,
            device="cpu",
            epochs=2,
            max_steps_per_epoch=1,
            emit_interval_s=0.0,
            runs_dir=w / "runs",
        )
        summary = train(config, lambda _e: None, RunControl())
        assert isinstance(summary.event, RunFinished) and summary.run_dir is not None
        (w / "a-file").write_text("a file\n")
        for folder, mode in (("loose-runs", 0o775), ("open-runs", 0o777), ("other-runs", 0o757)):
            (w / folder).mkdir()
            (w / folder).chmod(mode)
        _data_dirs(w)
        _replays(w)
        _checkpoints(w / "ckpt", summary.run_dir)
        _bad_configs(w, summary.run_dir)
        _settings_family_files(w, summary.run_dir)
        _hostfile_worlds(w)
        _anchors(w)
        _sinks(w)
        _tensorboard_logs(w)
        _planted_notes(w, summary.run_dir)
        if os.geteuid() == 0:
            (w / "strangers-runs").mkdir()
            os.chown(w / "strangers-runs", 65534, 65534)  # nobody's
        yield w


def _expand(argv: tuple[str, ...], w: Path, out: Path) -> list[str]:
    run = next((w / "runs").iterdir())
    return [a.format(w=w, run=run, ckpt=w / "ckpt", out=out) for a in argv]


def _snapshot(w: Path) -> dict[str, bytes]:
    run = next((w / "runs").iterdir())
    kept = {p.name: p.read_bytes() for p in run.iterdir() if p.suffix in (".pt", ".json", ".jsonl")}
    sinks = w / "sinks"  # a FIFO, a device: never replaced by a file
    kinds = {f"sinks/{p.name}": str(p.lstat().st_mode).encode() for p in sinks.iterdir()} if sinks.is_dir() else {}
    return kept | kinds


UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""What must never reach a terminal: control characters (newline and tab aside), C1, DEL, bidi controls,
lone surrogates."""


def _check(case: Case, w: Path, out_dir: Path, capsys: pytest.CaptureFixture[str], mp: pytest.MonkeyPatch) -> None:
    mp.setenv("XDG_CACHE_HOME", str(w / "cache"))
    mp.setenv("XDG_CONFIG_HOME", str(w / "config"))  # the monitor's settings: never the user's
    if case.tty:
        mp.setattr(sys.stdout, "isatty", lambda: True)
    before = _snapshot(w)
    try:
        code = main(_expand(case.argv, w, out_dir))
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert not UNSAFE.search(out + err), (out, err)
    assert code == case.code, (out, err)
    if case.out is not None:
        assert err == "", err
        assert case.out.format(w=w) in out, out
    else:
        assert len(err.strip().splitlines()) == 1, (out, err)
        assert case.expect.format(w=w) in err, err
    assert not list(w.rglob(f"{MARKER}*")), "code ran from a file"
    assert _snapshot(w) == before, "the existing run was changed"
    assert not out_dir.exists() or not any(out_dir.iterdir()), "a run folder was made for a refused run"


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input(
    name: str, world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(CASES[name], world, tmp_path / "out", capsys, monkeypatch)


@pytest.mark.parametrize("form", ["plain", "json"])
def test_sound_notes_are_read(form: str, world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The planted-notes cases' control: sound notes saying tags=planted do select the run, so "no runs" there
    means the planted file was not read."""
    code = main(["runs", f"--{form}", "--filter", "tags=planted", "--runs-dir", str(world / "notes" / "sound")])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert next((world / "runs").iterdir()).name in out


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 450


PROCESS_CASES = [
    "resume torch payload",
    "resume raw pickle payload",
    "resume torch payload as a run folder",
    "resume with --model simplecnn",
    "train --lr 'nan'",
    "monitor once and json",
    "dataset with clipboard write",
    "watch with invalid UTF-8",
    "train --nproc far above the cores",
    "serve max sessions 0",
    "resume a zip bomb",
    "resume settings with batch_size 0",
    "runs --csv to a FIFO",
    "monitor --hosts with an unclosed bracket",
    "monitor --hostfile of a FIFO",
    "monitor --token-file a FIFO says why",
    "runs --filter with an open quote",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", PROCESS_CASES)
def test_hostile_input_in_a_real_process(name: str, world: Path, tmp_path: Path) -> None:
    case = CASES[name]
    env = {**os.environ, "XDG_CACHE_HOME": str(world / "cache")}
    before = _snapshot(world)
    result = subprocess.run(
        [sys.executable, "-m", "rocmtui", *_expand(case.argv, world, tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == case.code, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert case.expect.format(w=world) in result.stderr
    assert not list(world.rglob(f"{MARKER}*"))
    assert _snapshot(world) == before
