"""The fast recipe with no brightness and contrast jitter in its last epochs, as a trial over seeds.

``--plain-from-epoch E``: no jitter from epoch E (0-based) on. The draws are still made and multiplied by 0, so
the generator and every other draw stay as in the recipe. The product's code stays as it is until a trial shows
a gain; the rest of the arguments go to ``recipe_seeds.py``:

    python scripts/jitter_trial.py --plain-from-epoch 7 -- --seeds 20 --first-seed 10 --data-dir ~/c10
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import recipe_seeds
import torch

from rocmtui.train import engine, gpudata


def plain_from(first_plain: int) -> None:
    """The epochs from ``first_plain`` on drawn with their jitter multiplied by 0."""
    real_epoch = engine.Augmenter.epoch
    real_draws = gpudata.jitter_draws

    def zeroed(*args: Any) -> torch.Tensor:
        return real_draws(*args).mul_(0.0)

    def epoch(self: engine.Augmenter, images: torch.Tensor, order: torch.Tensor, number: int) -> torch.Tensor:
        if number < first_plain:
            return real_epoch(self, images, order, number)
        gpudata.jitter_draws = zeroed
        try:
            return real_epoch(self, images, order, number)
        finally:
            gpudata.jitter_draws = real_draws

    engine.Augmenter.epoch = epoch  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plain-from-epoch", type=int, required=True, help="the first epoch (0-based) without jitter")
    parser.add_argument("seeds_args", nargs=argparse.REMAINDER, help="recipe_seeds.py's arguments, after --")
    args = parser.parse_args()
    plain_from(args.plain_from_epoch)
    print(f"trial: no jitter from epoch {args.plain_from_epoch} (0-based)", flush=True)
    rest = args.seeds_args[1:] if args.seeds_args[:1] == ["--"] else args.seeds_args
    sys.argv = [sys.argv[0], *rest]
    return recipe_seeds.main()


if __name__ == "__main__":
    raise SystemExit(main())
