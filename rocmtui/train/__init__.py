"""The training engine: torch and torchvision only (never textual)."""
