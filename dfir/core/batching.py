"""Input batching (GE's `TimeBatch` / `CountBatch` on `FlowNode.map_input`): the parameters of
one batched node input and GE's rules for them, shared by the frontend, the `df` dialect's
verifier, the plan reader and the runtime (dfir.runtime.worker.batching runs them).

A `CountBatch` stacks `batch_size` messages into one tensor with a new leading dimension; after
each batch a sliding window (`slide_stride` in (0, batch_size)) keeps all but the oldest
`slide_stride` messages for the next one. With `timeout` (ms, 0: wait for a full batch) a batch
still incomplete that long after it started goes out as it is, or filled up with zero tensors to
`batch_size` with `padding`.

A `TimeBatch` joins messages by their FlowInfo times: those from the first one's `start_time`
until an `end_time - start_time` of `time_window` ms (-1: until a message flagged EOS or SEG
ends the batch), concatenated along `batch_dim` (-1: stacked along a new leading dimension).
`drop_remainder` drops a batch that an EOS or SEG flag ends before its window is full.
"""
from __future__ import annotations

from dataclasses import dataclass

COUNT_TIMEOUT_LIMIT = 4294967295   # CountBatch.timeout lies in [0, this) ms (GE: UINT32_MAX)
UNTIL_FLAG = -1                    # TimeBatch.time_window: a batch ends at an EOS or SEG flag
NEW_DIM = -1                       # TimeBatch.batch_dim: stack along a new leading dimension


@dataclass(frozen=True)
class CountBatchSpec:
    """The parameters of a CountBatch (see the module docstring)."""

    batch_size: int
    slide_stride: int = 0
    timeout: int = 0
    padding: bool = False

    def problem(self) -> str | None:
        """What is wrong with these parameters (GE's wording), or None."""
        if self.batch_size <= 0:
            return f"CountBatch.batch_size should be larger than zero, but got {self.batch_size}"
        if not 0 <= self.slide_stride <= self.batch_size:
            return f"CountBatch.slide_stride should be in [0, {self.batch_size}], but got {self.slide_stride}"
        if not 0 <= self.timeout < COUNT_TIMEOUT_LIMIT:
            return f"CountBatch.timeout should be in [0, {COUNT_TIMEOUT_LIMIT}) ms, but got {self.timeout}"
        return None

    @property
    def stride(self) -> int:
        """How many messages leave the window after each batch (`slide_stride` 0 is a full batch)."""
        return self.slide_stride or self.batch_size


@dataclass(frozen=True)
class TimeBatchSpec:
    """The parameters of a TimeBatch (see the module docstring)."""

    time_window: int
    batch_dim: int = NEW_DIM
    drop_remainder: bool = False

    def problem(self) -> str | None:
        """What is wrong with these parameters (GE's wording), or None."""
        if self.time_window != UNTIL_FLAG and self.time_window <= 0:
            return f"TimeBatch.time_window should be {UNTIL_FLAG} or larger than zero, but got {self.time_window}"
        if self.batch_dim < NEW_DIM:
            return f"TimeBatch.batch_dim should be {NEW_DIM} or larger, but got {self.batch_dim}"
        return None


BatchSpec = CountBatchSpec | TimeBatchSpec
