"""`GeError`: the one exception family of every user-facing failure."""
from dfir.core.errors import GeError  # noqa: F401

__all__ = ["GeError"]
