"""What holds a model up when a feed or a fetch times out: the transactions in flight, where
the oldest of them is, the nodes at work, and the channels that are full or empty.

A snapshot, taken without stopping anything: a message may move while it is taken, so it says
where things were, not where they are. Shared channels are read natively
(`Region.waiting_transactions`); a local channel (two nodes of one worker) shows only its size.

    >>> describe_stall(snapshot)
    "3 transactions in flight (1-3); the oldest, 1, is in no channel: node 'slow' (device 0:0:0)
     is at work; full: input 0 of node 'slow' (2 of 2: 4-5); empty: output 0"
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

MAX_RANGES = 4  # transaction id ranges a list names before it says how many more


@dataclass(frozen=True)
class ChannelState:
    """One channel as a snapshot saw it."""

    label: str                          # "input 0 of node 'b' (device 0:0:1)", "output 0"
    size: int
    capacity: int
    transactions: tuple[int, ...] | None  # the ids waiting in it, oldest first; None: not readable


@dataclass(frozen=True)
class StallSnapshot:
    """What a scheduler saw of its model at one moment (`ProcessScheduler.stall_snapshot`)."""

    in_flight: tuple[int, ...]           # the open transactions, oldest first
    channels: tuple[ChannelState, ...]   # node inputs whose consumer runs here, then the outputs
    at_work: tuple[str, ...]             # "node 'a' (device 0:0:0)" per worker running a node
    outputs: tuple[int, ...]             # the positions in `channels` of the outputs waited on
    partial: bool = False                # other processes hold channels and nodes not seen here


def describe_stall(snapshot: StallSnapshot) -> str:
    """One line: what is in flight, where the oldest transaction is, what is full or empty."""
    if not snapshot.in_flight:
        parts = ["no transaction is in flight"]
    else:
        count = len(snapshot.in_flight)
        parts = [f"{count} transaction{'s' if count != 1 else ''} in flight ({id_ranges(snapshot.in_flight)})",
                 _oldest(snapshot)]
    full = [f"{c.label} ({c.size} of {c.capacity}{_held(c)})" for c in snapshot.channels
            if c.capacity and c.size >= c.capacity]
    parts.append("full: " + ("; ".join(full) if full else "none"))
    empty = [snapshot.channels[k].label for k in snapshot.outputs if snapshot.channels[k].size == 0]
    if empty:
        parts.append("empty: " + ", ".join(empty))
    if snapshot.partial:
        parts.append("the channels and nodes of other processes are not shown")
    return "; ".join(parts)


def id_ranges(ids: Sequence[int]) -> str:
    """`ids` (sorted or not) as ranges: "1-3, 7, 9-12", the first MAX_RANGES and a count of the rest."""
    ranges: list[list[int]] = []
    for i in sorted(set(ids)):
        if ranges and i == ranges[-1][1] + 1:
            ranges[-1][1] = i
        else:
            ranges.append([i, i])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges[:MAX_RANGES])
    rest = sum(b - a + 1 for a, b in ranges[MAX_RANGES:])
    return text + (f" and {rest} more" if rest else "")


def _oldest(snapshot: StallSnapshot) -> str:
    oldest = snapshot.in_flight[0]
    waits_in = [c.label for c in snapshot.channels if c.transactions and oldest in c.transactions]
    if waits_in:
        where = f"the oldest, {oldest}, waits in {', '.join(waits_in)}"
    elif snapshot.at_work:
        where = f"the oldest, {oldest}, is in no channel: {', '.join(snapshot.at_work)} " \
                f"{'is' if len(snapshot.at_work) == 1 else 'are'} at work"
    else:
        where = f"the oldest, {oldest}, is in no channel and no node is at work"
    return where if not waits_in or not snapshot.at_work else f"{where}; at work: {', '.join(snapshot.at_work)}"


def _held(channel: ChannelState) -> str:
    return f": {id_ranges(channel.transactions)}" if channel.transactions else ""
