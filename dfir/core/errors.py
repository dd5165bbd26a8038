"""The one exception family of dfir: every user-facing failure is a `GeError`.

`DfException` and `DfAbortException` are GE DataFlow's exceptions (`dataflow.DfException`): a
`GeError` that also carries GE's `error_code` (the return codes below, GE's values) and `message`.
A UDF may raise them: a `DfException` fails its transaction with the exception's `error_code`, a
`DfAbortException` stops the model (docs/udf.md, "Errors").
"""
from __future__ import annotations

# GE's return codes (ge_error_codes.h; GE's `dataflow` exports them from its wrapper module).
SUCCESS = 0
PARAM_INVALID = 145000     # ACL_ERROR_GE_PARAM_INVALID: an argument is invalid
NOT_INIT = 145001          # ACL_ERROR_GE_EXEC_NOT_INIT: dataflow is not initialized
SHAPE_INVALID = 145021     # ACL_ERROR_GE_SHAPE_INVALID: a fed tensor has the wrong shape
DATATYPE_INVALID = 145022  # ACL_ERROR_GE_DATATYPE_INVALID: a fed tensor has the wrong data type
SUBHEALTHY = 345102        # ACL_ERROR_GE_SUBHEALTHY: a fetch that succeeded on a degraded model
INNER_ERROR = 545000       # ACL_ERROR_GE_INTERNAL_ERROR: an internal failure
FAILED = 0xFFFFFFFF        # GE's C++ layer failed
# How the error text of a transaction a UDF aborted (`DfAbortException`) begins: the driver stops
# the model when it fetches one.
ABORT_MARK = "the model was aborted by "


class GeError(RuntimeError):
    """A failure a user can act on.

    `error_message` says what is wrong and what was expected; `api_name` names the entry point
    that failed (``"dfir.load"``, ``"BuildModel"``, ...) and `context` carries the key/value
    facts that locate the problem (node, option, file, JSON path, IR location).
    """

    def __init__(self, error_message: str, api_name: str = "", context: dict[str, str] | None = None):
        self.error_message = error_message
        self.api_name = api_name
        self.context = dict(context or {})
        super().__init__(self._render())

    def _render(self) -> str:
        parts = [f"{self.api_name} failed" if self.api_name else ""]
        parts += [f"{k}={v}" for k, v in self.context.items()]
        parts.append(self.error_message)
        return "; ".join(p for p in parts if p)


class DfException(GeError):
    """GE's `DfException(obj, error_code=PARAM_INVALID)`: `message` (the text of `obj`) and
    `error_code` as GE's, printed as GE prints it (``DfException:145000:message``)."""

    def __init__(self, obj: object, error_code: int | None = None, api_name: str = "",
                 context: dict[str, str] | None = None):
        self.error_code = PARAM_INVALID if error_code is None else error_code
        super().__init__(str(obj), api_name, context)
        self.message = self._render()

    def __str__(self) -> str:
        return f"DfException:{self.error_code}:{self.message}"

    def __repr__(self) -> str:
        return str(self)


class DfAbortException(DfException):
    """GE's `DfAbortException`: raised in a UDF, it stops the model."""
