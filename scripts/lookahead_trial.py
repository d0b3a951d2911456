"""Lookahead weight averaging (airbench94's, the SGD recipe's) on a recipe, as a trial over seeds.

airbench94 keeps an average of the weights and pulls the weights back onto it: from epoch ``--start-epoch`` on,
every ``--every`` steps ``average.lerp_(weights, 1 - rho)`` then ``weights.copy_(average)``, with
``rho = base ** every * (step / total) ** power`` (moving fast early, averaging strongly at the end), and at
each epoch's end the weights are set to the average. airbench94_muon, whose design the fast recipe follows,
left it out. This script patches it into the step loop from outside (``EpochLoop`` and its ``set_lr``), so
that the product's loop stays as it is until a trial shows a gain, and runs ``recipe_seeds.py`` with the rest
of its arguments. Its updates are queued on the stream like the steps, so their time is in the run's clock.

    python scripts/lookahead_trial.py --start-epoch 3 -- --seeds 20 --first-seed 10 --data-dir ~/c10
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

import recipe_seeds
import torch

from rocmtui.train import epochs
from rocmtui.train.engine import Engine


class Lookahead:
    """The average of a model's floating-point state (parameters and BatchNorm statistics) and its pull."""

    def __init__(self, engine: Engine, start_step: int, every: int, base: float, power: float) -> None:
        self.state = [t for t in engine.model.state_dict().values() if t.is_floating_point()]
        self.average: list[torch.Tensor] | None = None
        self.start_step, self.every, self.base, self.power = start_step, every, base, power

    def at_step(self, step: int, total: int) -> None:
        """Before step ``step`` runs (``step`` steps done)."""
        if step < self.start_step or step % self.every:
            return
        if self.average is None:
            self.average = [t.detach().clone() for t in self.state]
            return
        rho = self.base**self.every * (step / total) ** self.power
        torch._foreach_lerp_(self.average, self.state, 1.0 - rho)
        torch._foreach_copy_(self.state, self.average)

    def at_epoch_end(self) -> None:
        if self.average is not None:
            torch._foreach_copy_(self.state, self.average)


def install(start_epoch: int, every: int, base: float, power: float) -> None:
    """Patch the step loop: each run gets its own ``Lookahead``."""
    current: dict[str, Lookahead] = {}
    real_init: Callable[..., None] = epochs.EpochLoop.__init__
    real_end: Callable[..., Any] = epochs.EpochLoop._end_epoch
    real_set_lr = epochs.set_lr

    def init(self: epochs.EpochLoop, engine: Engine, *args: Any, **kwargs: Any) -> None:
        real_init(self, engine, *args, **kwargs)
        steps = engine.batching.steps_per_epoch
        current["run"] = Lookahead(engine, start_epoch * steps, every, base, power)

    def end_epoch(self: epochs.EpochLoop, *args: Any) -> Any:
        current["run"].at_epoch_end()
        return real_end(self, *args)

    def set_lr(optimizer: Any, config: Any, step: int, total_steps: int) -> None:
        real_set_lr(optimizer, config, step, total_steps)
        current["run"].at_step(step, total_steps)

    epochs.EpochLoop.__init__ = init  # type: ignore[method-assign]
    epochs.EpochLoop._end_epoch = end_epoch  # type: ignore[method-assign]
    epochs.set_lr = set_lr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start-epoch", type=int, default=3)
    parser.add_argument("--every", type=int, default=5, help="steps between pulls")
    parser.add_argument("--base", type=float, default=0.95, help="the decay per step at the end")
    parser.add_argument("--power", type=float, default=3.0, help="how the decay grows over the run")
    parser.add_argument("seeds_args", nargs=argparse.REMAINDER, help="recipe_seeds.py's arguments, after --")
    args = parser.parse_args()
    install(args.start_epoch, args.every, args.base, args.power)
    print(f"lookahead from epoch {args.start_epoch}, every {args.every} steps, {args.base} ** {args.every} "
          f"* (step / total) ** {args.power}", flush=True)  # fmt: skip
    rest = args.seeds_args[1:] if args.seeds_args[:1] == ["--"] else args.seeds_args
    sys.argv = [sys.argv[0], *rest]
    return recipe_seeds.main()


if __name__ == "__main__":
    raise SystemExit(main())
