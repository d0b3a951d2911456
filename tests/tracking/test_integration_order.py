"""Each integration against its library's own order of callbacks, driven by the real trainers on the CPU.

The Hugging Face ``Trainer`` calls ``on_init_end`` when it is built, then ``on_train_begin``, the steps
(``on_step_begin`` ... ``on_step_end``), with ``on_log``, ``on_evaluate`` and ``on_save`` between them, and
``on_train_end``. Lightning calls ``on_fit_start``, the sanity check's validation, ``on_train_start``, the
batches (``on_train_batch_start`` / ``on_train_batch_end``), validations at their interval, ``on_train_end``
and ``on_fit_end``. A recording callback placed after ours sees each hook once ours has handled it: the run
exists from the first hook ours starts it in to the last, and the events in the folder follow the hooks
(a log and an evaluation before the first step, an evaluation in the middle, a save asked for between steps).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_integrations import tiny_llama

from rocmtui.events import EpochMetrics, LogMessage, MetricsLogged, RunFinished, TrackStarted
from rocmtui.run.layout import run_dirs
from rocmtui.run.stream import read_events
from rocmtui.tracking import env

pytestmark = pytest.mark.slow  # functional tier: real training through the frameworks


@pytest.fixture(autouse=True)
def _runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (env.RUN_DIR, env.LINK, env.RUN_NAME):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(env.RUNS_DIR, str(tmp_path / "runs"))


def test_hugging_face_hooks_come_in_the_trainers_order_and_the_run_follows_them(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from rocmtui.integrations.transformers import RocmtuiCallback

    reporter = RocmtuiCallback("hf-order")
    hooks: list[tuple[str, int, bool]] = []  # (hook, global step, whether our run was open then)

    def recorder(name: str):
        def hook(self, args, state, control, **kwargs) -> None:
            hooks.append((name, state.global_step, reporter.run is not None))
            if name == "on_step_end" and state.global_step == 2 and reporter.run is not None:
                reporter.run._sink.control.request_save()  # a viewer's s, between steps 2 and 3

        return hook

    names = ("on_init_end", "on_train_begin", "on_step_begin", "on_step_end", "on_log", "on_evaluate", "on_save")
    Recorder = type("Recorder", (transformers.TrainerCallback,), {n: recorder(n) for n in (*names, "on_train_end")})
    torch.manual_seed(0)
    config, data = tiny_llama(transformers)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=6, per_device_train_batch_size=4, logging_steps=2,
        eval_strategy="steps", eval_steps=3, eval_on_start=True, save_strategy="no", report_to=[],
        disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    trainer = transformers.Trainer(
        model=transformers.LlamaForCausalLM(config), args=args, train_dataset=data, eval_dataset=data[:4],
        callbacks=[reporter, Recorder()],
    )  # fmt: skip
    trainer.train()

    order = [name for name, _, _ in hooks]
    assert order[:2] == ["on_init_end", "on_train_begin"] and order[-1] == "on_train_end"
    assert [open_ for _, _, open_ in hooks] == [False, *[True] * (len(hooks) - 2), False]
    first_step = order.index("on_step_begin")
    assert {"on_evaluate", "on_log"} <= set(order[:first_step])  # eval_on_start: before any step
    steps = [step for name, step, _ in hooks if name == "on_step_end"]
    assert steps == [1, 2, 3, 4, 5, 6]
    stepping = [name for name in order if name in ("on_step_begin", "on_step_end")]
    assert stepping == ["on_step_begin", "on_step_end"] * 6
    for at, name in enumerate(order):  # a log, an evaluation, a save: between steps, never inside one
        if name in ("on_log", "on_evaluate", "on_save"):
            before = [n for n in order[:at] if n in ("on_step_begin", "on_step_end")]
            assert not before or before[-1] == "on_step_end"
    saves = [step for name, step, _ in hooks if name == "on_save"]
    assert saves == [3]  # the viewer's s after step 2: the Trainer's own save at the next step's end
    assert (tmp_path / "out" / "checkpoint-3").is_dir()

    [run_dir] = run_dirs(tmp_path / "runs")
    events = read_events(run_dir)
    assert isinstance(events[0], TrackStarted) and events[0].total_steps == 6
    evals = [e for e in events if isinstance(e, EpochMetrics)]
    assert [e.epoch for e in evals] == [1, 2, 3] and all("eval_loss" in e.values for e in evals)
    logged = [e for e in events if isinstance(e, MetricsLogged)]
    assert events.index(evals[0]) < events.index(logged[0])  # the evaluation before the first step
    assert [s for e in logged for s in e.steps if "loss" in e.logged] == [2, 4, 6]
    assert any(isinstance(e, LogMessage) and "saves step 3" in e.message for e in events)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


def test_lightning_hooks_come_in_the_trainers_order_and_the_run_follows_them(tmp_path: Path) -> None:
    pl = pytest.importorskip("lightning.pytorch")
    from tiny_lightning import Tiny
    from torch.utils.data import DataLoader, TensorDataset

    from rocmtui.integrations.lightning import RocmtuiCallback

    reporter = RocmtuiCallback("lightning-order")
    hooks: list[tuple[str, int, bool, bool]] = []  # (hook, global step, run open, sanity checking)

    def recorder(name: str):
        def hook(self, trainer, pl_module, *args) -> None:
            hooks.append((name, trainer.global_step, reporter.run is not None, trainer.sanity_checking))
            if name == "on_train_batch_end" and trainer.global_step == 2 and reporter.run is not None:
                reporter.run._sink.control.request_save()  # a viewer's s, between steps 2 and 3

        return hook

    names = (
        "on_fit_start", "on_sanity_check_start", "on_validation_end", "on_sanity_check_end", "on_train_start",
        "on_train_batch_start", "on_train_batch_end", "on_train_epoch_end", "on_train_end", "on_fit_end",
    )  # fmt: skip
    Recorder = type("Recorder", (pl.Callback,), {name: recorder(name) for name in names})
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    trainer = pl.Trainer(
        max_epochs=1, val_check_interval=0.5, num_sanity_val_steps=1, callbacks=[reporter, Recorder()],
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        accelerator="cpu",
    )  # fmt: skip
    trainer.fit(Tiny(), DataLoader(data, batch_size=4), DataLoader(data, batch_size=16))

    order = [name for name, *_ in hooks]
    assert order[:4] == ["on_fit_start", "on_sanity_check_start", "on_validation_end", "on_sanity_check_end"]
    assert order[4] == "on_train_start" and order[-3:] == ["on_train_epoch_end", "on_train_end", "on_fit_end"]
    assert [open_ for _, _, open_, _ in hooks] == [True] * (len(hooks) - 1) + [False]
    batches = [step for name, step, *_ in hooks if name == "on_train_batch_end"]
    assert batches == [1, 2, 3, 4, 5, 6, 7, 8]
    validations = [(step, sanity) for name, step, _, sanity in hooks if name == "on_validation_end"]
    assert validations == [(0, True), (4, False), (8, False)]  # the sanity check, then mid-epoch and at its end

    [run_dir] = run_dirs(tmp_path / "runs")
    events = read_events(run_dir)
    assert isinstance(events[0], TrackStarted) and events[0].total_steps == 8
    evals = [e for e in events if isinstance(e, EpochMetrics)]
    assert len(evals) == 2 and all("val_loss" in e.values for e in evals)  # the sanity check is not an epoch
    assert [e.step for e in evals] == [4, 8]
    assert [p.name for p in run_dir.glob("*.ckpt")] == ["checkpoint-step-3.ckpt"]  # asked after step 2
    logged = [s for e in events if isinstance(e, MetricsLogged) for s in e.steps]
    assert logged == [1, 2, 3, 4, 5, 6, 7, 8]
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
