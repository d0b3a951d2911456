"""Neutral helpers every layer may use: units, number formatting, the text boundary. Stdlib only."""
