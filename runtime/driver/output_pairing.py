"""Pairing graph outputs by transaction: what `fetch_data` of several outputs returns when the
graph sets input alignment (`set_inputs_align_attrs`).

Replicas finish out of order, so the heads of two output channels fed by different replicated
nodes may belong to different transactions. With alignment on, the driver takes messages from
each chosen output as they arrive (runtime/alignment.py) and hands back the first group that has
a message from every output for one (transaction id, data label), under the graph's alignment
rules; a group given up on comes back as its transaction's failure on every output, unless
`dropout` drops it.

Each distinct set of fetched outputs pairs on its own: messages taken for one set wait for that
set's next fetches.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Callable, Sequence

from dfir.core.messages import Message
from dfir.om.plan import Align
from dfir.runtime import channels
from dfir.runtime.alignment import ChannelAligner, Unaligned


class OutputPairing:
    """Pairs the messages of the output channels `chosen` (fetch positions `indexes`)."""

    def __init__(self, region, bell: int, chosen: Sequence[int], indexes: Sequence[int], align: Align,
                 stale: Callable[[int, int], bool] | None = None):
        """`stale(transaction_id, ret_code)`: whether a message is a result of a transaction that
        recovery failed (the ledger's `is_stale`); those are dropped."""
        self._region = region
        self._bell = bell
        self._chosen = list(chosen)
        self._indexes = list(indexes)
        self._aligner = ChannelAligner(region, bell, chosen, align, stale)
        self._ready: deque[list[Message]] = deque()

    def fetch(self, deadline: float | None) -> list[Message] | None:
        """The next paired set; [] when `deadline` (monotonic seconds, None: never) passes first;
        None once the region closed (the caller reports why)."""
        while not self._ready:
            outcomes = self._aligner.pull()
            if outcomes is None:
                return None
            self._ready.extend(self._as_set(outcome) for outcome in outcomes)
            if self._ready:
                break
            if deadline is not None and time.monotonic() >= deadline:
                return []
            wait_ms = self._aligner.wait_ms(deadline)
            if self._region.wait_for_change(self._chosen, self._bell, -1, wait_ms) == channels.CLOSED:
                return None
        return self._ready.popleft()

    def _as_set(self, outcome: list[Message] | Unaligned) -> list[Message]:
        if isinstance(outcome, Unaligned):
            return [outcome.failure("graph outputs", "output", self._indexes)] * len(self._chosen)
        return outcome
