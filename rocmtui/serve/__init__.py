"""``rocmtui serve``: the app in a browser, behind a token and an Origin check (textual-serve)."""
