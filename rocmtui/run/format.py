"""The run folder's format: the name of every file, the typed record each holds, and one way to encode and
decode them.

Every reader and writer of a run folder asks this module (docs/run-format.md is checked against it by a
test). Records are msgspec Structs (events in ``rocmtui.events``, the rest here), encoded as compact JSON,
validated by type when read. One policy for numbers that are not finite: written as ``null``; a reader
takes ``null`` in a field that holds only numbers as NaN (version 2 streams wrote ``NaN`` literals, which
still load). Version rules: the stream's header names its version; a reader loads every version up to
``VERSION`` and refuses a newer one in one line.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import re
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

import msgspec

from rocmtui.base.errors import UsageError
from rocmtui.base.files import atomic_write, read_small
from rocmtui.base.float_bytes import ITEM as PACKED_ITEM
from rocmtui.codec import CodecError, convert, decode_json, decoder, encode_json
from rocmtui.config import TrainConfig
from rocmtui.events import FailureKind, MetricsLogged, RunFailed, RunFinished, TrainEvent, event_class

T = TypeVar("T")

EVENTS = "metrics.jsonl"
"""The event stream: a header line, then one event a line, each with a sequence number."""
TORN = "metrics.torn"
"""Bytes of a torn last line (a crash or a full disk mid-write), set aside when the stream is reopened."""
STATUS = "status.json"
"""pid, host, state and heartbeat of the writer; progress for ``rocmtui runs``."""
CONTROL = "control"
"""Commands from viewers (pause, resume, save, stop): append-only, mode 0600, present only while live."""
LOCK = "run.lock"
"""flock()ed by the one process that writes the folder; names that process."""
GPU = "gpu.jsonl"
GPU_PREVIOUS = "gpu.1.jsonl"
"""GPU samples taken during the run (``rocmtui monitor --json`` lines); the current file rotates into the
previous one at a size bound."""
CONFIG = "config.json"
"""The run's TrainConfig (``rocmtui train``)."""
SUMMARY = "summary.json"
"""The final event: RunFinished or RunFailed."""
STDERR = "trainer.log"
"""What a detached trainer wrote to stderr (normally nothing)."""
OUTPUT = "output.log"
"""What a script started by ``rocmtui run`` printed, stdout and stderr."""
RANKS = "ranks"
"""The folder of per-rank streams (``ranks/rank-N.jsonl``) of a run trained by several processes."""
SCREENS = "screens"
"""Pictures of a viewer's screen (``screens/screen-DATE-TIME.svg``), saved with the ``S`` key."""
NOTES = "notes.json"
"""The user's tags and note about the run (the runs table), never written by the run's own writer."""

FORMAT = "rocmtui-events"
VERSION = 5
"""1: no header, no ``seq``/``t``; 2: non-finite numbers as ``NaN`` literals; 3: as ``null``; 4: a tracked
script's every logged value (``MetricsLogged.logged``), where 3 kept one mean per name a window; 5: a long
window packed (``MetricsLogged.step_run`` and ``packed``: float64 bytes, base64 in JSON)."""

MAX_LINE_BYTES = 1 << 20
"""A stream line longer than this is not read (skipped and counted): no record of ours comes near it."""


class FormatError(UsageError):
    """A run folder this version cannot read: a newer stream, or a file that is not what it should be."""


class StreamHeader(msgspec.Struct, frozen=True):
    """The first line of the stream (sequence number 0)."""

    format: str
    version: int


class _Envelope(msgspec.Struct, frozen=True):
    """What every stream line may carry besides its event; the event's own keys are ignored here."""

    seq: int | None = None
    t: float | None = None
    format: str | None = None
    version: int | None = None


State = Literal["starting", "running", "paused", "stopping", "finished", "stopped", "failed", "lost", "stalled"]
LIVE_STATES: tuple[State, ...] = ("starting", "running", "paused", "stopping", "stalled")
"""``stalled`` and ``lost`` are never written: a reader sees them (``status.effective``)."""


class RunStatus(msgspec.Struct, frozen=True):
    """``status.json``: who writes the run, in what state, and the progress ``rocmtui runs`` lists."""

    pid: int
    host: str
    state: State
    started_at: float
    heartbeat: float
    name: str = ""
    """What runs: ``cifar10 simplecnn``, or a script's run name."""
    device_name: str = ""
    epoch: int = 0
    """Epochs completed."""
    epochs: int = 0
    best_acc: float | None = None
    elapsed_s: float = 0.0
    message: str = ""
    """The failure, when failed."""
    step: int = 0
    """The newest step reported (a tracked script's progress)."""
    metric: str = ""
    """A tracked script's headline series (its first loss, else its first series) ..."""
    metric_value: float | None = None
    """... and its newest value."""

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES


MAX_TAGS = 32
TAG_LIMIT = 40
NOTE_LIMIT = 2000
"""Tags a run keeps at most, characters of a tag and of the note."""


class RunNotes(msgspec.Struct, frozen=True):
    """``notes.json``: the user's own words about a run, kept beside what its writer wrote."""

    tags: tuple[str, ...] = ()
    note: str = ""


def clean_notes(tags: list[str] | tuple[str, ...], note: str) -> RunNotes:
    """Tags as words (spaces and commas split them; each at most ``TAG_LIMIT`` characters, no repeats, at most
    ``MAX_TAGS``) and the note cut to ``NOTE_LIMIT`` characters."""
    words = [word[:TAG_LIMIT] for tag in tags for word in re.split(r"[\s,]+", tag) if word]
    return RunNotes(tuple(dict.fromkeys(words))[:MAX_TAGS], note.strip()[:NOTE_LIMIT])


def read_notes(run_dir: Path) -> RunNotes:
    """The run's notes; none when there is no file, or one that cannot be read (a link, a FIFO, a bad record)."""
    try:
        notes = read_record(run_dir / NOTES, RunNotes)
    except (OSError, CodecError, UsageError):
        return RunNotes()
    return clean_notes(notes.tags, notes.note)


def write_notes(run_dir: Path, notes: RunNotes) -> None:
    """Replace the run's notes whole (a temporary file renamed over it): a live run's writer, which never opens
    this file, is not disturbed; a reader sees the old notes or the new, never half."""
    write_record(run_dir / NOTES, clean_notes(notes.tags, notes.note))


Command = Literal["pause", "resume", "save", "stop"]
COMMANDS: tuple[Command, ...] = get_args(Command)


class ControlLine(msgspec.Struct, frozen=True):
    """One line of the control channel."""

    command: Command
    t: float = 0.0


Summary = RunFinished | RunFailed


class _RankEvent(msgspec.Struct, frozen=True, tag=True, tag_field="event"):
    rank: int


class RankStarted(_RankEvent, frozen=True):
    """One rank is set up: which process, host and device it trains on."""

    world_size: int
    pid: int
    host: str
    device: str
    """Torch device string (``cuda:1``, ``cpu``)."""
    device_name: str = ""
    uuid: str | None = None
    """The GPU's UUID as the SMI tools print it; how a viewer matches a rank to a GPU sample, never by index."""
    pci_bus_id: str | None = None
    local_rank: int = 0
    node_rank: int = 0
    """The node's place in the job (torchrun's ``GROUP_RANK``, Slurm's ``SLURM_NODEID``), given by the rendezvous."""
    nodes: int = 1
    restart: int = 0
    """How often the launcher had restarted the ranks (``TORCHELASTIC_RESTART_COUNT``)."""
    job_id: str = ""
    """The rendezvous id (``TORCHELASTIC_RUN_ID``) or Slurm job id: what joins the folders of one job's nodes."""
    wall: float = 0.0
    """time.time() on the rank's host when it was written."""


class RankProgress(_RankEvent, frozen=True):
    """Where one rank is: written at the same moments as the run's StepsCompleted."""

    epoch: int
    step: int
    images_per_s: float
    """0 when the rank does not count images (a tracked script): then ``steps_per_s`` says its speed."""
    elapsed_s: float
    steps_per_s: float = 0.0
    step_s: float = 0.0
    """Mean wall seconds a step since the rank's last report (0: not known)."""
    busy_s: float = 0.0
    """Of ``step_s``, the seconds the rank spent on its own work, not waiting for the other ranks in a collective
    (0: not measured). A straggler is busy longest; the ranks it holds up wait for it."""
    wall: float = 0.0

    @property
    def speed(self) -> float:
        return self.images_per_s or self.steps_per_s


class RankBeat(_RankEvent, frozen=True):
    """The rank is alive (written when it has reported nothing else for a while: waiting in a collective,
    testing, saving); a rank whose lines stop has stopped answering."""

    step: int
    wall: float


class RankFailed(_RankEvent, frozen=True):
    """A rank ended on an error: its one-line message (before rank 0 holds the folder, the only account)."""

    message: str
    kind: FailureKind = "error"
    wall: float = 0.0


class RankEnded(_RankEvent, frozen=True):
    """A rank's training ended without error, with how it ended as every rank knows it (the test figures are the
    ranks' together): what a node whose folder holds no event stream (rank 0's is on another node) reports."""

    finished: RunFinished
    wall: float = 0.0


RankEvent = RankStarted | RankProgress | RankBeat | RankFailed | RankEnded


def encode_line(record: Any) -> bytes:
    """One record as a line: compact JSON (non-finite numbers as ``null``) and a newline."""
    return encode_json(record) + b"\n"


def encode_file(record: Any) -> bytes:
    """A small file's content: indented JSON, for people who open it."""
    return encode_json(record, indent=1) + b"\n"


def encode_header() -> bytes:
    return b'{"seq":0,"format":"%s","version":%d}\n' % (FORMAT.encode(), VERSION)


def encode_event_line(seq: int, t: float, event: TrainEvent) -> bytes:
    """``{"seq":N,"t":T,"event":"Name",...}``: the event's own encoding with the two keys put in front."""
    body = encode_json(event)
    return b'{"seq":%d,"t":%s,' % (seq, repr(round(t, 3)).encode()) + body[1:] + b"\n"


_ENVELOPE = decoder(_Envelope)
_OUR_PREFIX = re.compile(rb'\{"seq":(0|[1-9][0-9]{0,17}),"t":(-?[0-9]{1,20}(?:\.[0-9]{1,20})?),"event":"')
"""The front of an event line as ``encode_event_line`` writes it: its ``seq`` and ``t`` read from there."""
_EVENT = decoder(TrainEvent)


class EventLine(msgspec.Struct, frozen=True):
    """A decoded stream line: its sequence number and time (None in version 1) and what it holds."""

    seq: int | None
    t: float | None
    event: TrainEvent | None
    """None for the header."""
    header: StreamHeader | None = None


def decode_event_line(raw: bytes) -> EventLine:
    """One stream line; CodecError when it is not a record this version reads."""
    if len(raw) > MAX_LINE_BYTES:
        raise CodecError(f"not read: a line of {len(raw)} bytes")
    ours = _OUR_PREFIX.match(raw)
    if ours is not None:  # as encode_event_line writes it: one parse of the line, not two
        with contextlib.suppress(CodecError):  # else read as any line is, below (a version 2 NaN literal)
            return EventLine(int(ours[1]), float(ours[2]), decode_event(raw))
    try:
        envelope = _ENVELOPE.decode(raw)
    except msgspec.DecodeError:  # a version 2 line with a NaN literal; anything else (a ValidationError, a
        return _legacy_line(raw)  # DecodeError too, of a seq or t of the wrong type) is refused there
    if envelope.format is not None:
        return EventLine(envelope.seq, envelope.t, None, StreamHeader(envelope.format, envelope.version or 0))
    return EventLine(envelope.seq, envelope.t, decode_event(raw))


def decode_event(raw: bytes) -> TrainEvent:
    """One event from its JSON (a stream line or a line up the pipe from a tracked script)."""
    try:
        event: TrainEvent = _EVENT.decode(raw)
    except msgspec.ValidationError:
        try:  # JSON cut short can fail validation first (an unknown tag seen before the end)
            data = msgspec.json.decode(raw)
        except msgspec.DecodeError as err:
            raise CodecError(f"not JSON: {err}") from None
        event = _with_nan(data)
    except msgspec.DecodeError as err:
        raise CodecError(f"not JSON: {err}") from None
    if isinstance(event, MetricsLogged):
        _check_points(event)
    return event


def _check_points(event: MetricsLogged) -> None:
    """Each name's values are as many as the steps they were logged at, packed ones whole float64s: counted,
    not unpacked (the series unpack them once, from ``points``)."""
    counts = {name: len(values) for name, values in event.logged.items()}
    for name, raw in event.packed.items():
        if len(raw) % PACKED_ITEM:
            raise CodecError(f"bad MetricsLogged: {len(raw)} bytes of {name!r} are not a whole number of float64s")
        counts[name] = len(raw) // PACKED_ITEM
    for name, count in counts.items():
        steps = event.logged_at[name] if name in event.logged_at else event.call_steps()
        try:
            logged = len(steps)
        except OverflowError as err:  # a step run past any length
            raise CodecError(f"bad MetricsLogged: {err}") from None
        if logged != count:
            raise CodecError(f"bad MetricsLogged: {count} values of {name!r} at {logged} steps")


def _legacy_line(raw: bytes) -> EventLine:
    """A line msgspec cannot parse: valid only as JSON with ``NaN``/``Infinity`` literals (version 2)."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise CodecError("not JSON") from None
    if not isinstance(data, dict):
        raise CodecError(f"bad line: a JSON {type(data).__name__}, not an object")
    seq, t = data.pop("seq", None), data.pop("t", None)
    if not (seq is None or type(seq) is int) or not (t is None or isinstance(t, int | float)):
        raise CodecError("bad line: seq or t of the wrong type")
    return EventLine(seq, None if t is None else float(t), _with_nan(data))


def _with_nan(data: Any) -> TrainEvent:
    """An event whose number-only fields hold ``null`` for a non-finite value: NaN there, then validated."""
    if not isinstance(data, dict):
        raise CodecError(f"bad event: a JSON {type(data).__name__}, not an object")
    cls = event_class(data.get("event"))
    for name, kind in _number_fields(cls).items():
        value = data.get(name)
        if kind == "scalar" and value is None and name in data:
            data[name] = math.nan
        elif kind == "sequence" and isinstance(value, list):
            data[name] = [math.nan if v is None else v for v in value]
        elif kind == "mapping" and isinstance(value, dict):
            data[name] = {k: math.nan if v is None else v for k, v in value.items()}
        elif kind == "mapping of sequences" and isinstance(value, dict):
            data[name] = {k: [math.nan if x is None else x for x in v] if isinstance(v, list) else v
                          for k, v in value.items()}  # fmt: skip
    event: TrainEvent = convert(data, cls)
    return event


@functools.cache
def _number_fields(cls: Any) -> dict[str, str]:
    """The fields of ``cls`` that hold only floats: scalar, sequence or mapping values (not ``float | None``)."""
    out: dict[str, str] = {}
    for field in msgspec.inspect.type_info(cls).fields:  # type: ignore[attr-defined]
        t = field.type
        if isinstance(t, msgspec.inspect.FloatType):
            out[field.encode_name] = "scalar"
        elif isinstance(t, msgspec.inspect.VarTupleType | msgspec.inspect.ListType) and isinstance(
            t.item_type, msgspec.inspect.FloatType
        ):
            out[field.encode_name] = "sequence"
        elif isinstance(t, msgspec.inspect.DictType) and isinstance(t.value_type, msgspec.inspect.FloatType):
            out[field.encode_name] = "mapping"
        elif (
            isinstance(t, msgspec.inspect.DictType)
            and isinstance(t.value_type, msgspec.inspect.VarTupleType)
            and isinstance(t.value_type.item_type, msgspec.inspect.FloatType)
        ):
            out[field.encode_name] = "mapping of sequences"
    return out


def check_header(header: StreamHeader, where: str) -> None:
    """Refuse, in one line, a stream this version cannot read."""
    if header.format != FORMAT:
        raise FormatError(f"{where} is not a rocmtui event stream (format {header.format!r})")
    if header.version > VERSION:
        raise FormatError(
            f"{where} was written by a newer rocmtui (event format {header.version}; this one reads up to "
            f"{VERSION}): upgrade rocmtui to watch it"
        )


def write_record(path: Path, record: Any) -> None:
    """A small file (status, config, summary), replaced whole and fsynced."""
    atomic_write(path, encode_file(record))


def read_record(path: Path, type_: type[T]) -> T:
    """A small file's record, validated by type. FileNotFoundError when there is none; CodecError (naming
    the file) when it does not fit; UnsafeFileError for a link, a FIFO or an oversized file."""
    return decode_json(read_small(path), type_, what=f"{path}")


def write_summary(run_dir: Path, event: Summary) -> None:
    write_record(run_dir / SUMMARY, event)


def read_summary(run_dir: Path) -> Summary | None:
    """The final event, or None when there is none or it cannot be read (the stream still tells)."""
    try:
        summary: Summary = decode_json(read_small(run_dir / SUMMARY), Summary, what=f"{run_dir / SUMMARY}")
    except (OSError, CodecError, UsageError):
        return None
    return summary


def write_config(run_dir: Path, config: TrainConfig) -> None:
    write_record(run_dir / CONFIG, config.to_dict())


def read_config(run_dir: Path) -> TrainConfig | None:
    """The run's settings; None when it has none (a tracked script's run), FormatError in one line when
    they cannot be read."""
    path = run_dir / CONFIG
    try:
        return TrainConfig.from_dict(decode_json(read_small(path), dict[str, Any], what=f"{path}"))
    except FileNotFoundError:
        return None
    except (OSError, CodecError, ValueError, TypeError) as err:
        raise FormatError(f"{path} cannot be read: {err}") from None


def saved_config(run_dir: Path) -> TrainConfig:
    """The run's settings from its config.json; the defaults for a run that has none (a tracked script's).
    FormatError (one line, exit 2) when the file is there but cannot be read."""
    return read_config(run_dir) or TrainConfig()
