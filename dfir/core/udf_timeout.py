"""The timeout of a UDF node's calls: what bounds it, and how a UDF project's compile config
carries it into the IR (the `project` fact `udf_timeout_ms` of its `df.func_pp`)."""
from __future__ import annotations

MAX_UDF_TIMEOUT_MS = 86_400_000
"""A UDF call's timeout is 1 ms to a day."""
UDF_TIMEOUT_FACT = "udf_timeout_ms"
"""The UDF project fact holding its compile config's `udf_timeout_ms`, in decimal."""


def udf_timeout_problem(milliseconds: int) -> str | None:
    """What is wrong with `milliseconds` as a UDF call's timeout (None: nothing)."""
    if 1 <= milliseconds <= MAX_UDF_TIMEOUT_MS:
        return None
    return f"expected a timeout in [1, {MAX_UDF_TIMEOUT_MS}] (milliseconds)"
