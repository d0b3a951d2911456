#!/usr/bin/env bash
# rocmtui monitor, nvtop and nvitop side by side on a GPU machine, under load, in one run.
#
# Run from the repository root on the machine (no network needed) with the git-ignored .whl/ and .debs/
# carried along: .whl/ holds the Python wheels (textual and its dependencies, plotext, textual-plotext,
# msgspec, platformdirs, nvitop), .debs/ Debian's nvtop and the libraries it links to. python3 there must
# have torch with CUDA, psutil and nvidia-ml-py. The figures go to $OUT/monitor_compare.md, each run's lines
# to $OUT/monitor_cost.log.
#
#   bash scripts/device_monitor_compare.sh
#
# What it does: installs the wheels into /tmp/site (on PYTHONPATH, not in python3's environment), unpacks
# nvtop into /tmp/nvtop (not into /), starts a bf16 8192x8192 matrix-product loop holding ~30 GiB on GPU 0,
# then runs scripts/monitor_cost.py over the three tools at 80x24 and 120x40, interleaved, one launch each.
# A tool that cannot run is reported as failed, with the reason, and the others are still measured.
# Settings: PY (python3), MEASURE_S (30), SETTLE_S (5), SIZES (80x24,120x40), HOLD_GIB (30), GPU_LOAD (1; 0: none),
# BEFORE (a folder with another rocmtui checkout, measured the same way under the same load, for before/after),
# LAUNCHES (0; N: then N more launches of each tool to its first frame, interleaved, for first-frame medians, with
# the Textual floor beside them: scripts/textual_floor.py, the least a Textual app draws), TOOLS (rocmtui,nvtop,nvitop),
# ROUNDS (1; N: the measurement N times over, the tools and BEFORE interleaved in each round, a table a round: one
# launch is within a clock tick or two of the next, so a difference of a tick needs several).
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-python3}
MEASURE_S=${MEASURE_S:-30}
SETTLE_S=${SETTLE_S:-5}
SIZES=${SIZES:-80x24,120x40}
HOLD_GIB=${HOLD_GIB:-30}
GPU_LOAD=${GPU_LOAD:-1}
BEFORE=${BEFORE:-}
LAUNCHES=${LAUNCHES:-0}
TOOLS=${TOOLS:-rocmtui,nvtop,nvitop}
ROUNDS=${ROUNDS:-1}
OUT=${OUT:-/tmp/monitor_compare}
mkdir -p "$OUT"
SITE=/tmp/site
NVTOP_ROOT=/tmp/nvtop

echo "== machine"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: not available"
grep -m1 "model name" /proc/cpuinfo | sed 's/.*: /CPU: /'
echo "cores: $(nproc)"
echo "python: $(command -v "$PY") $("$PY" --version 2>&1)"

echo "== Python packages (.whl -> $SITE)"
rm -rf "$SITE"
if ! "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl; then
    echo "pip install of .whl/ failed: unpacking the wheels instead (a wheel is a zip of the installed files)"
    "$PY" -c 'import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]' "$SITE" .whl/*.whl
fi
export PYTHONPATH="$SITE:$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Bytecode written now, as an ordinary install does, so that no tool's first launch pays for compiling it.
"$PY" -m compileall -q -j 0 "$SITE" rocmtui ${BEFORE:+"$BEFORE"} >/dev/null 2>&1
"$PY" - <<'EOF'
import importlib.metadata as md
import importlib.util

for name in ("textual", "rich", "msgspec", "platformdirs", "psutil", "nvidia-ml-py", "nvitop", "torch"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        print(f"{name}: not installed")
print("curses:", "present" if importlib.util.find_spec("_curses") else "MISSING (nvitop cannot draw)")
EOF

echo "== nvtop (.debs -> $NVTOP_ROOT)"
# The terminal descriptions: the system's, then the carried ncurses-base's, for curses in nvtop and nvitop.
export TERMINFO_DIRS="/etc/terminfo:/lib/terminfo:/usr/share/terminfo:$NVTOP_ROOT/root/lib/terminfo"
nvtop_problem=""
rm -rf "$NVTOP_ROOT"
mkdir -p "$NVTOP_ROOT/root" "$NVTOP_ROOT/bin"
if ! command -v dpkg >/dev/null; then
    nvtop_problem="dpkg is not installed, so the nvtop package cannot be unpacked"
else
    for deb in .debs/*.deb; do
        dpkg -x "$deb" "$NVTOP_ROOT/root" || nvtop_problem="dpkg -x $deb failed"
    done
fi
nvtop_bin="$NVTOP_ROOT/root/usr/bin/nvtop"
if [ -z "$nvtop_problem" ] && [ ! -x "$nvtop_bin" ]; then
    nvtop_problem="no nvtop binary in .debs/"
fi
if [ -z "$nvtop_problem" ]; then
    missing=$(ldd "$nvtop_bin" 2>&1 | grep "not found")
    if [ -z "$missing" ]; then
        echo "nvtop links to the system's libraries"
        ln -s "$nvtop_bin" "$NVTOP_ROOT/bin/nvtop"
    else
        # The carried libraries only where the system lacks one: a wrapper that execs nvtop (same process).
        echo "the system lacks: $(echo "$missing" | awk '{print $1}' | tr '\n' ' ')- using the carried ones"
        libs="$NVTOP_ROOT/root/lib/x86_64-linux-gnu:$NVTOP_ROOT/root/usr/lib/x86_64-linux-gnu"
        printf '#!/bin/sh\nexport LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\nexec %s "$@"\n' \
            "$libs" "$nvtop_bin" >"$NVTOP_ROOT/bin/nvtop"
        chmod +x "$NVTOP_ROOT/bin/nvtop"
        still=$(LD_LIBRARY_PATH="$libs" ldd "$nvtop_bin" 2>&1 | grep "not found")
        [ -n "$still" ] && nvtop_problem="libraries not found even with the carried ones: $still"
    fi
fi
if [ -z "$nvtop_problem" ]; then
    export PATH="$NVTOP_ROOT/bin:$PATH"
    nvtop --version 2>&1 || nvtop_problem="nvtop --version failed: $(nvtop --version 2>&1 | tail -1)"
fi
[ -n "$nvtop_problem" ] && echo "nvtop cannot run: $nvtop_problem"
"$PY" -m nvitop --version 2>&1 | head -1 || echo "nvitop: cannot start"

load_pid=""
load_note="none"
stop_load() {
    if [ -n "$load_pid" ]; then
        kill "$load_pid" 2>/dev/null
        wait "$load_pid" 2>/dev/null
        load_pid=""
    fi
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
if [ "$GPU_LOAD" = 1 ]; then
    echo "== GPU load: bf16 8192x8192 matrix products on GPU 0, holding $HOLD_GIB GiB"
    # The load of scripts/nvml_crosscheck.py, without an end: stopped by the trap.
    "$PY" -c '
import sys, torch
hold = torch.ones(int(float(sys.argv[1]) * 2**30), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
print("load running", flush=True)
while True:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
' "$HOLD_GIB" >"$OUT/load.log" 2>&1 &
    load_pid=$!
    for _ in $(seq 120); do
        grep -q "load running" "$OUT/load.log" 2>/dev/null && break
        kill -0 "$load_pid" 2>/dev/null || break
        sleep 0.5
    done
    if grep -q "load running" "$OUT/load.log"; then
        load_note="bf16 8192x8192 matmul loop holding $HOLD_GIB GiB"
        sleep 5
        nvidia-smi --query-gpu=utilization.gpu,memory.used,power.draw --format=csv 2>&1
    else
        load_note="none (it did not start: $(tail -1 "$OUT/load.log"))"
        echo "the GPU load did not start: $(tail -3 "$OUT/load.log")"
        stop_load
    fi
fi

rm -f "$OUT"/table*.md
status=0
for round in $(seq "$ROUNDS"); do
    echo "== round $round of $ROUNDS: $SIZES, ${MEASURE_S} s each after ${SETTLE_S} s of settling"
    "$PY" -u scripts/monitor_cost.py --tool "$TOOLS" --size "$SIZES" --seconds "$MEASURE_S" \
        --settle "$SETTLE_S" --warmup --table "$OUT/table_$round.md" -- --backend nvml 2>&1 | tee -a "$OUT/monitor_cost.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    if [ -n "$BEFORE" ]; then
        echo "== rocmtui from $BEFORE, the same way"
        "$PY" -u scripts/monitor_cost.py --tool rocmtui --source "$BEFORE" --size "$SIZES" --seconds "$MEASURE_S" \
            --settle "$SETTLE_S" --warmup --table "$OUT/table_before_$round.md" -- --backend nvml 2>&1 |
            tee -a "$OUT/monitor_cost.log"
    fi
done
if [ "$LAUNCHES" -gt 0 ]; then
    echo "== $LAUNCHES launches of each tool to its first frame"
    for _ in $(seq "$LAUNCHES"); do
        "$PY" scripts/monitor_cost.py --tool rocmtui,textual,nvtop,nvitop --size "$SIZES" --seconds 0.3 --settle 0 \
            -- --backend nvml 2>&1 | grep "^| [a-z]" | grep -v "^| tool"
        if [ -n "$BEFORE" ]; then
            "$PY" scripts/monitor_cost.py --tool rocmtui --source "$BEFORE" --size "$SIZES" --seconds 0.3 \
                --settle 0 -- --backend nvml 2>&1 | grep "^| rocmtui" | sed 's/^| rocmtui/| rocmtui (before)/'
        fi
    done | tee "$OUT/launches.md"
fi
if [ "$GPU_LOAD" = 1 ] && [ -n "$load_pid" ]; then
    echo "== GPU after the runs (the load still on)"
    nvidia-smi --query-gpu=utilization.gpu,memory.used,power.draw --format=csv 2>&1
fi
stop_load

{
    echo "# rocmtui monitor, nvtop and nvitop side by side"
    echo
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
    echo "GPU: ${gpu:-unknown (no nvidia-smi)}; $(nproc) cores;"\
        "load: $load_note;"\
        "${MEASURE_S} s measured after ${SETTLE_S} s of settling, one launch per line, each tool at its defaults"\
        "(rocmtui: --backend nvml); versions: $(nvtop --version 2>/dev/null || echo 'nvtop: none'),"\
        "nvitop $("$PY" -c 'import nvitop; print(nvitop.__version__)' 2>/dev/null || echo none)."
    [ -n "$nvtop_problem" ] && echo "nvtop could not run: $nvtop_problem."
    echo
    for round in $(seq "$ROUNDS"); do
        [ "$ROUNDS" -gt 1 ] && printf 'Round %s:\n\n' "$round"
        cat "$OUT/table_$round.md" 2>/dev/null || echo "(no table: monitor_cost.py failed)"
        if [ -n "$BEFORE" ]; then
            echo
            echo "rocmtui from $BEFORE (before):"
            echo
            cat "$OUT/table_before_$round.md" 2>/dev/null || echo "(no table)"
        fi
        echo
    done
    if [ "$LAUNCHES" -gt 0 ]; then
        echo
        echo "First frames, $LAUNCHES launches of each (tool, size, first frame, first reading, ...):"
        echo
        cat "$OUT/launches.md"
    fi
} >"$OUT/monitor_compare.md"
echo
echo "== $OUT/monitor_compare.md"
cat "$OUT/monitor_compare.md"
exit "$status"
