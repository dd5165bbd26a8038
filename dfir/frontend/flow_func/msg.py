"""`FlowMsg`: a message as a UDF project reads and writes it, and `MsgType`.

A FlowMsg holds a tensor (`get_tensor()` is a `dfir.frontend.flow_func.tensor.Tensor` whose `numpy()` is the
message's array, so writing into it fills the message), raw bytes (`get_raw_data()`: a writable
uint8 array), a Python object, or nothing; plus the return code and the transaction's metadata,
all readable and writable. Messages a UDF allocates start with the metadata of the transaction
being processed. The runtime turns its messages into FlowMsgs and back (`from_message`,
`to_message`); a FlowMsg with a non-zero return code becomes that transaction's error.
"""
from __future__ import annotations

from dataclasses import replace
from enum import IntEnum
from typing import Any, Callable

import numpy as np

from dfir.core import tensor as user_tensor
from dfir.core.messages import Kind, Message, TransactionMeta, TypedBytes, new_message
from dfir.core.msg_types import msg_type_register
from dfir.frontend.flow_func.tensor import Tensor


class MsgType(IntEnum):
    """GE's message types (`get_msg_type()`), under GE's names (`MSG_TYPE_TENSOR_DATA`) and the
    short ones (`TENSOR_DATA`). A user type (`set_msg_type(1024 + n)`) is a member too: any
    value in [0, 65535] converts, as GE's uint16 message type does."""

    MSG_TYPE_TENSOR_DATA = 0
    MSG_TYPE_RAW_MSG = 1
    MSG_TYPE_TORCH_TENSOR_MSG = 1023
    MSG_TYPE_USER_DEFINE_START = 1024
    MSG_TYPE_PICKLED_MSG = 65535
    TENSOR_DATA = 0
    RAW_MSG = 1
    TORCH_TENSOR_MSG = 1023
    USER_DEFINE_START = 1024
    PICKLED_MSG = 65535

    @classmethod
    def _missing_(cls, value):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_MSG_TYPE:
            return None
        member = int.__new__(cls, value)
        member._name_ = f"MSG_TYPE_{value}"
        member._value_ = value
        return cls._value2member_map_.setdefault(value, member)


class FlowFlag(IntEnum):
    """GE's flow flags of a message (`get_flow_flags()` / `set_flow_flags()`), a bit set."""

    FLOW_FLAG_EOS = 1 << 0
    FLOW_FLAG_SEG = 1 << 1


FLOW_FLAG_EOS = FlowFlag.FLOW_FLAG_EOS
FLOW_FLAG_SEG = FlowFlag.FLOW_FLAG_SEG
MAX_MSG_TYPE = 65535
MSG_TYPE_TENSOR_DATA = MsgType.MSG_TYPE_TENSOR_DATA
MSG_TYPE_RAW_MSG = MsgType.MSG_TYPE_RAW_MSG
MSG_TYPE_TORCH_TENSOR_MSG = MsgType.MSG_TYPE_TORCH_TENSOR_MSG
MSG_TYPE_USER_DEFINE_START = MsgType.MSG_TYPE_USER_DEFINE_START
MSG_TYPE_PICKLED_MSG = MsgType.MSG_TYPE_PICKLED_MSG


_TYPE_OF_KIND = {Kind.TENSOR: MsgType.TENSOR_DATA, Kind.RAW: MsgType.RAW_MSG,
                 Kind.OBJECT: MsgType.PICKLED_MSG, Kind.EMPTY: MsgType.TENSOR_DATA}
_NO_META = TransactionMeta()
_new_object = object.__new__


class FlowMsg:
    """See the module docstring. UDFs get FlowMsgs from the runtime or `MetaRunContext.alloc_*`.

    It keeps its transaction's `TransactionMeta` as it came (a setter replaces it), so that a
    message passed through unchanged costs no new metadata on its way back to the runtime. A
    tensor message keeps its array and makes the `Tensor` view of it when first asked for one;
    from then on the view holds the message's array (`Tensor.reshape` replaces it)."""

    __slots__ = ("_kind", "_payload", "_tensor", "_msg_type", "_ret_code", "_meta", "_route_label", "_data_label")

    def __init__(self, kind: Kind, payload: Any = None, meta: TransactionMeta = _NO_META,
                 ret_code: int = 0, msg_type: MsgType | None = None):
        self._kind = kind
        self._tensor = _tensor_view(payload) if kind is Kind.TENSOR else None
        self._payload = payload if self._tensor is None else None
        self._msg_type = None if msg_type is None else MsgType(msg_type)  # None: the kind's (get_msg_type)
        self._ret_code = ret_code
        self._meta = meta
        self._route_label = 0
        self._data_label = 0

    def __repr__(self) -> str:
        return (f"FlowMsg({self.get_msg_type().name}, ret_code={self._ret_code}, "
                f"transaction_id={self._meta.transaction_id})")

    # -- content --------------------------------------------------------------------------------

    def get_msg_type(self) -> MsgType:
        return _TYPE_OF_KIND[self._kind] if self._msg_type is None else self._msg_type

    def set_msg_type(self, msg_type: int) -> None:
        """Mark the message with a type (GE's uint16: a `MSG_TYPE_*` or a user type >= 1024).
        The content stays what it is; a consumer reads the type to know how to decode it."""
        if not isinstance(msg_type, int) or isinstance(msg_type, bool) or not 0 <= msg_type <= MAX_MSG_TYPE:
            raise TypeError(f"set_msg_type: msg_type must be an int in [0, {MAX_MSG_TYPE}], got {msg_type!r}")
        self._msg_type = MsgType(msg_type)

    def get_tensor(self) -> Tensor | None:
        """The tensor of a tensor message (its `numpy()` is the message's array), else None."""
        if self._kind is not Kind.TENSOR:
            return None
        if self._tensor is None:
            self._tensor = Tensor(self._payload)
        return self._tensor

    def get_raw_data(self) -> np.ndarray | None:
        """The bytes of a raw data message as a writable uint8 array, else None."""
        return self._payload if self._kind is Kind.RAW else None

    def get_object(self) -> Any:
        """The Python object of a pickled message (`fetch`/`feed` objects), else None."""
        return self._payload if self._kind is Kind.OBJECT else None

    # -- metadata -------------------------------------------------------------------------------

    def get_ret_code(self) -> int:
        return self._ret_code

    def set_ret_code(self, ret_code: int) -> None:
        self._ret_code = int(ret_code)

    def get_transaction_id(self) -> int:
        return self._meta.transaction_id

    def set_transaction_id(self, transaction_id: int) -> None:
        self._meta = replace(self._meta, transaction_id=int(transaction_id))

    def get_start_time(self) -> int:
        return self._meta.start_time

    def set_start_time(self, start_time: int) -> None:
        self._meta = replace(self._meta, start_time=int(start_time))

    def get_end_time(self) -> int:
        return self._meta.end_time

    def set_end_time(self, end_time: int) -> None:
        self._meta = replace(self._meta, end_time=int(end_time))

    def get_flow_flags(self) -> int:
        return self._meta.flow_flags

    def set_flow_flags(self, flow_flags: int) -> None:
        self._meta = replace(self._meta, flow_flags=int(flow_flags))

    def set_route_label(self, route_label: int) -> None:
        """Which replica of the consumer gets this message (0: none; see `BalanceConfig`)."""
        self._route_label = int(route_label)

    def get_route_label(self) -> int:
        return self._route_label

    def get_data_label(self) -> int:
        """The balance position + 1 this message was sent with (0: none)."""
        return self._data_label

    # -- runtime side ---------------------------------------------------------------------------

    @classmethod
    def from_message(cls, message: Message) -> FlowMsg:
        """The FlowMsg a UDF receives for a runtime message (which it may modify freely); what
        `cls(message.kind, message.payload, message.meta, message.ret_code)` with the message's
        labels builds, without `__init__`'s conversions (a runtime message needs none)."""
        msg = _new_object(cls)
        msg._kind = message.kind
        msg._payload = message.payload
        msg._tensor = msg._msg_type = None
        msg._ret_code = message.ret_code
        msg._meta = message.meta
        msg._route_label, msg._data_label = message.route_label, message.data_label
        if message.kind is Kind.OBJECT:
            _as_typed_raw(msg)
        return msg

    @classmethod
    def of_array(cls, array: np.ndarray, meta: TransactionMeta) -> FlowMsg:
        """A tensor message of `array` (an ndarray, not copied) in the transaction `meta`: what
        `cls(Kind.TENSOR, array, meta)` builds, without its conversions."""
        msg = _new_object(cls)
        msg._kind = Kind.TENSOR
        msg._payload = array
        msg._tensor = msg._msg_type = None
        msg._ret_code = msg._route_label = msg._data_label = 0
        msg._meta = meta
        return msg

    def meta(self) -> TransactionMeta:
        return self._meta

    def set_labels(self, data_label: int, route_label: int) -> None:
        self._data_label, self._route_label = data_label, route_label

    def to_message(self, error: str, plain: Callable[[TransactionMeta, Kind, Any], Message] = new_message) -> Message:
        """The runtime message of this FlowMsg; `error` explains a non-zero return code. `plain`
        makes a message without return code or labels (a runtime may give a faster one)."""
        meta = self._meta
        if self._ret_code != 0:
            return Message.failure(meta, self._ret_code, error)
        kind, payload = self._kind, self._payload if self._tensor is None else self._tensor.numpy()
        if kind is Kind.RAW and self._msg_type is not None and self._msg_type >= MsgType.USER_DEFINE_START:
            kind, payload = Kind.OBJECT, typed_object(int(self._msg_type), payload)
        if not self._route_label and not self._data_label:
            return plain(meta, kind, payload)
        return Message(meta, kind, payload, route_label=self._route_label, data_label=self._data_label)


def is_user_msg_type(msg_type: int) -> bool:
    """Whether a raw message of `msg_type` carries a user type (travels as `typed_object`)."""
    return MsgType.USER_DEFINE_START <= msg_type != MsgType.PICKLED_MSG


def typed_object(msg_type: int, raw: Any) -> Any:
    """What a raw message of user type `msg_type` (bytes of `raw`: an array or a buffer) travels
    as: the object its registered deserialize_func makes of the bytes, else the bytes with their
    type (`TypedBytes`)."""
    deserialize = msg_type_register.get_deserialize_func(msg_type)
    data = raw.tobytes() if isinstance(raw, np.ndarray) else bytes(raw)
    return TypedBytes(data, msg_type) if deserialize is None else deserialize(data)


def typed_raw(payload: Any) -> tuple[int, bytes] | None:
    """The (msg type, bytes) an object message's `payload` reaches a UDF project with as a raw
    message, as GE gives an object that has a message type of its own: `TypedBytes`, or a
    registered class's serialize_func of the object; None for other objects (pickled messages)."""
    if isinstance(payload, TypedBytes):
        return payload.msg_type, bytes(payload)
    msg_type = msg_type_register.get_msg_type(type(payload))
    if msg_type is None or msg_type == MsgType.PICKLED_MSG:
        return None
    data = msg_type_register.get_serialize_func(msg_type)(payload)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"the serialize_func of msg type {msg_type} returned {type(data).__name__}, not bytes")
    return msg_type, bytes(data)


def _as_typed_raw(msg: FlowMsg) -> None:
    """Give a UDF project an object message as `typed_raw` says; other objects stay pickled
    messages (`get_object`)."""
    typed = typed_raw(msg._payload)
    if typed is not None:
        msg_type, data = typed
        msg._kind, msg._payload, msg._msg_type = Kind.RAW, np.frombuffer(bytearray(data), np.uint8), MsgType(msg_type)


def _tensor_view(payload: Any) -> Tensor:
    if type(payload) is np.ndarray:  # what the runtime hands over: the common case first
        return Tensor(payload)
    if isinstance(payload, Tensor):
        return payload
    if isinstance(payload, user_tensor.Tensor):
        return Tensor(payload.numpy())
    return Tensor(np.asarray(payload))
