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
        yield w


def _expand(argv: tuple[str, ...], w: Path, out: Path) -> list[str]:
    run = next((w / "runs").iterdir())
    return [a.format(w=w, run=run, ckpt=w / "ckpt", out=out) for a in argv]


def _snapshot(w: Path) -> dict[str, bytes]:
    run = next((w / "runs").iterdir())
    return {p.name: p.read_bytes() for p in run.iterdir() if p.suffix in (".pt", ".json", ".jsonl")}


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


def test_the_table_is_large_enough() -> None:
    assert len(CASES) >= 250


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
    assert case.expect in result.stderr
    assert not list(world.rglob(f"{MARKER}*"))
    assert _snapshot(world) == before
