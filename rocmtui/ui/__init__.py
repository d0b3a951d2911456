"""The terminal user interface: textual and textual-plotext only (never torch, never vendor libraries)."""
