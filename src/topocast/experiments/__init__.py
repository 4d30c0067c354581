"""Paper reproductions: one module per paper, each registering an Experiment."""
