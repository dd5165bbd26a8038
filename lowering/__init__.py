"""Lowering: the final module becomes `.om` bytes (the execution plan, payloads, weights, IR text)."""
