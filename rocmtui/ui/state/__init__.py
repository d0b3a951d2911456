"""What the screens know, folded from events and samples: plain Python that widgets read."""
