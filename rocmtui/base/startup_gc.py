"""The cyclic garbage collector, paused while a process starts.

Starting allocates hundreds of thousands of objects that live as long as the process (the modules and classes of
torch or Textual); with the collector on, the imports pay for passes that free none of them. On the 2-core CPU
box, ``import torch`` takes 1.25 to 1.38 s with the collector and 1.10 to 1.23 s without; Textual's app and
rocmtui's UI, 0.18 to 0.24 s against 0.16 to 0.18 s (BENCHMARKS.md). The entry points (``rocmtui``,
``python -m rocmtui``, the trainer process) pause it before they import anything; ``resume`` is called once the
start is over: the first frame drawn, the training's first step ready, or at once for any other command.
"""

from __future__ import annotations

import gc


def pause() -> None:
    gc.disable()


def resume() -> None:
    """Collect again, with what the start built moved out of the collector's sight (``gc.freeze``): those
    objects live for the whole session, so later passes need not walk them. A no-op when it was never paused."""
    if gc.isenabled():
        return
    gc.freeze()
    gc.enable()
