"""The run folder, torch-free: the contract between a training and any viewer (see docs/run-format.md)."""
