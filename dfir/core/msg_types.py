"""`msg_type_register`: user message types that cross feed, fetch and UDFs as their own bytes.

    df.msg_type_register.register(1026, Point, serialize_func, deserialize_func)

An object of a registered class travels as a message of its msg type: wherever it crosses from
one process to another (`feed` to a UDF, a UDF to the next on another device, a UDF to `fetch`)
the runtime's message codec stores `serialize_func(obj)` (bytes) with the msg type, and the
receiving side gets `deserialize_func(bytes)`. Within one process the object is passed as it is.
An object of any other class travels pickled (cloudpickle; msg type 65535, `__PickledMsg__`).
Worker processes start from the driver's state when the model loads: register types before that.
The runtime hands the registry's codec dicts to its native codec (dfir.runtime.driver.model), and
UDF payloads name registered classes by reference (`udf_payload.BY_REFERENCE`), so a UDF shipped
by value still makes and receives the very class the registry's functions know.
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import cloudpickle

from dfir.core import udf_payload
from dfir.core.errors import DfException

PICKLED_MSG = 65535
PICKLED_NAME = "__PickledMsg__"
MAX_MSG_TYPE = 65535  # GE's msg types are 16-bit


def _serialize_with_cloudpickle(obj: Any) -> bytes:
    return cloudpickle.dumps(obj)


def _deserialize_with_cloudpickle(buffer: bytes) -> Any:
    return cloudpickle.loads(buffer)


class MsgTypeRegister:
    """GE's `MsgTypeRegister`: msg type id <-> class, with each type's functions. The runtime
    uses the module's `msg_type_register` (`for_codec`: its classes also ship by reference)."""

    def __init__(self, for_codec: bool = False) -> None:
        self._class_of: dict[int, Any] = {PICKLED_MSG: PICKLED_NAME}
        self._type_of: dict[Any, int] = {PICKLED_NAME: PICKLED_MSG}
        self._serialize: dict[int, Callable[[Any], bytes]] = {PICKLED_MSG: _serialize_with_cloudpickle}
        self._deserialize: dict[int, Callable[[bytes], Any]] = {PICKLED_MSG: _deserialize_with_cloudpickle}
        self._size: dict[int, Callable[[Any], int]] = {}
        # What the native message codec reads: class -> (msg type, serialize_func), msg type ->
        # deserialize_func, for the user types only (the pickled type is the codec's default).
        self.codec_types: dict[type, tuple[int, Callable[[Any], bytes]]] = {}
        self.codec_loaders: dict[int, Callable[[bytes], Any]] = {}
        self._for_codec = for_codec

    def register(self, msg_type: int, clz: Any, serialize_func: Callable[[Any], bytes],
                 deserialize_func: Callable[[bytes], Any], size_func: Callable[[Any], int] | None = None) -> None:
        """Register `clz` as `msg_type`; a DfException when either is registered to another."""
        msg_type = self._checked_type(msg_type)
        for name, func in (("serialize_func", serialize_func), ("deserialize_func", deserialize_func)):
            if not callable(func):
                raise DfException(f"msg_type_register.register: {name} must be callable, got "
                                  f"{type(func).__name__}")
        if msg_type in self._class_of and self._class_of[msg_type] != clz:
            raise DfException(f"msg_type:{msg_type} has been registered, class:{self._class_of[msg_type]}; it "
                              f"cannot also be class:{clz}")
        if clz in self._type_of and self._type_of[clz] != msg_type:
            raise DfException(f"class:{clz} has been registered, msg_type:{self._type_of[clz]}; it cannot also "
                              f"be msg_type:{msg_type}")
        self._class_of[msg_type] = clz
        self._type_of[clz] = msg_type
        self._serialize[msg_type] = serialize_func
        self._deserialize[msg_type] = deserialize_func
        if size_func is not None:
            self._size[msg_type] = size_func
        if isinstance(clz, type) and msg_type != PICKLED_MSG:
            self.codec_types[clz] = (msg_type, serialize_func)
            self.codec_loaders[msg_type] = deserialize_func
            if self._for_codec:  # UDFs shipped by value must still see (and make) this very class
                udf_payload.BY_REFERENCE.add(clz)

    def registered(self, msg_type: int) -> bool:
        return int(msg_type) in self._serialize

    def get_msg_type(self, clz: Any) -> int | None:
        return self._type_of.get(clz)

    def get_serialize_func(self, msg_type: int) -> Callable[[Any], bytes] | None:
        return self._serialize.get(int(msg_type))

    def get_deserialize_func(self, msg_type: int) -> Callable[[bytes], Any] | None:
        return self._deserialize.get(int(msg_type))

    def get_size_func(self, msg_type: int) -> Callable[[Any], int] | None:
        return self._size.get(int(msg_type))

    def deserialize_from_file(self, pkl_file: str, work_path: str | None = None) -> Any:
        """The object cloudpickled into `pkl_file`; `work_path` joins `sys.path` first."""
        if work_path is not None and work_path not in sys.path:
            sys.path.append(work_path)
        with open(pkl_file, "rb") as f:
            return cloudpickle.load(f)

    @staticmethod
    def _checked_type(msg_type: Any) -> int:
        if isinstance(msg_type, bool) or not hasattr(msg_type, "__index__"):
            raise DfException(f"msg_type_register.register: msg_type must be an int, got {msg_type!r}")
        value = int(msg_type)
        if not 0 <= value <= MAX_MSG_TYPE:
            raise DfException(f"msg_type_register.register: msg_type {value} is out of range; a msg type is "
                              f"in [0, {MAX_MSG_TYPE}]")
        return value


msg_type_register = MsgTypeRegister(for_codec=True)

