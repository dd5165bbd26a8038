"""`FlowInfo`: the metadata of one transaction (times, flags, id and up to 64 bytes of user data)."""
from __future__ import annotations

from enum import IntEnum

from dfir.core.errors import GeError


_new_object = object.__new__


class FlowFlag(IntEnum):
    DATA_FLOW_FLAG_EOS = 1 << 0
    DATA_FLOW_FLAG_SEG = 1 << 1


class FlowInfo:
    MAX_USER_DATA_SIZE = 64

    def __init__(self, start_time: int = 0, end_time: int = 0, flow_flags: int = 0,
                 transaction_id: int = 0):
        self.start_time = start_time
        self.end_time = end_time
        self.flow_flags = flow_flags
        self.transaction_id = transaction_id
        self._user_data = bytearray(self.MAX_USER_DATA_SIZE)
        self._data_size = 0

    @classmethod
    def of_fields(cls, start_time: int, end_time: int, flow_flags: int, transaction_id: int,
                  user_data: bytes) -> FlowInfo:
        """A FlowInfo with these fields and `user_data` (at most MAX_USER_DATA_SIZE bytes, not
        checked) set at offset 0, built without the checks of `set_user_data`."""
        info = _new_object(cls)
        info.start_time = start_time
        info.end_time = end_time
        info.flow_flags = flow_flags
        info.transaction_id = transaction_id
        info._user_data = bytearray(user_data.ljust(cls.MAX_USER_DATA_SIZE, b"\0"))
        info._data_size = len(user_data)
        return info

    @property
    def user_data(self) -> bytearray:
        return self._user_data

    @property
    def data_size(self) -> int:
        return self._data_size

    def _check_window(self, size: int, offset: int) -> None:
        if size <= 0 or size > self.MAX_USER_DATA_SIZE:
            raise GeError(f"user data size {size} must be in (0, {self.MAX_USER_DATA_SIZE}]")
        if offset < 0 or offset + size > self.MAX_USER_DATA_SIZE:
            raise GeError(f"user data offset {offset} plus size {size} exceeds "
                          f"{self.MAX_USER_DATA_SIZE} bytes")

    def set_user_data(self, user_data: bytes | bytearray, offset: int = 0) -> None:
        self._check_window(len(user_data), offset)
        self._user_data[offset:offset + len(user_data)] = user_data
        self._data_size = max(self._data_size, offset + len(user_data))

    def get_user_data(self, size: int = 0, offset: int = 0) -> bytearray:
        self._check_window(size, offset)
        return self._user_data[offset:offset + size]

    def __repr__(self) -> str:
        return (f"FlowInfo(start_time={self.start_time}, end_time={self.end_time}, "
                f"flow_flags={self.flow_flags}, transaction_id={self.transaction_id})")
