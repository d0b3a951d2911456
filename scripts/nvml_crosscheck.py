"""Check rocmtui's NVML readings against nvidia-smi on a real NVIDIA GPU, under load.

Starts a bf16 matrix-product load on GPU 0 in a subprocess (holding ``--hold-gib`` of memory), waits for it
to warm up, then takes ``--pairs`` readings: rocmtui's NVML backend and ``nvidia-smi --query-gpu`` back to
back. Prints each pair and a verdict per field against the tolerances: memory within 1%, temperature within
1 C, power within 5% (medians over the pairs, since board power moves from one millisecond to the next).

    python scripts/nvml_crosscheck.py --pairs 10
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from rocmtui.config import MonitorConfig
from rocmtui.gpu import nvml

LOAD = """
import sys, time, torch
hold = torch.empty(int(float(sys.argv[1]) * 2**30), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    for _ in range(20):
        a = (a @ a).clamp_(-1, 1)
    torch.cuda.synchronize()
"""
QUERY = "memory.used,temperature.gpu,power.draw,utilization.gpu"


def nvidia_smi() -> tuple[float, float, float, float]:
    """(memory MiB, temperature C, power W, utilization %) of GPU 0."""
    out = subprocess.run(
        ["nvidia-smi", "-i", "0", f"--query-gpu={QUERY}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mem, temp, power, util = (float(x) for x in out.strip().split(","))
    return mem, temp, power, util


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--hold-gib", type=float, default=20.0)
    args = parser.parse_args()

    load_s = args.warmup + args.pairs * 1.5 + 10
    load = subprocess.Popen([sys.executable, "-c", LOAD, str(args.hold_gib), str(load_s)])
    backend = nvml.open_backend(MonitorConfig())
    try:
        time.sleep(args.warmup)
        rows = []
        for _ in range(args.pairs):
            ours = backend.sample(0)
            smi = nvidia_smi()
            rows.append((ours, smi))
            time.sleep(1.0)
    finally:
        load.terminate()
        load.wait()
        backend.close()

    print(f"{'rocmtui MiB':>12} {'smi MiB':>9} {'rocmtui C':>9} {'smi C':>6} {'rocmtui W':>9} {'smi W':>7} util")
    mem_err, temp_err, power_ratio = [], [], []
    for ours, (mem, temp, power, util) in rows:
        our_mem = (ours.memory_used_bytes or 0) / 2**20
        our_temp = ours.temperature_c or float("nan")
        our_power = ours.power_w or float("nan")
        print(
            f"{our_mem:12.0f} {mem:9.0f} {our_temp:9.0f} {temp:6.0f} {our_power:9.1f} {power:7.1f} "
            f"{ours.utilization_pct}/{util:.0f}"
        )
        mem_err.append(abs(our_mem - mem) / mem)
        temp_err.append(abs(our_temp - temp))
        power_ratio.append(abs(our_power - power) / power)
    verdicts = {
        "memory within 1%": statistics.median(mem_err) <= 0.01,
        "temperature within 1 C": statistics.median(temp_err) <= 1.0,
        "power within 5%": statistics.median(power_ratio) <= 0.05,
    }
    print(
        f"median |mem| {statistics.median(mem_err):.3%}, |temp| {statistics.median(temp_err):.1f} C, "
        f"|power| {statistics.median(power_ratio):.2%}"
    )
    for name, ok in verdicts.items():
        print(f"{'PASS' if ok else 'FAIL'} {name}")
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
