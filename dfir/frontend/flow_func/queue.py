"""`FlowMsgQueue`: what a stream-input func (`stream_input='Queue'`) receives for each input."""
from __future__ import annotations

import queue
from typing import Any, Callable, Protocol

from dfir.core.messages import Message

DEFAULT_DEPTH = 128  # a channel's depth when its source does not say (dfir.om.plan.DEFAULT_CHANNEL_DEPTH)


class MessageSource(Protocol):
    """The runtime side of one input channel."""

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        """The next message; `queue.Empty` if none arrives in time (or at once, unblocked)."""

    def pending(self) -> int:
        """How many messages are waiting."""


class FlowMsgQueue(queue.Queue):
    """The read side of one input channel, filled by the runtime; GE's `FlowMsgQueue`.

    `get()` blocks until the next message and returns its value as a plain func would receive
    it (`Message.udf_value`): a `Tensor` for a tensor (the array itself for an array a UDF
    returned), the object for an object message, None for an empty one.
    Reading an upstream error raises `dfir.core.messages.MessageError`; left unhandled, the
    runtime forwards that error as this call's outputs. As in GE, `get(timeout=ms)` takes its
    timeout in milliseconds (None: wait as long as it takes; negative: ValueError) and raises
    `queue.Empty` when nothing came in time, like `get_nowait()` on an empty queue; `maxsize` is
    the channel's depth, which `full()` compares the waiting messages with. A UDF cannot `put`
    into it, nor `task_done()` or `join()` it (NotImplementedError, as in GE). A UDF project's
    stream input passes `convert=FlowMsg.from_message`: its `get()` returns each message as a
    `FlowMsg`, errors included (read `get_ret_code()`).
    """

    def __init__(self, source: MessageSource, convert: Callable[[Message], Any] = Message.udf_value,
                 depth: int | None = None):
        super().__init__()
        self._source = source
        self._convert = convert
        self.maxsize = depth if depth is not None else _depth_of(source)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if not block:
            return self._convert(self._source.take(False))
        if timeout is None:
            return self._convert(self._source.take(True, None))
        if timeout < 0:
            raise ValueError(f"FlowMsgQueue.get: 'timeout' must be a non-negative number of milliseconds, "
                             f"got {timeout!r}")
        return self._convert(self._source.take(True, timeout / 1000))

    def get_nowait(self) -> Any:
        return self.get(block=False)

    def qsize(self) -> int:
        return self._source.pending()

    def empty(self) -> bool:
        return self.qsize() == 0

    def full(self) -> bool:
        return 0 < self.maxsize <= self.qsize()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        raise _refused("put")

    def put_nowait(self, item: Any) -> None:
        raise _refused("put_nowait")

    def task_done(self) -> None:
        raise _refused("task_done")

    def join(self) -> None:
        raise _refused("join")


def _refused(method: str) -> NotImplementedError:
    return NotImplementedError(f"FlowMsgQueue.{method} is not allowed: the runtime fills the queue; a UDF "
                               f"can only get() from it")


def _depth_of(source: MessageSource) -> int:
    depth = getattr(source, "depth", None)
    return depth() if callable(depth) else DEFAULT_DEPTH
