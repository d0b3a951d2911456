"""Mutation testing of the modules that guard trust and data: mutmut, one group of modules at a time.

Each group (a few modules and the default tier's test files that exercise them) runs in a scratch copy of the
committed tree (``git archive HEAD``), with its own ``[tool.mutmut]`` settings written into that copy's
pyproject: mutmut mutates only the group's modules and maps mutants to tests among the group's test files only,
so a mutant of ``text.plain`` does not run every UI test. mutmut runs each mutant in a forked child with only the
tests that reach the mutated function (pytest ``-x``: a mutant is killed by its first failing test).

    python scripts/mutation.py                         # every mutant of every group
    python scripts/mutation.py --sample 5 --seed 1     # 5 mutants of each group, drawn at random
    python scripts/mutation.py --group text --budget-s 600

Writes a JSON summary (``--out``, default ``mutation-result.json``) and prints one: mutants, killed, survived,
the rest by mutmut's status, and every survivor by name with its diff (``mutmut show``). Exit code 0 when the
killed share reaches ``--target`` (default 0.9) of the mutants checked, else 1. The result is recorded, with
why each survivor is accepted, in docs/mutation.md.
"""

from __future__ import annotations

import argparse
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

ROOT = Path(__file__).resolve().parents[1]


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
"""mutmut's exit codes (mutmut.stats.status_by_exit_code); any other code is mutmut's "suspicious"."""

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
    """Each survivor's name and its diff."""
    unchecked: int = 0
    """Mutants left out: not drawn by ``--sample``, or past the time budget."""
    seconds: float = 0.0
    prepare_s: float = 0.0
    """Of ``seconds``, making the mutants and mutmut's two runs of the group's tests (which tests reach which
    function, then the tests unmutated)."""


def head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()


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
    name: str, group: Group, sample: int | None, rng: random.Random, budget_s: float, *, only: set[str] | None = None
) -> GroupResult:
    """Generate the group's mutants (mutmut's run on no mutant: generation, the tests' stats and a clean run),
    then run those drawn, in batches, until done or out of time."""
    result = GroupResult(name, commit=head())
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"mutation-{name}-") as scratch:
        tree = Path(scratch)
        scratch_tree(tree)
        configure(tree, group)
        prepared = mutmut(tree, "run", "--max-children", "1", "no.such.mutant", timeout=budget_s)
        result.prepare_s = round(time.monotonic() - start, 1)
        names = sorted(exit_codes(tree))
        if not names:
            raise SystemExit(f"{name}: mutmut made no mutants:\n{prepared[-3000:]}")
        # in a random order: a run cut short by its budget has checked a random subset, not the first functions
        drawn = rng.sample(names, len(names) if sample is None else min(sample, len(names)))
        if only is not None:  # --mutants: these again (a previous run's survivors, after new tests)
            drawn = [mutant for mutant in drawn if mutant in only]
        result.mutants = len(names)
        for at in range(0, len(drawn), 10):
            left = budget_s - (time.monotonic() - start)
            if left <= 0:
                break
            try:
                mutmut(tree, "run", "--max-children", "1", *drawn[at : at + 10], timeout=left)
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
            if status == "survived":
                result.survivors[mutant] = mutmut(tree, "show", mutant).strip()
        result.unchecked = result.mutants - result.checked
    result.seconds = round(time.monotonic() - start, 1)
    return result


def write_summary(out: Path, command: str, results: list[GroupResult]) -> None:
    summary = {
        "command": command,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "mutants": sum(r.mutants for r in results),
        "checked": sum(r.checked for r in results),
        "killed": sum(r.status.get("killed", 0) for r in results),
        "survived": sum(len(r.survivors) for r in results),
        "groups": [asdict(r) for r in results],
    }
    out.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="check N mutants of each group, drawn at random (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="the draw's seed (default 0)")
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="only these groups (repeatable)")
    parser.add_argument("--budget-s", type=float, default=3600.0, help="time a group may take (default 3600 s)")
    parser.add_argument("--target", type=float, default=0.9, help="the killed share that passes (default 0.9)")
    parser.add_argument(
        "--mutants", type=Path, help="a file of mutant names, one a line: check only those (e.g. the survivors)"
    )
    parser.add_argument("--out", type=Path, default=Path("mutation-result.json"), help="the JSON summary")
    args = parser.parse_args(argv)
    names = args.group or list(GROUPS)
    rng = random.Random(args.seed)
    command = " ".join(["python", "scripts/mutation.py", *(argv if argv is not None else sys.argv[1:])])
    results: list[GroupResult] = []
    for name in names:
        only = set(args.mutants.read_text(encoding="utf-8").split()) if args.mutants else None
        result = run_group(name, GROUPS[name], args.sample, rng, args.budget_s, only=only)
        results.append(result)
        print(
            f"{name}: {result.checked} of {result.mutants} checked in {result.seconds} s "
            f"({result.prepare_s} s to prepare): {result.status}",
            flush=True,
        )
        for mutant, diff in result.survivors.items():
            print(f"\nsurvived: {mutant}\n{diff}", flush=True)
        write_summary(args.out, command, results)  # after each group: a run cut short keeps what it found
    checked = sum(r.checked for r in results)
    killed = sum(r.status.get("killed", 0) for r in results)
    print(f"checked {checked} mutants: {killed} killed, {sum(len(r.survivors) for r in results)} survived")
    return 0 if checked and killed >= args.target * checked else 1


if __name__ == "__main__":
    sys.exit(main())
