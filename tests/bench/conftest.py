"""Shared fixtures for the tests of rocmtui bench: a private dataset cache."""

from __future__ import annotations

from training_fixtures import private_cache

__all__ = ["private_cache"]
