"""``rocmtui.track()``: any training script reports into a run folder that rocmtui's viewers follow.

Standard library and the run-folder layer only: no torch, no Textual. Tensors are duck-typed.
"""

from rocmtui.tracking.run import Run, track

__all__ = ["Run", "track"]
