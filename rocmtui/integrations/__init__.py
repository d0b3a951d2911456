"""Thin adapters from training frameworks to ``rocmtui.track()``; each imports its library lazily."""
