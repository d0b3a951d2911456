"""GPU and host telemetry: stdlib, psutil and the vendor libraries only (never textual, never torch)."""
