"""``RocmtuiCallback`` for the Hugging Face ``Trainer``: ``Trainer(..., callbacks=[RocmtuiCallback()])``.

``on_step_end`` reports progress (the step, against ``max_steps``), ``on_log`` the values the Trainer
logs (loss, learning rate, grad norm), ``on_evaluate`` the evaluation metrics as an epoch's values.
In a run of several processes every rank calls ``track()`` (a collective): the main process reports the
run, each rank its own progress in ``ranks/``. A viewer's stop ends training at the next step.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rocmtui.tracking import Run, track

if TYPE_CHECKING:
    import transformers
else:  # the library is optional: loaded when this module is, never by ``import rocmtui``
    import transformers

SKIP = frozenset({"epoch", "total_flos", "step"})


def _scalars(logs: Mapping[str, Any]) -> dict[str, float]:
    """The numbers worth a curve: not the bookkeeping (epoch, runtimes, per-second rates of a pass)."""
    return {
        k: float(v)
        for k, v in logs.items()
        if k not in SKIP and not k.endswith(("_runtime", "_per_second")) and isinstance(v, int | float)
    }


class RocmtuiCallback(transformers.TrainerCallback):
    """Reports a ``transformers.Trainer`` run through ``rocmtui.track()``."""

    def __init__(
        self, name: str | None = None, *, config: Mapping[str, object] | None = None, tokens_per_step: int = 0
    ) -> None:
        """``tokens_per_step`` (batch x sequence length x accumulation), when given, adds ``tokens_per_s``."""
        self.name = name
        self.config = config
        self.tokens_per_step = tokens_per_step
        self.run: Run | None = None
        self._evals = 0
        self._rate_from: tuple[int, float] | None = None

    def on_train_begin(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        **kwargs: Any,
    ) -> None:
        config = dict(self.config) if self.config is not None else _settings(args)
        self.run = track(
            self.name,
            config=config,
            total_steps=state.max_steps or None,
            rank=args.process_index,
            world_size=args.world_size,
            saves=args.world_size == 1,  # saving is a collective with several ranks; only rank 0 hears s
        )

    def on_step_end(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        **kwargs: Any,
    ) -> None:
        run = self.run
        if run is None:
            return
        run.total_steps = state.max_steps or run.total_steps
        run.step = state.global_step  # progress between logs; values come with on_log
        if (
            args.world_size == 1 and run.should_save
        ):  # a viewer's s: the Trainer's own checkpoint (output_dir/checkpoint-N)
            control.should_save = True
            run.note(f"checkpoint asked: the Trainer saves step {state.global_step} in {args.output_dir}")
        if run.should_stop:
            control.should_training_stop = True

    def on_log(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        logs: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        if self.run is None or not logs:
            return
        if any(k.startswith("eval_") for k in logs) or "train_runtime" in logs:
            return  # evaluation comes through on_evaluate; the closing summary is not a point
        values = _scalars(logs)
        now = time.perf_counter()
        if self.tokens_per_step and self._rate_from is not None and now > self._rate_from[1]:
            steps = state.global_step - self._rate_from[0]
            values["tokens_per_s"] = steps * self.tokens_per_step / (now - self._rate_from[1])
        self._rate_from = (state.global_step, now)
        if values:
            self.run.log(step=state.global_step, **values)

    def on_evaluate(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        metrics: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        if self.run is None or not metrics:
            return
        self._evals += 1
        self.run.log_epoch(epoch=self._evals, **_scalars(metrics))

    def on_train_end(
        self,
        args: transformers.TrainingArguments,
        state: transformers.TrainerState,
        control: transformers.TrainerControl,
        **kwargs: Any,
    ) -> None:
        if self.run is not None:
            self.run.finish()
            self.run = None


def _settings(args: transformers.TrainingArguments) -> dict[str, object]:
    keys = ("learning_rate", "per_device_train_batch_size", "max_steps", "num_train_epochs", "weight_decay")
    return {key: getattr(args, key) for key in keys if hasattr(args, key)}
