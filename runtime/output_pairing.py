"""Pairing graph outputs by transaction: what `fetch_data` of several outputs returns when the
graph sets input alignment (`set_inputs_align_attrs`).

Replicas finish out of order, so the heads of two output channels fed by different replicated
nodes may belong to different transactions. With alignment on, the driver takes messages from
each chosen output as they arrive and hands back the first group that has a message from every
output for one (transaction id, data label), under the graph's alignment rules (native
`Aligner`): at most `cache` incomplete groups, the oldest pushed out beyond that, groups older
than `timeout` ms expired; a group given up on is dropped with `dropout`, else it comes back as
its transaction's failure (FLOW_FUNC_ERR_DATA_ALIGN_FAILED) on every output.

Each distinct set of fetched outputs pairs on its own: messages taken for one set wait for that
set's next fetches.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Sequence

from dfir.flow_func.status import FLOW_FUNC_ERR_DATA_ALIGN_FAILED
from dfir.runtime import channels
from dfir.runtime.messages import Kind, Message

TAKE_BATCH = 64


def now_ms() -> int:
    return int(time.monotonic() * 1000)


class OutputPairing:
    """Pairs the messages of the output channels `chosen` (fetch positions `indexes`)."""

    def __init__(self, region, bell: int, chosen: Sequence[int], indexes: Sequence[int], align):
        self._region = region
        self._bell = bell
        self._chosen = list(chosen)
        self._indexes = list(indexes)
        self._align = align
        self._aligner = channels.Aligner(len(chosen), align.cache, align.timeout, align.dropout)
        self._ready: deque[list[Message]] = deque()

    def fetch(self, deadline: float | None) -> list[Message] | None:
        """The next paired set; [] when `deadline` (monotonic seconds, None: never) passes first;
        None once the region closed (the caller reports why)."""
        while not self._ready:
            if not self._take_available():
                return None
            self._expire()
            if self._ready:
                break
            wait_ms = self._wait_ms(deadline)
            if wait_ms == 0 and deadline is not None and time.monotonic() >= deadline:
                return []
            if self._region.wait_for_change(self._chosen, self._bell, -1, wait_ms) == channels.CLOSED:
                return None
        return self._ready.popleft()

    def _take_available(self) -> bool:
        """Push whatever waits on the chosen channels into the aligner; False once closed."""
        for j, channel in enumerate(self._chosen):
            sets = self._region.take([channel], self._bell, TAKE_BATCH, 0)
            if sets is None:
                return False
            for (message,) in sets:
                completed, evicted = self._aligner.push(j, message.meta.transaction_id, message.data_label,
                                                        message, now_ms())
                if evicted is not None:
                    self._give_up(evicted, f"the alignment cache of {self._align.cache} groups overflowed")
                if completed is not None:
                    self._ready.append(list(completed))
        return True

    def _expire(self) -> None:
        for expired in self._aligner.expire(now_ms()):
            self._give_up(expired, f"the alignment timeout of {self._align.timeout} ms passed")

    def _give_up(self, group: tuple, why: str) -> None:
        if self._align.dropout:
            return
        transaction_id, data_label, messages = group
        missing = [self._indexes[j] for j, message in enumerate(messages) if message is None]
        meta = next(message.meta for message in messages if message is not None)
        text = (f"graph outputs: transaction {transaction_id} data label {data_label} was not aligned: "
                f"{why} before output(s) {', '.join(map(str, missing))} arrived")
        failure = Message(meta, Kind.EMPTY, None, FLOW_FUNC_ERR_DATA_ALIGN_FAILED, text, data_label=data_label)
        self._ready.append([failure] * len(self._chosen))

    def _wait_ms(self, deadline: float | None) -> int:
        """How long to sleep: until the fetch's deadline or the oldest group's, whichever is first."""
        waits = []
        if deadline is not None:
            waits.append(max(0, int((deadline - time.monotonic()) * 1000 + 0.999)))
        group_deadline = self._aligner.next_deadline()
        if group_deadline is not None:
            waits.append(max(0, group_deadline - now_ms()))
        return min(waits) if waits else -1
