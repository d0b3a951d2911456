"""rocmtui: train PyTorch models live in the terminal and watch the GPU while they train."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("rocmtui")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
