"""Mutation testing of the modules that guard trust and data: mutmut, one group of modules at a time.

Each group (a few modules and the default tier's test files that exercise them) runs in a scratch copy of the
committed tree (``git archive HEAD``), with its own ``[tool.mutmut]`` settings written into that copy's
pyproject: mutmut mutates only the group's modules and maps mutants to tests among the group's test files only,
so a mutant of ``text.plain`` does not run every UI test. mutmut runs each mutant in a forked child with only the
tests that reach the mutated function (pytest ``-x``: a mutant is killed by its first failing test).

    python scripts/mutation.py                         # every mutant of every group
    python scripts/mutation.py --sample 5 --seed 1     # 5 mutants of each group, drawn at random
    python scripts/mutation.py --group text --budget-s 600

Survivors accepted as equivalent (or not worth a test) are listed, each with why, in ``tests/mutation_accepted.toml``,
keyed by their function and the line they change (see ``mutant_key``), not by mutmut's numbers, which move when
a function gains a mutant. ``--sample N`` draws from the mutants not accepted; ``--seed code`` derives each
group's draw from its modules and tests as committed, so the same code draws the same mutants (CI).

Writes a JSON summary (``--out``, default ``mutation-result.json``) and prints one: mutants, killed, survived,
accepted, the rest by mutmut's status, the score raw and with the accepted ones left out, and every survivor not
accepted by name with its diff. Exit code 1 when a mutant checked was neither killed nor accepted, or when the
killed share of the mutants checked is below ``--target`` (default 0.9), else 0. The result is recorded in
docs/mutation.md.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from io import BytesIO
from pathlib import Path

if sys.version_info >= (3, 11):
    from tomllib import loads as toml_loads
else:  # mutmut brings the toml package where tomllib is not
    from toml import loads as toml_loads  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[1]
ACCEPTED = ROOT / "tests" / "mutation_accepted.toml"


@dataclass(frozen=True)
class Group:
    """Modules mutated together and the default tier's tests that guard them."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


GROUPS: dict[str, Group] = {
    "codec": Group(
        ("rocmtui/run/format.py", "rocmtui/codec.py", "rocmtui/base/files.py"),
        (
            "tests/run/test_run_format.py",
            "tests/test_codec.py",
            "tests/run/test_run_hostile_folders.py",
            "tests/run/test_run_folder.py",
            "tests/run/test_run_lines.py",
            "tests/run/test_run_safe_files.py",
        ),
    ),
    "control": Group(
        ("rocmtui/run/control.py", "rocmtui/run/lock.py"),
        (
            "tests/run/test_run_folder.py",
            "tests/run/test_run_commands.py",
            "tests/run/test_run_hostile_folders.py",
            "tests/run/test_run_lock.py",
            "tests/run/test_run_control.py",
        ),
    ),
    "text": Group(("rocmtui/base/text.py",), ("tests/test_text_boundary.py",)),
    "track": Group(
        ("rocmtui/tracking/values.py",),
        (
            "tests/tracking/test_track_misuse.py",
            "tests/tracking/test_track.py",
            "tests/tracking/test_track_bounds.py",
        ),
    ),
    "serve": Group(
        ("rocmtui/serve/tab_process.py", "rocmtui/serve/guarded_server.py"),
        (
            "tests/serve/test_serve_guard.py",
            "tests/serve/test_serve_cli.py",
            "tests/serve/test_serve_bounds.py",
            "tests/serve/test_serve_sessions.py",
            "tests/serve/test_serve_tab_process.py",
        ),
    ),
    "export": Group(
        ("rocmtui/export/metrics_server.py", "rocmtui/export/run_metrics.py"),
        (
            "tests/export/test_export.py",
            "tests/export/test_export_limits.py",
            "tests/export/test_export_source.py",
            "tests/export/test_export_scrapes.py",
        ),
    ),
}

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout"}
STATUS |= {-24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", -11: "segfault", -9: "segfault"}
"""mutmut's exit codes (mutmut.stats.status_by_exit_code: SIGXCPU, past the mutant's CPU time, is a timeout); any
other code is mutmut's "suspicious"."""

BATCH = 40
"""Mutants a mutmut run: each run first runs the tests of its mutants unmutated, so fewer, longer runs cost
less; a run cut by the budget keeps the results of the mutants it finished."""

CAUGHT = frozenset({"killed", "timeout"})
"""A test failed, or the tests ran past mutmut's limit (the mutant hung them): both count as killed."""

DIFFS = """
import json, sys
from pathlib import Path
from mutmut.mutation.diff_apply import get_diff_for_mutant
diffs = {}
for meta in Path("mutants").rglob("*.py.meta"):
    source = meta.relative_to("mutants").with_suffix("")
    for name in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]:
        diffs[name] = get_diff_for_mutant(name, path=source)
json.dump(diffs, sys.stdout)
"""
"""Run in a prepared tree: every mutant's diff, by name (one process: ``mutmut show`` is one a mutant)."""

PYTEST_ARGS = ["-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider", "-m", "not slow and not snapshot"]
"""The default tier, in one process (mutmut forks a child a mutant)."""


@dataclass
class GroupResult:
    group: str
    commit: str
    mutants: int = 0
    checked: int = 0
    status: dict[str, int] = field(default_factory=dict)
    survivors: dict[str, str] = field(default_factory=dict)
    """Each mutant checked that was neither killed nor accepted: its name and its diff."""
    killed: int = 0
    """Killed or timed out (``CAUGHT``)."""
    accepted: list[str] = field(default_factory=list)
    """The keys (``mutant_key``) of the survivors listed in the accepted file."""
    accepted_killed: list[str] = field(default_factory=list)
    """Listed as accepted, yet killed: the entry may go."""
    stale: list[str] = field(default_factory=list)
    """Accepted keys of the group's modules that match none of its mutants (their line changed)."""
    unchecked: int = 0
    """Mutants left out: not drawn by ``--sample``, or past the time budget."""
    seconds: float = 0.0
    prepare_s: float = 0.0
    """Of ``seconds``, making the mutants and mutmut's two runs of the group's tests (which tests reach which
    function, then the tests unmutated)."""


def mutant_key(name: str, diff: str) -> tuple[str, str]:
    """A mutant's stable key: its function (``module.Class.function``) and the lines it changes, ``before →
    after`` with each side's lines joined by `` ⏎ ``; mutmut's name (``..x_function__mutmut_7``) numbers the
    mutants of a function, which moves when a line is added above."""
    mangled = name.rsplit("__mutmut_", 1)[0]
    for mark in (".x_", ".xǁ"):
        module, found, function = mangled.partition(mark)
        if found:
            function = function.replace("ǁ", ".") if mark == ".xǁ" else function
            break
    else:
        raise ValueError(f"not a mutmut mutant name: {name}")
    changed = [line for line in diff.splitlines() if line[:1] in "-+" and line[:3] not in ("---", "+++")]
    before = " ⏎ ".join(line[1:].strip() for line in changed if line[0] == "-")
    after = " ⏎ ".join(line[1:].strip() for line in changed if line[0] == "+")
    return f"{module}.{function}", f"{before} → {after}"


def load_accepted(path: Path) -> dict[tuple[str, str], str]:
    """The accepted survivors, ``{(function, change): why}``, from a TOML file of one table a function whose
    keys are the changes and values the reasons."""
    if not path.exists():
        return {}
    tables = toml_loads(path.read_text(encoding="utf-8"))
    return {(function, change): why for function, changes in tables.items() for change, why in changes.items()}


def code_seed(group: Group) -> int:
    """A seed that changes only when the group's modules or tests do: from their committed blobs' hashes."""
    listing = subprocess.run(
        ["git", "ls-tree", "HEAD", "--", *group.modules, *group.tests],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return int.from_bytes(hashlib.sha256(listing.encode()).digest()[:8], "big")


def head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


PREPARE_FAILED = ("failed to collect stats", "Failed to run clean test")
"""What mutmut prints when the group's tests fail (or find nothing) before any mutant is switched on."""


def scratch_tree(into: Path) -> None:
    """The committed tree (HEAD) in ``into``: what is measured is what is committed."""
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def configure(tree: Path, group: Group) -> None:
    """The group's ``[tool.mutmut]`` in the scratch tree's pyproject (replacing any there)."""
    pyproject = tree / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    text = text.split("\n[tool.mutmut]")[0].rstrip("\n")
    section = {
        "source_paths": ["rocmtui"],
        "also_copy": ["docs", "examples", "screenshots", "scripts"],
        "only_mutate": list(group.modules),
        "pytest_add_cli_args": PYTEST_ARGS,
        "pytest_add_cli_args_test_selection": list(group.tests),
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in section.items()]
    pyproject.write_text(text + "\n\n[tool.mutmut]\n" + "\n".join(lines) + "\n", encoding="utf-8")


def mutmut(tree: Path, *args: str, timeout: float | None = None) -> str:
    """mutmut's output; on ``timeout``, its whole process group (the forked children too) is killed and
    TimeoutExpired raised."""
    command = [sys.executable, "-m", "mutmut", *args]
    with subprocess.Popen(
        command, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    ) as process:
        try:
            return process.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            # Ctrl-C first: mutmut stops its children and ends between two results, its .meta files whole
            os.kill(process.pid, signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.communicate(timeout=10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise


def exit_codes(tree: Path) -> dict[str, int | None]:
    """Every mutant's exit code so far (None: not run), from mutmut's ``.meta`` files."""
    codes: dict[str, int | None] = {}
    for meta in sorted((tree / "mutants").rglob("*.meta")):
        codes.update(json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {}))
    return codes


def run_group(
    name: str,
    group: Group,
    sample: int | None,
    rng: random.Random,
    budget_s: float,
    *,
    only: set[str] | None = None,
    accepted: dict[tuple[str, str], str] | None = None,
) -> GroupResult:
    """Generate the group's mutants (mutmut's run on no mutant: generation, the tests' stats and a clean run),
    then run those drawn, in batches, until done or out of time. ``sample`` draws from the mutants not in
    ``accepted``; a run of every mutant checks the accepted ones too (one killed since can leave the list)."""
    accepted = accepted or {}
    result = GroupResult(name, commit=head())
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutation-{name}-") as scratch:
        tree = Path(scratch)
        scratch_tree(tree)
        configure(tree, group)
        prepared = mutmut(tree, "run", "--max-children", "1", "no.such.mutant", timeout=budget_s)
        names = sorted(exit_codes(tree))
        if not names:
            raise SystemExit(f"{name}: mutmut made no mutants:\n{prepared[-3000:]}")
        if any(failed in prepared for failed in PREPARE_FAILED):  # no mutant can be told apart from this
            raise SystemExit(f"{name}: the group's tests fail without any mutant:\n{prepared[-3000:]}")
        diffs = json.loads(
            subprocess.run([sys.executable, "-c", DIFFS], cwd=tree, capture_output=True, text=True, check=True).stdout
        )
        keys = {mutant: mutant_key(mutant, diffs[mutant]) for mutant in names}
        result.prepare_s = round(time.monotonic() - start, 1)
        pool = names if sample is None else [mutant for mutant in names if keys[mutant] not in accepted]
        # in a random order: a run cut short by its budget has checked a random subset, not the first functions
        drawn = rng.sample(pool, len(pool) if sample is None else min(sample, len(pool)))
        if only is not None:  # --mutants: these again (a previous run's survivors, after new tests)
            drawn = [mutant for mutant in drawn if mutant in only]
        result.mutants = len(names)
        for at in range(0, len(drawn), BATCH):
            left = budget_s - (time.monotonic() - start)
            if left <= 0:
                break
            try:
                mutmut(tree, "run", "--max-children", "1", *drawn[at : at + BATCH], timeout=left)
            except subprocess.TimeoutExpired:
                break
        codes = exit_codes(tree)
        for mutant in sorted(drawn):
            code = codes.get(mutant)
            if code is None:
                continue
            status = STATUS.get(code, "suspicious")
            result.status[status] = result.status.get(status, 0) + 1
            result.checked += 1
            if status in CAUGHT:
                result.killed += 1
                if keys[mutant] in accepted:
                    result.accepted_killed.append(" | ".join(keys[mutant]))
            elif keys[mutant] in accepted:
                result.accepted.append(" | ".join(keys[mutant]))
            else:
                result.survivors[mutant] = f"{status}: {' | '.join(keys[mutant])}\n{diffs[mutant]}"
        result.unchecked = result.mutants - result.checked
        modules = {module.removesuffix(".py").replace("/", ".") for module in group.modules}
        result.stale = sorted(
            " | ".join(key)
            for key in set(accepted) - set(keys.values())
            if key[0].rsplit(".", 1)[0] in modules or key[0].rsplit(".", 2)[0] in modules
        )
    result.seconds = round(time.monotonic() - start, 1)
    return result


def write_summary(out: Path, command: str, results: list[GroupResult]) -> None:
    summary = {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "mutants": sum(r.mutants for r in results),
        "checked": sum(r.checked for r in results),
        "killed": sum(r.killed for r in results),
        "survived": sum(len(r.survivors) for r in results),
        "accepted": sum(len(r.accepted) for r in results),
        "groups": [asdict(r) for r in results],
    }
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sample", type=int, help="check N mutants of each group, drawn at random from those not accepted"
    )
    parser.add_argument(
        "--seed",
        default="0",
        help="the draw's seed: a number (default 0), or 'code': each group's from its modules and tests as committed",
    )
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="only these groups (repeatable)")
    parser.add_argument("--budget-s", type=float, default=3600.0, help="time a group may take (default 3600 s)")
    parser.add_argument("--target", type=float, default=0.9, help="the killed share that passes (default 0.9)")
    parser.add_argument(
        "--mutants", type=Path, help="a file of mutant names, one a line: check only those (e.g. the survivors)"
    )
    parser.add_argument("--accepted", type=Path, default=ACCEPTED, help="the accepted survivors (TOML)")
    parser.add_argument("--out", type=Path, default=Path("mutation-result.json"), help="the JSON summary")
    args = parser.parse_args(argv)
    if args.seed != "code" and not args.seed.isdigit():
        parser.error("--seed: a number or 'code'")
    names = args.group or list(GROUPS)
    shared = random.Random(0 if args.seed == "code" else int(args.seed))
    accepted = load_accepted(args.accepted)
    command = " ".join(["python", "scripts/mutation.py", *(argv if argv is not None else sys.argv[1:])])
    results: list[GroupResult] = []
    for name in names:
        only = set(args.mutants.read_text(encoding="utf-8").split()) if args.mutants else None
        rng = random.Random(code_seed(GROUPS[name])) if args.seed == "code" else shared
        result = run_group(name, GROUPS[name], args.sample, rng, args.budget_s, only=only, accepted=accepted)
        results.append(result)
        print(
            f"{name}: {result.checked} of {result.mutants} checked in {result.seconds} s "
            f"({result.prepare_s} s to prepare): {result.killed} killed, {len(result.survivors)} survived, "
            f"{len(result.accepted)} accepted; score {score(result.killed, result.checked)} raw, "
            f"{score(result.killed, result.checked - len(result.accepted))} without the accepted; {result.status}",
            flush=True,
        )
        for mutant, diff in result.survivors.items():
            print(f"\nsurvived: {mutant}: {diff}", flush=True)
        for key in result.accepted_killed:
            print(f"accepted, yet killed (may leave {args.accepted.name}): {key}", flush=True)
        for key in result.stale:
            print(f"accepted, matching no mutant (stale: the line changed?): {key}", flush=True)
        write_summary(args.out, command, results)  # after each group: a run cut short keeps what it found
    checked = sum(r.checked for r in results)
    killed = sum(r.killed for r in results)
    survived = sum(len(r.survivors) for r in results)
    kept = sum(len(r.accepted) for r in results)
    print(
        f"checked {checked} mutants: {killed} killed, {survived} survived, {kept} accepted; "
        f"score {score(killed, checked)} raw, {score(killed, checked - kept)} without the accepted"
    )
    return 0 if checked and not survived and killed >= args.target * checked else 1


def score(killed: int, of: int) -> str:
    return f"{killed / of:.1%}" if of else "-"


if __name__ == "__main__":
    sys.exit(main())
