"""`BalanceConfig` and `AffinityPolicy`: where a balance-scatter UDF sends each output message.

The messages of one transaction are laid out in a `row_num x col_num` matrix; `set_data_pos`
gives each message's `(row, col)`. A message's data label is its position `row * col_num + col`
plus 1, and its route label (which consumer replica gets it) is, plus 1: the row under
ROW_AFFINITY, the column under COL_AFFINITY, the position under NO_AFFINITY. The matrix holds at
most 65536 cells and every position must lie inside it.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Sequence

MAX_CELLS = 65536


class AffinityPolicy(IntEnum):
    NO_AFFINITY = 0
    ROW_AFFINITY = 1
    COL_AFFINITY = 2


class BalanceError(ValueError):
    """A balance config that cannot route: its message says why."""


class BalanceConfig:
    """`BalanceConfig(row_num, col_num, affinity_policy=NO_AFFINITY)`, positions by `set_data_pos`."""

    def __init__(self, row_num: int, col_num: int,
                 affinity_policy: AffinityPolicy = AffinityPolicy.NO_AFFINITY):
        self.row_num = row_num
        self.col_num = col_num
        self.affinity_policy = affinity_policy
        self.data_pos: list[tuple[int, int]] = []

    def set_data_pos(self, pos: Sequence[tuple[int, int]]) -> None:
        """The `(row, col)` of each message sent with this config, in order."""
        self.data_pos = [tuple(item) for item in pos]

    def get_inner_config(self) -> BalanceConfig:
        """What the runtime routes by (GE's accessor of its native config): this config itself."""
        return self

    def labels(self, count: int) -> list[tuple[int, int]]:
        """`(data_label, route_label)` for `count` messages; BalanceError when they cannot be routed."""
        self._check_matrix()
        if len(self.data_pos) != count:
            raise BalanceError(f"the balance config has {len(self.data_pos)} data positions for "
                               f"{count} message(s); set_data_pos gives one per message")
        return [self._label(row, col) for row, col in (self._checked(pos) for pos in self.data_pos)]

    def _check_matrix(self) -> None:
        for name in ("row_num", "col_num"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise BalanceError(f"the balance config's {name} must be an int > 0, got {value!r}")
        if self.row_num * self.col_num > MAX_CELLS:
            raise BalanceError(f"the balance config's matrix {self.row_num} x {self.col_num} has "
                               f"{self.row_num * self.col_num} cells; at most {MAX_CELLS} are allowed")
        if self.affinity_policy not in tuple(AffinityPolicy):
            raise BalanceError(f"the balance config's affinity_policy must be an AffinityPolicy, "
                               f"got {self.affinity_policy!r}")

    def _checked(self, pos: tuple) -> tuple[int, int]:
        if len(pos) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pos):
            raise BalanceError(f"data position {pos!r} must be a (row, col) pair of ints")
        row, col = pos
        if not (0 <= row < self.row_num and 0 <= col < self.col_num):
            raise BalanceError(f"data position ({row}, {col}) lies outside the "
                               f"{self.row_num} x {self.col_num} matrix")
        return row, col

    def _label(self, row: int, col: int) -> tuple[int, int]:
        position = row * self.col_num + col
        route = {AffinityPolicy.ROW_AFFINITY: row, AffinityPolicy.COL_AFFINITY: col}.get(
            AffinityPolicy(self.affinity_policy), position)
        return position + 1, route + 1
