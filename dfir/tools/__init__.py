"""Command-line tools: `dfir-opt` and `dfir`."""
