"""`plan-memory`: a static arena for the intermediate tensors of every `ge.graph`.

Reads: each graph's ops in block order (the execution order) and their result types' upper
bounds (after `infer-shape-ranges`). Writes: `slots = [#ge.slot<...>]` on every tensor op except
weights (constants and variables: ops without operands), one per result (see
dialects/ge_plan_attrs.py), and on the graph
`arena_bytes` (the arena the runtime allocates once) and `arena_lower_bound` (the most bytes
ever live at once: no offset assignment can do better). `enabled=false` plans nothing; the
runtime then allocates every tensor as it is computed.

    %a = ge.matmul %x, %w : ...                 %a = ge.matmul %x, %w {slots = [#ge.slot<0, 512>]} : ...
    %b = ge.relu %a : ...                ==>    %b = ge.relu %a {slots = [#ge.slot<0, 512>]} : ...
    %c = ge.matmul %b, %v : ...                 %c = ge.matmul %b, %v {slots = [#ge.slot<fresh>]} : ...
    ge.output %c : ...                          ge.output %c : ...
                                                (and arena_bytes = 512, arena_lower_bound = 512 on the graph)

Algorithm, per graph:
1. Step i is the i-th op of the block; a value lives from the step defining it to the step of
   its last use (the graph's outputs are used at the final step).
2. Each tensor op result becomes, in order:
   - a view (an op with the `View` trait): it joins its operand's buffer, which then lives as long
     as it;
   - fresh memory: graph outputs (the caller keeps them), unbounded values, empty values;
   - in place (an op with the `InPlace` trait, which every element-wise op that is not a view
     declares): it joins the buffer of an operand whose buffer dies at this very step (no later use
     of any value in it), growing it if needed;
   - otherwise a new buffer of its upper bound in bytes, rounded up to `alignment`.
3. Lower bound: the largest sum of the sizes of the buffers live at one step.
4. Offsets: greedy best fit in some order: each buffer goes into the smallest gap (left by the
   placed buffers whose lifetimes overlap its own) that holds it, else on top of them. Starting
   from four orders (largest, longest-lived, largest size x lifetime, first born first), the
   buffers that end at the arena's top move to the front of the order and all are placed again,
   up to `search_rounds` times per order or until the arena meets the lower bound; the
   smallest arena wins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from dfir.dialects import ge
from dfir.dialects.ge.traits import InPlace, View
from dfir.dialects.ge_plan_attrs import SlotAttr
from dfir.passes.plan_output_size import max_bytes

__all__ = ["ARENA_ATTR", "LOWER_BOUND_ATTR", "MemoryPlan", "PlanMemory", "SLOTS_ATTR", "plan_graph_memory"]

SLOTS_ATTR = "slots"
ARENA_ATTR = "arena_bytes"
LOWER_BOUND_ATTR = "arena_lower_bound"


@dataclass(eq=False)
class _Buffer:
    """Memory shared by values whose lifetimes chain (views, in-place results)."""

    size: int
    start: int
    end: int
    offset: int = 0

    def overlaps(self, other: _Buffer) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class MemoryPlan:
    """What `plan_graph_memory` decided for one graph."""

    arena_bytes: int
    lower_bound: int
    buffers: int
    in_place: int
    views: int
    unbounded: list[str]


def plan_graph_memory(graph: ge.GraphOp, alignment: int = 64, search_rounds: int = 16) -> MemoryPlan:
    """Plan `graph`'s intermediates and write the plan into its IR (module docstring)."""
    planner = _Planner(graph, alignment)
    buffers = planner.buffers()
    lower_bound = _lower_bound(buffers)
    arena_bytes, offsets = _offsets(buffers, lower_bound, search_rounds)
    for buffer, offset in offsets.items():
        buffer.offset = offset
    planner.write(graph)
    graph.attributes[ARENA_ATTR] = IntegerAttr(arena_bytes, i64)
    graph.attributes[LOWER_BOUND_ATTR] = IntegerAttr(lower_bound, i64)
    return MemoryPlan(arena_bytes, lower_bound, len(buffers), planner.in_place, planner.views,
                      planner.unbounded)


class _Planner:
    """Steps 1 and 2: from the graph's ops to buffers and each result's kind."""

    def __init__(self, graph: ge.GraphOp, alignment: int):
        self.alignment = alignment
        self.ops = list(graph.block.ops)
        self.step = {op: i for i, op in enumerate(self.ops)}
        self.outputs = set(graph.output_op.outputs)
        self.buffer_of: dict[SSAValue, _Buffer] = {}
        self.kind_of: dict[SSAValue, str] = {}
        self.in_place = self.views = 0
        self.unbounded: list[str] = []

    def buffers(self) -> list[_Buffer]:
        found: dict[int, _Buffer] = {}
        for op in self.ops:
            if isinstance(op, ge.ShapedOp) and op.operands:  # no operands: a weight, not planned
                for result in op.results:
                    buffer = self._place(op, result)
                    if buffer is not None:
                        found[id(buffer)] = buffer
        return list(found.values())

    def _last_use(self, value: SSAValue) -> int:
        return max((self.step[use.operation] for use in value.uses), default=self.step[value.owner])

    def _place(self, op: Operation, result: SSAValue) -> _Buffer | None:
        at = self.step[op]
        if op.has_trait(View):
            self.views += 1
            self.kind_of[result] = "view"
            source = self.buffer_of.get(op.operands[0])
            if source is not None:
                return self._join(source, result)
            return None
        size = max_bytes(result.type)
        if result in self.outputs or not size:
            if size is None and result not in self.outputs:
                self.unbounded.append(_describe(op, result))
            self.kind_of[result] = "fresh"
            return None
        self.kind_of[result] = "arena"
        host = self._dying_operand_buffer(op, at) if op.has_trait(InPlace) else None
        if host is not None:
            self.in_place += 1
            host.size = max(host.size, self._aligned(size))
            return self._join(host, result)
        return self._join(_Buffer(self._aligned(size), at, at), result)

    def _join(self, buffer: _Buffer, value: SSAValue) -> _Buffer:
        buffer.end = max(buffer.end, self._last_use(value))
        self.buffer_of[value] = buffer
        return buffer

    def _dying_operand_buffer(self, op: Operation, at: int) -> _Buffer | None:
        """The largest operand buffer whose every value is last used at step `at`."""
        dying = {id(b): b for b in (self.buffer_of.get(v) for v in op.operands)
                 if b is not None and b.end == at}
        return max(dying.values(), key=lambda b: b.size, default=None)

    def _aligned(self, size: int) -> int:
        return -(-size // self.alignment) * self.alignment

    def write(self, graph: ge.GraphOp) -> None:
        for op in self.ops:
            results = [r for r in op.results if r in self.kind_of]
            if results:
                op.attributes[SLOTS_ATTR] = ArrayAttr([self._slot(r) for r in op.results])

    def _slot(self, value: SSAValue) -> SlotAttr:
        kind = self.kind_of[value]
        if kind != "arena":
            return SlotAttr(kind)
        buffer = self.buffer_of[value]
        return SlotAttr.arena(buffer.offset, buffer.size)


def _describe(op: Operation, value: SSAValue) -> str:
    name = ge.op_name_of(op) or op.name
    return name if len(op.results) == 1 else f"{name}#{value.index}"


def _lower_bound(buffers: list[_Buffer]) -> int:
    """Step 3: the peak, over steps, of the bytes of the live buffers."""
    events: dict[int, int] = {}
    for b in buffers:
        events[b.start] = events.get(b.start, 0) + b.size
        events[b.end + 1] = events.get(b.end + 1, 0) - b.size
    live = peak = 0
    for step in sorted(events):
        live += events[step]
        peak = max(peak, live)
    return peak


_ORDERS: tuple[Callable[[_Buffer], tuple], ...] = (
    lambda b: (-b.size, b.start),
    lambda b: (b.start - b.end, -b.size),
    lambda b: (-b.size * (b.end - b.start + 1), b.start),
    lambda b: (b.start, -b.size),
)
"""Sort keys of the starting orders of step 4."""


def _offsets(buffers: list[_Buffer], lower_bound: int, rounds: int) -> tuple[int, dict[_Buffer, int]]:
    """Step 4: (arena bytes, buffer -> offset) of the best placement found."""
    best: tuple[int, dict[_Buffer, int]] | None = None
    conflicts = _conflicts(buffers)
    for key in _ORDERS:
        order = sorted(buffers, key=key)
        for _ in range(rounds + 1):
            arena, offsets = _place_in_order(order, conflicts)
            if best is None or arena < best[0]:
                best = (arena, offsets)
            if best[0] <= lower_bound:
                return best
            tops = [b for b in order if offsets[b] + b.size == arena]
            order = tops + [b for b in order if offsets[b] + b.size != arena]
    return best if best is not None else (0, {})


def _conflicts(buffers: list[_Buffer]) -> dict[_Buffer, list[_Buffer]]:
    """Buffer -> the buffers whose lifetimes overlap its own (a sweep over start steps)."""
    by_start = sorted(buffers, key=lambda b: b.start)
    conflicts: dict[_Buffer, list[_Buffer]] = {b: [] for b in buffers}
    for i, buffer in enumerate(by_start):
        for later in by_start[i + 1:]:
            if later.start > buffer.end:
                break
            conflicts[buffer].append(later)
            conflicts[later].append(buffer)
    return conflicts


def _place_in_order(order: list[_Buffer], conflicts: dict[_Buffer, list[_Buffer]]
                    ) -> tuple[int, dict[_Buffer, int]]:
    """Greedy best fit of `order` (`conflicts`: the buffers each one's lifetime overlaps):
    (arena bytes, buffer -> offset)."""
    offsets: dict[_Buffer, int] = {}
    arena = 0
    for buffer in order:
        offset = _best_fit(buffer, ((offsets[p], p.size) for p in conflicts[buffer] if p in offsets))
        offsets[buffer] = offset
        arena = max(arena, offset + buffer.size)
    return arena, offsets


def _best_fit(buffer: _Buffer, taken: Iterable[tuple[int, int]]) -> int:
    """The start of the smallest gap among `taken` (offset, size) ranges that holds `buffer`."""
    best, best_gap, top = None, None, 0
    for offset, size in sorted(taken):
        gap = offset - top
        if gap >= buffer.size and (best_gap is None or gap < best_gap):
            best, best_gap = top, gap
        top = max(top, offset + size)
    return top if best is None else best


def _graph_stats(graph: ge.GraphOp) -> str | None:
    """The report line of a planned graph, read back from its IR."""
    arena, bound = graph.attributes.get(ARENA_ATTR), graph.attributes.get(LOWER_BOUND_ATTR)
    if arena is None or bound is None:
        return None
    slots: dict[SSAValue, SlotAttr] = {}
    memory: dict[SSAValue, SlotAttr] = {}  # views resolved to the arena slot they look into
    for op in graph.block.ops:
        for result, slot in zip(op.results, op.attributes.get(SLOTS_ATTR, ArrayAttr([])).data):
            slots[result] = slot
            source = memory.get(op.operands[0]) if slot.kind.data == "view" else slot
            if source is not None and source.in_arena:
                memory[result] = source
    in_place = sum(1 for r, s in slots.items() if s.in_arena and any(
        memory.get(v) == s for v in r.owner.operands))
    arena_values = sum(1 for s in slots.values() if s.in_arena)
    outputs = set(graph.output_op.outputs)
    unbounded = sum(1 for r, s in slots.items()
                    if s.kind.data == "fresh" and max_bytes(r.type) is None and r not in outputs)
    views = sum(1 for s in slots.values() if s.kind.data == "view")
    ratio = f"{arena.value.data / bound.value.data:.2f}x" if bound.value.data else "-"
    return (f"@{graph.sym_name.data} arena {arena.value.data} B, lower bound {bound.value.data} B "
            f"({ratio}), {_count(arena_values - in_place, 'buffer')}, {in_place} in place, "
            f"{_count(views, 'view')}, {unbounded} unbounded left out")


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


@dataclass(frozen=True)
class PlanMemory(ModulePass):
    name = "plan-memory"

    enabled: bool = True
    alignment: int = 64
    search_rounds: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.enabled:
            return
        if self.alignment < 1 or self.search_rounds < 0:
            raise ValueError(f"plan-memory: alignment must be >= 1 and search-rounds >= 0, got "
                             f"{self.alignment} and {self.search_rounds}")
        for graph in op.walk():
            if isinstance(graph, ge.GraphOp):
                plan_graph_memory(graph, self.alignment, self.search_rounds)

    def summary(self, op: ModuleOp) -> str:
        if not self.enabled:
            return "off"
        lines = [line for g in op.walk() if isinstance(g, ge.GraphOp) for line in [_graph_stats(g)] if line]
        return "; ".join(lines) if lines else "no ge graphs"
