"""The Lightning and Hugging Face callbacks, run for real on the CPU with tiny models for a few steps."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from rocmtui.events import EpochMetrics, LogMessage, MetricsLogged, RunFinished, TrackStarted
from rocmtui.run.layout import run_dirs
from rocmtui.run.stream import read_events
from rocmtui.tracking import env

pytestmark = pytest.mark.slow  # functional tier: real training through the frameworks


@pytest.fixture(autouse=True)
def _runs_dir(tmp_path: Path, monkeypatch) -> None:
    for name in (env.RUN_DIR, env.LINK, env.RUN_NAME):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(env.RUNS_DIR, str(tmp_path / "runs"))


def the_run(tmp_path: Path) -> list:
    [run_dir] = run_dirs(tmp_path / "runs")
    return read_events(run_dir)


def test_lightning_fit_reports_steps_validation_and_its_end(tmp_path: Path) -> None:
    pl = pytest.importorskip("lightning.pytorch")
    from tiny_lightning import Tiny
    from torch.utils.data import DataLoader, TensorDataset

    from rocmtui.integrations.lightning import RocmtuiCallback

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    trainer = pl.Trainer(
        max_epochs=2, callbacks=[RocmtuiCallback("tiny")], logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, accelerator="cpu",
    )  # fmt: skip
    trainer.fit(Tiny(), DataLoader(data, batch_size=8), DataLoader(data, batch_size=16))
    events = the_run(tmp_path)
    assert isinstance(events[0], TrackStarted) and events[0].name == "tiny" and events[0].total_steps == 8
    steps = [e for e in events if isinstance(e, MetricsLogged)]
    assert steps and steps[-1].step == 8 and "train_loss" in steps[-1].values
    assert [e.epoch for e in events if isinstance(e, EpochMetrics)] == [1, 2]
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


def tiny_llama(transformers):
    """A one-layer Llama's config and 16 sequences of 8 tokens: a Trainer run of a few steps on the CPU."""
    config = transformers.LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=16,
    )  # fmt: skip
    ids = torch.randint(0, 32, (16, 8))
    return config, [{"input_ids": row, "labels": row} for row in ids]


def test_hugging_face_trainer_reports_logs_evaluation_and_its_end(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from rocmtui.integrations.transformers import RocmtuiCallback

    torch.manual_seed(0)
    config, data = tiny_llama(transformers)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=6, per_device_train_batch_size=4, logging_steps=2,
        eval_strategy="steps", eval_steps=3, save_strategy="no", report_to=[], disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    trainer = transformers.Trainer(
        model=transformers.LlamaForCausalLM(config), args=args, train_dataset=data, eval_dataset=data[:4],
        callbacks=[RocmtuiCallback("hf", tokens_per_step=32)],
    )  # fmt: skip
    trainer.train()
    events = the_run(tmp_path)
    assert isinstance(events[0], TrackStarted) and events[0].total_steps == 6
    steps = [e for e in events if isinstance(e, MetricsLogged)]
    assert steps[-1].step == 6 and {"loss", "learning_rate", "tokens_per_s"} <= set(steps[-1].values)
    evals = [e for e in events if isinstance(e, EpochMetrics)]
    assert [e.step for e in evals] == [3, 6] and "eval_loss" in evals[0].values
    assert isinstance(events[-1], RunFinished)
    # every value read back is the one the Trainer logged, at its step
    history = trainer.state.log_history
    logged = {h["step"]: (h["loss"], h["learning_rate"]) for h in history if "loss" in h and "eval_loss" not in h}
    read: dict[int, list[float]] = {}
    for event in steps:
        points = event.points()
        for name in ("loss", "learning_rate"):
            for step, value in zip(*points[name], strict=True):
                read.setdefault(step, []).append(value)
    assert sorted(read) == sorted(logged) == [2, 4, 6]
    assert {step: tuple(values) for step, values in read.items()} == pytest.approx(logged, rel=1e-12)
    trainer_evals = [h["eval_loss"] for h in history if "eval_loss" in h]
    assert [e.values["eval_loss"] for e in evals] == pytest.approx(trainer_evals, rel=1e-12)


def test_a_viewers_save_is_lightnings_own_checkpoint_in_the_run_folder(tmp_path: Path) -> None:
    pl = pytest.importorskip("lightning.pytorch")
    from tiny_lightning import Tiny
    from torch.utils.data import DataLoader, TensorDataset

    from rocmtui.integrations.lightning import RocmtuiCallback

    reporter = RocmtuiCallback("tiny")

    from lightning.pytorch import Callback

    class AskOnce(Callback):  # the viewer's s, as the session hands it to the run's control
        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
            if trainer.global_step == 2 and reporter.run is not None:
                reporter.run._sink.control.request_save()

    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    trainer = pl.Trainer(
        max_epochs=1, callbacks=[reporter, AskOnce()], logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, accelerator="cpu",
    )  # fmt: skip
    trainer.fit(Tiny(), DataLoader(data, batch_size=8))
    [run_dir] = run_dirs(tmp_path / "runs")
    events = read_events(run_dir)
    assert isinstance(events[0], TrackStarted) and events[0].saves
    assert [p.name for p in run_dir.glob("*.ckpt")] == ["checkpoint-step-3.ckpt"]
    assert any(isinstance(e, LogMessage) and "checkpoint saved" in e.message for e in events)


def test_a_viewers_save_is_the_hugging_face_trainers_own(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    from rocmtui.integrations.transformers import RocmtuiCallback

    reporter = RocmtuiCallback("hf")

    from transformers import TrainerCallback

    class AskOnce(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs) -> None:
            if state.global_step == 2 and reporter.run is not None:
                reporter.run._sink.control.request_save()

    config, data = tiny_llama(transformers)
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"), max_steps=4, per_device_train_batch_size=4, save_strategy="no",
        report_to=[], disable_tqdm=True, use_cpu=True,
    )  # fmt: skip
    trainer = transformers.Trainer(
        model=transformers.LlamaForCausalLM(config), args=args, train_dataset=data, callbacks=[reporter, AskOnce()]
    )
    trainer.train()
    assert (tmp_path / "out" / "checkpoint-3").is_dir()
    [run_dir] = run_dirs(tmp_path / "runs")
    assert any(isinstance(e, LogMessage) and "checkpoint-" not in e.message and "saves step 3" in e.message
               for e in read_events(run_dir))  # fmt: skip
