"""Runtime return codes (GE's values) and `RetCode`, the return code that also says what happened.

A failed UDF transaction comes back with the UDF's code (`FLOW_FUNC_FAILED` = 564000 for an
exception, see `dfir.frontend.flow_func.status`; a `DfException`'s `error_code`); the codes below
are the runtime's own.
"""
from __future__ import annotations

# GE's codes (dfir.core.errors). A feed or fetch that cannot be served as asked returns one, as
# GE's does, its reason logged and kept on the RetCode: PARAM_INVALID (a missing or unknown input,
# a bad flow_info, timeout or output index, `fetch_data` of an output holding a Python object),
# SHAPE_INVALID (a tensor of the wrong shape), DATATYPE_INVALID (a value of the wrong type).
from dfir.core.errors import ABORT_MARK, DATATYPE_INVALID, PARAM_INVALID, SHAPE_INVALID, SUCCESS  # noqa: F401
# ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT: GE reports feed and fetch timeouts with the same code.
MODEL_EXECUTE_TIMEOUT = 545601
FEED_TIMEOUT = MODEL_EXECUTE_TIMEOUT   # feed_data / feed found no room in the input channels in time
FETCH_TIMEOUT = MODEL_EXECUTE_TIMEOUT  # fetch_data / fetch got no complete result in time


class RetCode(int):
    """A return code that compares as the plain int (`ret == 564000`) and explains itself.

    `message` is empty on success and otherwise says what failed: for a failed transaction the
    node, the func and the exception text. `str()` is the number; `repr()` adds the message.
    """

    message: str

    def __new__(cls, code: int, message: str = "") -> RetCode:
        ret = super().__new__(cls, code)
        object.__setattr__(ret, "message", message)
        return ret

    def __setattr__(self, name: str, value: object) -> None:
        # Immutable like the int it is: one success code is shared by every fetch.
        raise AttributeError(f"RetCode is immutable; cannot set '{name}'")

    def __repr__(self) -> str:  # a bare number on success, as GE's code would print
        return f"RetCode({int(self)}, {self.message!r})" if self.message else str(int(self))

    def __str__(self) -> str:
        return str(int(self))
