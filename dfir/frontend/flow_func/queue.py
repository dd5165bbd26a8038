"""`FlowMsgQueue`: what a stream-input func (`stream_input='Queue'`) receives for each input."""
from __future__ import annotations

import queue
from typing import Any, Callable, Protocol

from dfir.core.errors import GeError
from dfir.core.messages import Message


class MessageSource(Protocol):
    """The runtime side of one input channel."""

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        """The next message; `queue.Empty` if none arrives in time (or at once, unblocked)."""

    def pending(self) -> int:
        """How many messages are waiting."""


class FlowMsgQueue(queue.Queue):
    """The read side of one input channel, filled by the runtime.

    `get()` blocks until the next message and returns its value as a plain func would receive
    it: a numpy array for a tensor, the object for an object message, None for an empty one.
    Reading an upstream error raises `dfir.core.messages.MessageError`; left unhandled, the
    runtime forwards that error as this call's outputs. `get(timeout=s)` / `get_nowait()` raise
    `queue.Empty` like `queue.Queue`. A UDF cannot `put` into it. A UDF project's stream input
    passes `convert=FlowMsg.from_message`: its `get()` returns each message as a `FlowMsg`,
    errors included (read `get_ret_code()`).
    """

    def __init__(self, source: MessageSource, convert: Callable[[Message], Any] = Message.value):
        super().__init__()
        self._source = source
        self._convert = convert

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        return self._convert(self._source.take(block, timeout))

    def get_nowait(self) -> Any:
        return self.get(block=False)

    def qsize(self) -> int:
        return self._source.pending()

    def empty(self) -> bool:
        return self.qsize() == 0

    def full(self) -> bool:
        return False

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        raise GeError("FlowMsgQueue is filled by the runtime; a UDF can only get() from it")
