"""GE's `dataflow.utils.msg_type_register`: the registry of user message types (dfir.core.msg_types)."""
from dfir.core.msg_types import MsgTypeRegister, msg_type_register

__all__ = ["MsgTypeRegister", "msg_type_register"]
