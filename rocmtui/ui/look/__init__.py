"""How things look: number and bar formats, colours by severity, braille graphs, themes, outside text as plain text."""
