"""`FLOW_FUNC_*` status codes, with GE's values."""

FLOW_FUNC_SUCCESS = 0
FLOW_FUNC_ERR_PARAM_INVALID = 164000
FLOW_FUNC_ERR_ATTR_NOT_EXITS = 164001
FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH = 164002
FLOW_FUNC_ERR_DATA_ALIGN_FAILED = 364000
FLOW_FUNC_FAILED = 564000
FLOW_FUNC_ERR_TIME_OUT_ERROR = 564001
FLOW_FUNC_ERR_NOT_SUPPORT = 564002
FLOW_FUNC_STATUS_REDEPLOYING = 564003
FLOW_FUNC_STATUS_EXIT = 564004
FLOW_FUNC_ERR_DRV_ERROR = 564100
FLOW_FUNC_ERR_MEM_BUF_ERROR = 564101
FLOW_FUNC_ERR_QUEUE_ERROR = 564102
FLOW_FUNC_ERR_EVENT_ERROR = 564103
FLOW_FUNC_ERR_USER_DEFINE_START = 9900000
FLOW_FUNC_ERR_USER_DEFINE_END = 9999999

__all__ = [name for name in dir() if name.startswith("FLOW_FUNC_")]

_NAMES = {value: name for name, value in globals().items() if name.startswith("FLOW_FUNC_")
          and not name.startswith("FLOW_FUNC_ERR_USER_DEFINE")}


def status_name(code) -> str:
    """How errors name a return code: ``FLOW_FUNC_FAILED (564000)``, ``9900001 (user-defined)``."""
    if not isinstance(code, int) or isinstance(code, bool):
        return f"{code!r}, which is no FLOW_FUNC_* status code (an int)"
    if code in _NAMES:
        return f"{_NAMES[code]} ({code})"
    if FLOW_FUNC_ERR_USER_DEFINE_START <= code <= FLOW_FUNC_ERR_USER_DEFINE_END:
        return f"{code} (user-defined)"
    return str(code)
