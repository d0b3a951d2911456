"""What leaves rocmtui for other tools: Prometheus metrics of the GPUs and of the live runs (``rocmtui export``,
prometheus_client) and a run's card (``rocmtui runs RUN --card``, plain SVG). No torch, no textual."""
