"""Prometheus metrics of the GPUs and of the live runs: ``rocmtui export`` (prometheus_client, no torch, no textual)."""
