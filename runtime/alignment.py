"""Alignment: messages taken from several channels, paired by (transaction id, data label).

`set_inputs_align_attrs` gives a graph's alignment (the plan's `Align`); a worker pairs the inputs of a
node's multi-input func with it, the driver the outputs of a multi-output fetch
(runtime/driver/output_pairing.py). `ChannelAligner` takes what waits on the channels into the native
`Aligner`: each group with a message from every channel comes out complete; beyond `cache`
incomplete groups the oldest is pushed out, and a group older than `timeout` ms expires. A group
given up on is dropped with `dropout`, else it comes out as `Unaligned`, which its user turns
into the transaction's failure (FLOW_FUNC_ERR_DATA_ALIGN_FAILED).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_DATA_ALIGN_FAILED
from dfir.om.plan import Align
from dfir.runtime import channels

TAKE_BATCH = 64  # messages taken from one channel per call


def active(align: Align | None) -> Align | None:
    """`align` when it turns alignment on; None when absent or its cache is 0 (GE: alignment off)."""
    return align if align is not None and align.active else None


@dataclass(frozen=True)
class Unaligned:
    """A group given up on: its key, its transaction, the positions of the channels it lacks,
    and why (the cache overflowed or the timeout passed)."""

    transaction_id: int
    data_label: int
    meta: TransactionMeta
    missing: tuple[int, ...]
    why: str

    def failure(self, subject: str, noun: str, names: Sequence[object]) -> Message:
        """The transaction's failure: `<subject>: transaction T data label L was not aligned: <why>
        before <noun>(s) <names of the missing channels> arrived`."""
        text = (f"{subject}: transaction {self.transaction_id} data label {self.data_label} was not "
                f"aligned: {self.why} before {noun}(s) {', '.join(str(names[j]) for j in self.missing)} arrived")
        return Message(self.meta, Kind.EMPTY, None, FLOW_FUNC_ERR_DATA_ALIGN_FAILED, text,
                       data_label=self.data_label)


def now_ms() -> int:
    return int(time.monotonic() * 1000)


class ChannelAligner:
    """Pairs the messages of `chosen` channels (see the module docstring); `bell` is the doorbell
    their consumer sleeps on."""

    def __init__(self, region, bell: int, chosen: Sequence[int], align: Align,
                 stale: Callable[[int, int], bool] | None = None):
        self._region = region
        self._bell = bell
        self._chosen = list(chosen)
        self._align = align
        # (transaction id, ret code) -> whether the message is a result of a transaction that
        # recovery failed (the driver's ledger); the failures standing in for such transactions,
        # per transaction, as they arrive
        self._stale = stale
        self._standing_in: dict[int, list[Message | None]] = {}
        self._aligner = channels.Aligner(len(self._chosen), align.cache, align.timeout, align.dropout)

    def pull(self) -> list[list[Message] | Unaligned] | None:
        """Take what waits on the channels and expire old groups: the complete groups and the
        groups given up on, in the order they came about; None once the region closed."""
        outcomes: list[list[Message] | Unaligned] = []
        for j, channel in enumerate(self._chosen):
            sets = self._region.take([channel], self._bell, TAKE_BATCH, 0)
            if sets is None:
                return None
            now = now_ms()
            for (message,) in sets:
                if self._stale is not None and self._recovered(j, message, outcomes):
                    continue
                completed, evicted = self._aligner.push(j, message.meta.transaction_id, message.data_label,
                                                        message, now)
                if evicted is not None:
                    self._give_up(outcomes, evicted, f"the alignment cache of {self._align.cache} groups overflowed")
                if completed is not None:
                    outcomes.append(list(completed))
        for expired in self._aligner.expire(now_ms()):
            self._give_up(outcomes, expired, f"the alignment timeout of {self._align.timeout} ms passed")
        return outcomes

    def _recovered(self, j: int, message: Message, outcomes: list) -> bool:
        """Whether `message` (of input `j`) belongs to a transaction that recovery failed: a
        result of it, dropped; or the failure standing in for it, which groups with its peers
        outside the aligner (the transaction's groups in it are dropped first) and completes
        once every input has one."""
        transaction_id, ret_code = message.meta.transaction_id, message.ret_code
        if self._stale(transaction_id, ret_code):
            return True
        if ret_code == 0 or not self._stale(transaction_id, 0):
            return False
        slots = self._standing_in.get(transaction_id)
        if slots is None:
            self._aligner.discard(transaction_id)
            slots = self._standing_in[transaction_id] = [None] * len(self._chosen)
        slots[j] = message
        if all(slot is not None for slot in slots):
            outcomes.append(slots)
            del self._standing_in[transaction_id]
        return True

    def wait_ms(self, deadline: float | None = None) -> int:
        """How long to sleep for more messages: until `deadline` (monotonic seconds; None: none)
        or the oldest group's deadline, whichever is first; -1: no limit."""
        waits = []
        if deadline is not None:
            waits.append(max(0, int((deadline - time.monotonic()) * 1000 + 0.999)))
        group_deadline = self._aligner.next_deadline()
        if group_deadline is not None:
            waits.append(max(0, group_deadline - now_ms()))
        return min(waits) if waits else -1

    def _give_up(self, outcomes: list, group: tuple, why: str) -> None:
        if self._align.dropout:
            return
        transaction_id, data_label, messages = group
        meta = next(message.meta for message in messages if message is not None)
        missing = tuple(j for j, message in enumerate(messages) if message is None)
        outcomes.append(Unaligned(transaction_id, data_label, meta, missing, why))
