"""The GE (tensor-level) side of dfir: graph construction, errors and offline compilation."""
