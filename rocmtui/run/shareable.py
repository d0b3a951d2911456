"""The one shareable line of a run (model, data, GPU, torch, time, speed, peak memory and temperature, accuracy):
what ``rocmtui bench`` prints for each of its runs and what a run card shows for a finished ``train`` run."""

from __future__ import annotations

from rocmtui.base.units import fmt_bytes, fmt_temp


def shareable_line(
    *,
    run: str,
    model: str,
    dataset: str,
    gpu: str,
    torch: str,
    epochs: int,
    seconds: float,
    images_per_s: float,
    peak_vram_bytes: int | None,
    peak_temp_c: float | None,
    test_acc: float,
    tta: bool = False,
) -> str:
    """``rocmtui: fastnet on cifar10 | NVIDIA H200 | torch 2.14.1 (cuda) | 10 epoch(s) | 3.02 s | ...``."""
    vram, temp = fmt_bytes(peak_vram_bytes), fmt_temp(peak_temp_c)
    return (
        f"{run}: {model} on {dataset} | {gpu} | torch {torch} | {epochs} epoch(s) "
        f"| {seconds:.2f} s | {images_per_s:,.0f} img/s | peak VRAM {vram} | peak temp {temp} "
        f"| test acc {100 * test_acc:.2f}%{' (TTA)' if tta else ''}"
    )
