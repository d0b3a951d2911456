"""Telemetry of many machines at once, read from the Prometheus exporters they already run."""
