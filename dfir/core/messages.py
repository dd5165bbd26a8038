"""The message that flows on the runtime's channels, and how UDF values become messages and back.

Every message belongs to a transaction (one feed) whose `TransactionMeta` it carries. It holds a
tensor (a numpy array), a Python object, or nothing (an empty message, e.g. an EOS marker), and a
return code: a message with a non-zero `ret_code` is an *error message* that stands for its
transaction's failed output and says why in `error`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np

from dfir.core.flow_info import FlowInfo
from dfir.core.tensor import Tensor, udf_tensor


class Kind(Enum):
    TENSOR = "tensor"
    # The payload is the Python object itself; a shared-memory channel carries it pickled
    # (cloudpickle, see dfir.runtime.channels) between processes.
    OBJECT = "object"
    EMPTY = "empty"
    RAW = "raw"  # raw bytes a UDF project allocated (`alloc_raw_data_msg`): a 1-D uint8 array


class TypedBytes(bytes):
    """Raw bytes a UDF project sent under a message type of its own (`FlowMsg.set_msg_type`, no
    class registered for it): a `@pyflow` UDF and `fetch` receive them as these bytes, as GE gives
    raw data; a UDF project receives a raw message of `msg_type` again."""

    msg_type: int

    def __new__(cls, data: bytes, msg_type: int) -> TypedBytes:
        typed = super().__new__(cls, data)
        typed.msg_type = msg_type
        return typed

    def __reduce__(self):
        return TypedBytes, (bytes(self), self.msg_type)


@dataclass(frozen=True, slots=True)
class TransactionMeta:
    """What every message of one transaction carries: its id and the feed's `FlowInfo` fields.

    `user_data` holds the bytes the feeder set (`FlowInfo.data_size` of them), not the padding.
    """

    transaction_id: int = 0
    start_time: int = 0
    end_time: int = 0
    flow_flags: int = 0
    user_data: bytes = b""

    @classmethod
    def from_flow_info(cls, info: FlowInfo | None, transaction_id: int) -> TransactionMeta:
        return cls(*transaction_fields(info, transaction_id))

    def to_flow_info(self) -> FlowInfo:
        info = FlowInfo(self.start_time, self.end_time, self.flow_flags, self.transaction_id)
        if self.user_data:
            info.set_user_data(self.user_data)
        return info


def transaction_fields(info: FlowInfo | None, transaction_id: int) -> tuple[int, int, int, int, bytes]:
    """The fields of the `TransactionMeta` of a feed with `info` (None: no FlowInfo), in order."""
    if info is None:
        return transaction_id, 0, 0, 0, b""
    return (transaction_id, info.start_time, info.end_time, info.flow_flags,
            bytes(info.user_data[:info.data_size]))


class MessageError(Exception):
    """Raised to a UDF that reads an error message (from a `FlowMsgQueue`): upstream failed."""

    def __init__(self, message: Message):
        super().__init__(f"transaction {message.meta.transaction_id} failed upstream with code "
                         f"{message.ret_code}: {message.error}")
        self.message = message


@dataclass(frozen=True, slots=True)
class Message:
    meta: TransactionMeta
    kind: Kind
    payload: Any = None
    ret_code: int = 0
    error: str = ""
    # Set by a UDF's BalanceConfig (`set_output(..., balance_config)`), 0 when none: the consumer
    # replica the message is meant for (+1) and its balance position (+1); docs/udf.md "Balance".
    route_label: int = 0
    data_label: int = 0
    # A tensor a UDF returned as a numpy array rather than a `Tensor`. GE carries such a value as a
    # pickled object, so a UDF reading the message and `fetch()` get the array itself, while
    # `fetch_data()` still gets a Tensor; see `udf_value`.
    as_array: bool = False

    @property
    def is_error(self) -> bool:
        return self.ret_code != 0

    @classmethod
    def tensor(cls, meta: TransactionMeta, array: Any) -> Message:
        return new_message(meta, Kind.TENSOR, array if type(array) is np.ndarray else np.asarray(array))

    @classmethod
    def empty(cls, meta: TransactionMeta) -> Message:
        return new_message(meta, Kind.EMPTY, None)

    @classmethod
    def failure(cls, meta: TransactionMeta, ret_code: int, error: str) -> Message:
        assert ret_code != 0, "a failure needs a non-zero return code"
        return cls(meta, Kind.EMPTY, None, ret_code, error)

    @classmethod
    def from_result(cls, meta: TransactionMeta, value: Any) -> Message:
        """A UDF's return value: `Tensor` -> tensor; array, or numpy scalar (what arithmetic on a
        0-d array gives) -> tensor `as_array`; None -> empty; else, a Python number too (GE pickles
        it), object."""
        if type(value) is np.ndarray:  # the common case first: one type check
            return new_array_message(meta, value)
        if isinstance(value, Tensor):
            return cls.tensor(meta, value.numpy())
        if isinstance(value, (np.ndarray, np.generic)):  # a subclass: its plain array
            return new_array_message(meta, np.asarray(value))
        return cls.from_object(meta, value)

    @classmethod
    def from_object(cls, meta: TransactionMeta, value: Any) -> Message:
        """A value fed with `feed`: `Tensor` -> tensor; None -> empty; anything else -> object."""
        if value is None:
            return cls.empty(meta)
        if isinstance(value, Tensor):
            return cls.tensor(meta, value.numpy())
        return cls(meta, Kind.OBJECT, value)

    def value(self) -> Any:
        """The payload (array, object, or None); `MessageError` for an error message."""
        if self.is_error:
            raise MessageError(self)
        return self.payload

    def udf_value(self) -> Any:
        """What a `@pyflow` UDF receives, as GE gives it: a tensor as a `Tensor` over its array (no
        copy), but an array some UDF returned as such (`as_array`) as that array; the object; None
        for an empty message; `MessageError` for an error message."""
        if self.ret_code != 0:
            raise MessageError(self)
        if self.kind is not Kind.TENSOR or self.as_array:
            return self.payload
        return udf_tensor(self.payload)


def _message_factory() -> Any:
    """A constructor of plain messages (no return code, error or labels) that sets the slots
    directly: a frozen dataclass's `__init__` goes through `object.__setattr__` once per field,
    which costs twice as much, on every message of the hot path (UDF results)."""
    new = object.__new__
    set_meta, set_kind, set_payload, set_ret_code, set_error, set_route_label, set_data_label, set_as_array = (
        getattr(Message, name).__set__
        for name in ("meta", "kind", "payload", "ret_code", "error", "route_label", "data_label", "as_array"))
    assert len(dataclasses.fields(Message)) == 8, "a new Message field must be set here too"

    def plain_message(meta: TransactionMeta, kind: Kind, payload: Any, as_array: bool = False) -> Message:
        message = new(Message)
        set_meta(message, meta)
        set_kind(message, kind)
        set_payload(message, payload)
        set_ret_code(message, 0)
        set_error(message, "")
        set_route_label(message, 0)
        set_data_label(message, 0)
        set_as_array(message, as_array)
        return message
    return plain_message


new_message = _message_factory()  # new_message(meta, kind, payload): a plain message, fast


def new_array_message(meta: TransactionMeta, array: np.ndarray) -> Message:
    """The message of an array a UDF returned (a tensor message `as_array`)."""
    return new_message(meta, Kind.TENSOR, array, True)


def udf_argument(message: Message) -> Any:
    """What a `@pyflow` UDF receives for `message`, not an error message (see `Message.udf_value`)."""
    payload = message.payload
    if message.kind is not Kind.TENSOR or message.as_array:
        return payload
    return udf_tensor(payload)
