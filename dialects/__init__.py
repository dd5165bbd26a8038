"""dfir's xDSL dialects: `df` (flow level) and `ge` (tensor level)."""
