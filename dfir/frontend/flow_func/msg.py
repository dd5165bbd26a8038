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
from dfir.core.messages import Kind, Message, TransactionMeta, new_message
from dfir.frontend.flow_func.tensor import Tensor


class MsgType(IntEnum):
    """GE's message types (`get_msg_type()`)."""

    TENSOR_DATA = 0
    RAW_MSG = 1
    USER_DEFINE_START = 1024
    PICKLED_MSG = 65535


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
        payload = self._payload if self._tensor is None else self._tensor.numpy()
        if not self._route_label and not self._data_label:
            return plain(meta, self._kind, payload)
        return Message(meta, self._kind, payload, route_label=self._route_label,
                       data_label=self._data_label)


def _tensor_view(payload: Any) -> Tensor:
    if type(payload) is np.ndarray:  # what the runtime hands over: the common case first
        return Tensor(payload)
    if isinstance(payload, Tensor):
        return payload
    if isinstance(payload, user_tensor.Tensor):
        return Tensor(payload.numpy())
    return Tensor(np.asarray(payload))
