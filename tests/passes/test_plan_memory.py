"""`plan-memory` and arena execution: plans are valid (no two live values share bytes), sound
(hypothesis: concrete shapes inside the declared ranges never outgrow a planned slot or an
output's bound) and run to the same numbers as unplanned execution."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ArrayAttr

import dfir
import dfir.data_type as dt
from dfir.dialects import ge
from dfir.dialects.ge.traits import InPlace
from dfir.driver.job import make_context
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.passes.plan_memory import PlanMemory
from dfir.runtime.ge.graph_runner import GeGraphRunner
from dfir.runtime.ge.kernels import KERNELS

F32 = dt.DT_FLOAT


# --- helpers ---------------------------------------------------------------------------------------

def compiled_graph(graph: Graph, options: dict[str, str], stop_after: str = "plan") -> ge.GraphOp:
    module = dfir.compile(graph, options, stop_after=stop_after).module
    return next(op for op in module.walk() if isinstance(op, ge.GraphOp))


def pack(weights: list[np.ndarray]) -> tuple[list[dict], bytes]:
    buffer, descs = bytearray(), []
    for array in weights:
        buffer += bytes(-len(buffer) % 64)
        descs.append({"offset": len(buffer), "size": array.nbytes, "dtype": dt.from_numpy(array.dtype).name,
                      "shape": list(array.shape)})
        buffer += array.tobytes()
    return descs, bytes(buffer)


def lowered(graph_op: ge.GraphOp) -> tuple[dict, bytes]:
    entry, weights = lower_ge_graph(graph_op)
    entry["weights"], buffer = pack(weights)
    return entry, buffer


def value_types(graph_op: ge.GraphOp) -> list:
    """Result types in the lowering's value numbering (block order, outputs excluded)."""
    return [r.type for op in graph_op.block.ops if not isinstance(op, ge.OutputOp) for r in op.results]


def unplanned(entry: dict) -> dict:
    """`entry` without its memory plan: every value allocated as it is computed."""
    ops = [{k: v for k, v in op.items() if k != "slots"} for op in entry["ops"]]
    return {**{k: v for k, v in entry.items() if k != "arena_bytes"}, "ops": ops}


def reference_values(entry: dict, buffer: bytes, inputs: list[np.ndarray]) -> dict[int, np.ndarray]:
    """Every value of a run with the plain kernels, no arena: value id -> array."""
    plain = GeGraphRunner(unplanned(entry), buffer)
    values = {d["value"]: a for d, a in zip(entry["inputs"], inputs)}
    values.update(plain._bound)
    for op in entry["ops"]:
        if op["op"] != "const":
            results = KERNELS[op["op"]]([values[i] for i in op["inputs"]], op["attrs"])
            values.update(zip(op["outputs"], results))
    return values


def soundness_violations(graph_op: ge.GraphOp, entry: dict, values: dict[int, np.ndarray]) -> list[str]:
    """Values outside their type's ranges, larger than their slot, or outputs above their bound."""
    problems = []
    for value_id, t in enumerate(value_types(graph_op)):
        shape = values[value_id].shape
        if len(shape) != t.rank or not all(d.contains(s) for d, s in zip(t.dims, shape)):
            problems.append(f"value {value_id} has shape {list(shape)} outside {t}")
    for op in entry["ops"]:
        for value_id, slot in zip(op["outputs"], op.get("slots", [])):
            if isinstance(slot, list) and values[value_id].nbytes > slot[1]:
                problems.append(f"op {op['name']} result takes {values[value_id].nbytes} B > slot {slot}")
    for i, (value_id, limit) in enumerate(zip(entry["outputs"], entry["output_max_bytes"])):
        if 0 <= limit < values[value_id].nbytes:
            problems.append(f"output {i} takes {values[value_id].nbytes} B > bound {limit}")
    return problems


def plan_overlaps(graph_op: ge.GraphOp) -> list[str]:
    """Pairs of arena values whose bytes overlap while both are live (an in-place handoff, where
    an elementwise op's result takes over its operand's bytes at that op, is allowed)."""
    ops = list(graph_op.block.ops)
    step = {op: i for i, op in enumerate(ops)}
    root, live = {}, {}
    for op in ops:
        slots = op.attributes.get("slots", ArrayAttr([])).data
        for result, slot in zip(op.results, slots):
            if slot.kind.data == "view":
                root[result] = root.get(op.operands[0])
            elif slot.in_arena:
                root[result] = result
                live[result] = [step[op], step[op], slot.offset.data, slot.end, op]
    for value, owner in root.items():
        if owner is not None:
            last = max((step[u.operation] for u in value.uses), default=step[value.owner])
            live[owner][1] = max(live[owner][1], last)
    problems = []
    items = sorted(live.items(), key=lambda kv: kv[1][0])
    for i, (a, (a0, a1, a_lo, a_hi, _)) in enumerate(items):
        for b, (b0, b1, b_lo, b_hi, b_op) in items[i + 1:]:
            if a_lo < b_hi and b_lo < a_hi and b0 <= a1:
                handoff = b0 == a1 and b_op.has_trait(InPlace)
                if not handoff:
                    problems.append(f"{a.name_hint} [{a0}, {a1}] and {b.name_hint} [{b0}, {b1}] share bytes")
    return problems


# --- random graphs ---------------------------------------------------------------------------------

class _Gen:
    """Builds a random graph over [batch, features] values; values of one batch source share their
    batch size at run time, so only they combine elementwise."""

    def __init__(self, data: st.DataObject):
        self.draw = data.draw
        self.g = Graph("random")
        self.values: list[tuple[object, int, int]] = []  # (value, batch source, features)
        self.ranges: list[tuple[int, int]] = []
        self.rng = np.random.default_rng(self.draw(st.integers(0, 2**16)))

    def weight(self, *shape: int):
        return self.g.const(self.rng.standard_normal(shape).astype(np.float32))

    def build(self) -> tuple[Graph, str]:
        spec = []
        for i in range(self.draw(st.integers(1, 2))):
            lo = self.draw(st.integers(1, 4))
            hi = self.draw(st.integers(lo, 7))
            features = self.draw(st.sampled_from([2, 3, 4, 8]))
            self.values.append((self.g.data(i, [-1, features], F32, name=f"x{i}"), i, features))
            self.ranges.append((lo, hi))
            spec.append(f"x{i}:{lo}~{hi},{features}")
        for _ in range(self.draw(st.integers(1, 10))):
            self.step(self.draw(st.sampled_from(
                ["matmul", "bias", "binary", "unary", "views", "transpose", "softmax", "concat", "split"])))
        outputs = [self.values[-1][0]]
        if self.draw(st.booleans()):
            outputs.append(self.draw(st.sampled_from(self.values))[0])
        self.g.set_outputs(outputs)
        return self.g, ";".join(spec)

    def pick(self):
        return self.draw(st.sampled_from(self.values))

    def step(self, kind: str) -> None:
        g = self.g
        v, source, f = self.pick()
        if kind == "matmul":
            out = self.draw(st.sampled_from([2, 3, 5, 8]))
            self.values.append((g.matmul(v, self.weight(f, out)), source, out))
        elif kind == "bias":
            self.values.append((g.add(v, self.weight(f)), source, f))
        elif kind == "binary":
            partners = [w for w, s, wf in self.values if s == source and wf == f]
            other = self.draw(st.sampled_from(partners))
            op = self.draw(st.sampled_from([g.add, g.sub, g.mul, g.maximum, g.minimum]))
            self.values.append((op(v, other), source, f))
        elif kind == "unary":
            op = self.draw(st.sampled_from([g.relu, g.tanh, g.sigmoid]))
            self.values.append((op(v), source, f))
        elif kind == "views":
            self.values.append((g.reshape(g.relu(g.reshape(v, [-1])), [-1, f]), source, f))
        elif kind == "transpose":
            self.values.append((g.transpose(g.tanh(g.transpose(v, [1, 0])), [1, 0]), source, f))
        elif kind == "softmax":
            self.values.append((g.softmax(v), source, f))
        elif kind == "concat":
            partners = [(w, s) for w, s, wf in self.values if wf == f]
            other, other_source = self.draw(st.sampled_from(partners))
            self.ranges.append((-1, -1))
            self.values.append((g.concat([v, other], 0), len(self.ranges) - 1, f))
        elif kind == "split" and f >= 2:
            first, rest = g.split(v, [1, -1], axis=1)
            self.values.append((g.add(first, g.slice(rest, [0], [1], [1])), source, 1))


def feeds(gen: _Gen, data: st.DataObject) -> list[np.ndarray]:
    arrays = []
    for i, graph_input in enumerate(gen.g.inputs):
        lo, hi = gen.ranges[i]
        rows = data.draw(st.integers(lo, hi))
        arrays.append(gen.rng.standard_normal((rows, graph_input.shape[1])).astype(np.float32))
    return arrays


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_plans_are_sound_and_arena_runs_match_plain_runs(data):
    gen = _Gen(data)
    graph, spec = gen.build()
    graph_op = compiled_graph(graph, {"ge.inputShape": spec})
    entry, buffer = lowered(graph_op)
    assert plan_overlaps(graph_op) == []
    assert graph_op.attributes["arena_bytes"].value.data >= graph_op.attributes["arena_lower_bound"].value.data
    runner = GeGraphRunner(entry, buffer)
    previous = None
    for _ in range(2):  # two runs through the same arena: the first run's outputs must survive
        inputs = feeds(gen, data)
        values = reference_values(entry, buffer, inputs)
        assert soundness_violations(graph_op, entry, values) == []
        outputs = runner.run(inputs)
        for got, value_id in zip(outputs, entry["outputs"]):
            np.testing.assert_allclose(got, values[value_id], rtol=1e-5, atol=1e-6)
        if previous is not None:
            for kept, expected in zip(*previous):
                np.testing.assert_array_equal(kept, expected)
        previous = (outputs, [o.copy() for o in outputs])


# --- fixed graphs ----------------------------------------------------------------------------------

def mlp(layers: int = 3, width: int = 16) -> Graph:
    rng = np.random.default_rng(0)
    g = Graph("mlp")
    h = g.data(0, [-1, width], F32, name="x")
    for _ in range(layers):
        h = g.relu(g.add(g.matmul(h, g.const(rng.standard_normal((width, width)).astype(np.float32))),
                         g.const(rng.standard_normal(width).astype(np.float32))))
    g.set_outputs([h])
    return g


def test_an_mlp_runs_in_place_in_two_slots_and_reports_it():
    """Each layer's matmul gets a buffer its add and relu reuse (the last relu is the output);
    consecutive layers' buffers alternate between two 2048-byte slots (32 x 16 f32)."""
    compiled = dfir.compile(mlp(), {"ge.inputShape": "x:1~32,16"}, stop_after="plan")
    assert ("plan-memory: @mlp arena 4096 B, lower bound 4096 B (1.00x), 3 buffers, 5 in place, 0 views, "
            "0 unbounded left out") in str(compiled.report)


def test_unbounded_values_are_left_out_and_reported():
    compiled = dfir.compile(mlp(), stop_after="plan")
    assert ("plan-memory: @mlp arena 0 B, lower bound 0 B (-), 0 buffers, 0 in place, 0 views, "
            "8 unbounded left out") in str(compiled.report)


def test_plan_off_leaves_the_graph_unplanned_and_it_still_runs():
    module = dfir.compile(mlp(), {"ge.inputShape": "x:1~32,16"}, stop_after="shapes").module
    PlanMemory(enabled=False).apply(make_context(), module)
    graph_op = next(op for op in module.walk() if isinstance(op, ge.GraphOp))
    entry, buffer = lowered(graph_op)
    assert "arena_bytes" not in entry and all("slots" not in op for op in entry["ops"])
    assert PlanMemory(enabled=False).summary(module) == "off"
    x = np.ones((3, 16), np.float32)
    np.testing.assert_array_equal(GeGraphRunner(entry, buffer).run([x])[0], reference_values(entry, buffer, [x])[
        entry["outputs"][0]])


def planned_mlp_entry() -> tuple[dict, bytes]:
    return lowered(compiled_graph(mlp(), {"ge.inputShape": "x:1~4,16"}))


def test_a_value_larger_than_its_slot_fails_the_run():
    entry, buffer = planned_mlp_entry()
    entry["ops"][1]["slots"] = [[0, 64]]
    runner = GeGraphRunner(entry, buffer)
    runner.run([np.ones((1, 16), np.float32)])
    with pytest.raises(GeError) as error:
        runner.run([np.ones((2, 16), np.float32)])
    assert error.value.error_message == ("op 'matmul_0' result 0 ([2, 16] float32) takes 128 bytes, more "
                                         "than its planned slot of 64 bytes")


def test_a_slot_outside_the_arena_is_refused_when_loading():
    entry, buffer = planned_mlp_entry()
    entry["ops"][1]["slots"] = [[entry["arena_bytes"] - 64, 128]]
    with pytest.raises(GeError) as error:
        GeGraphRunner(entry, buffer)
    assert error.value.error_message == (f"ge_graph.ops[1].slots[0]: [{entry['arena_bytes'] - 64},128] lies "
                                         f"outside the arena of {entry['arena_bytes']} bytes")


def test_threads_get_their_own_arena():
    entry, buffer = planned_mlp_entry()
    runner = GeGraphRunner(entry, buffer)
    inputs = [np.full((4, 16), k, np.float32) for k in range(8)]
    expected = [reference_values(entry, buffer, [x])[entry["outputs"][0]] for x in inputs]
    failures = []

    def work(k):
        for _ in range(50):
            if not np.array_equal(runner.run([inputs[k]])[0], expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_an_op_in_place_over_a_numpy_scalar_computes_into_its_slot():
    """`round` of a 0-d array gives a numpy scalar, which an in-place `add` cannot write into."""
    g = Graph("scalars")
    x = g.data(0, [], F32, name="x")
    shifted = g.add(g.round(x), g.const(np.array(0.25, np.float32)))
    g.set_outputs([g.mul(shifted, g.const(np.array(2.0, np.float32)))])
    entry, buffer = lowered(compiled_graph(g, {}))
    (add,) = [op for op in entry["ops"] if op["op"] == "add"]
    (rounded,) = [op for op in entry["ops"] if op["op"] == "round"]
    assert add["slots"] == rounded["slots"] != [None]
    (got,) = GeGraphRunner(entry, buffer).run([np.array(2.5, np.float32)])
    assert got.shape == () and got == np.float32(4.5)
