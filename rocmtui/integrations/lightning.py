"""``RocmtuiCallback`` for Lightning: ``Trainer(callbacks=[RocmtuiCallback()])`` and the run reports in.

Global rank zero reports the run; with several ranks (DDP) every rank calls ``track()`` in
``on_fit_start`` (a collective, through Lightning's process group) and writes its own progress to the
run folder's ``ranks/``. Every scalar in
``trainer.callback_metrics`` is logged at each batch end (tensors, converted a few times a second by
``track()``), validation values at each validation end, and the run ends with the fit. A viewer's
stop ends the fit at the next batch (``trainer.should_stop``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rocmtui.tracking import Run, track

if TYPE_CHECKING:
    import lightning.pytorch as pl
else:  # the library is optional: loaded when this module is, never by ``import rocmtui``
    import lightning.pytorch as pl


def _scalars(metrics: Mapping[str, Any], *, skip_prefix: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in metrics.items():
        if name.startswith(skip_prefix):
            continue
        if isinstance(value, int | float) or getattr(value, "ndim", None) == 0:
            out[name.replace("/", "_")] = value
    return out


class RocmtuiCallback(pl.Callback):
    """Reports a Lightning fit through ``rocmtui.track()``."""

    def __init__(self, name: str | None = None, *, config: Mapping[str, object] | None = None) -> None:
        super().__init__()
        self.name = name
        self.config = config
        self.run: Run | None = None

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        hparams = dict(self.config or getattr(pl_module, "hparams", {}) or {})
        total = trainer.estimated_stepping_batches
        total_steps = int(total) if isinstance(total, int | float) and total != float("inf") else None
        self.run = track(
            self.name,
            config=hparams,
            total_steps=total_steps,
            rank=trainer.global_rank,
            world_size=trainer.world_size,
            saves=trainer.world_size == 1,  # saving is a collective with several ranks; only rank 0 hears s
        )

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        run = self.run
        if run is None:
            return
        values = _scalars(trainer.callback_metrics, skip_prefix=("val", "test"))
        loss = outputs.get("loss") if isinstance(outputs, Mapping) else outputs
        if loss is not None and getattr(loss, "ndim", None) == 0 and not any("loss" in k for k in values):
            values["loss"] = loss  # the step's loss, when the module logs none itself
        run.log(step=trainer.global_step, **values)
        if trainer.world_size == 1 and run.should_save:  # a viewer's s: Lightning's own checkpoint, in the run folder
            path = run.run_dir / f"checkpoint-step-{trainer.global_step}.ckpt"
            trainer.save_checkpoint(path)
            run.note(f"checkpoint saved: {path}")
        if run.should_stop:
            trainer.should_stop = True

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.run is None or trainer.sanity_checking:
            return
        values = {k: v for k, v in _scalars(trainer.callback_metrics).items() if k.startswith("val")}
        if values:
            self.run.log_epoch(epoch=trainer.current_epoch + 1, **values)

    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if self.run is not None:
            self.run.finish(interrupted=bool(getattr(trainer, "interrupted", False)))
            self.run = None

    def on_exception(self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException) -> None:
        if self.run is not None:
            if isinstance(exception, KeyboardInterrupt):
                self.run.finish(interrupted=True)
            else:
                self.run.fail(exception)
            self.run = None
