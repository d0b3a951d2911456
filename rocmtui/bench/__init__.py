"""``rocmtui bench``: the engine against the ROCm guide's reference loop, and anchors written by other programs."""
