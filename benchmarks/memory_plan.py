"""How close `plan-memory` packs GE graphs' intermediates, and what arena execution costs.

Graphs: generated ones (random DAGs of matmuls, elementwise ops, concats and residual adds over a
dynamic batch) and three models built with onnx.helper and imported (an MLP, a small CNN with
dynamic image sizes, a transformer block with dynamic batch and sequence). Per graph it prints
the bytes without reuse (one buffer per intermediate: the baseline), the lower bound (the most
bytes ever live at once over the schedule, computed here from the planned IR by `live_peak`,
not taken from the planner, which also checks that no two live slots overlap), the planned
arena, arena / lower bound (target <= 1.10) and the saving against the baseline. Then, per model, the runner's time with the arena against the same
graph unplanned (every tensor allocated as computed), side by side in the same run.

Run: python benchmarks/memory_plan.py [--smoke]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

# One BLAS thread: on a shared machine, timings of multithreaded matmuls vary more than what is
# being measured. Set before numpy loads.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import dfir  # noqa: E402
import dfir.data_type as dt  # noqa: E402
from dfir.dialects import ge  # noqa: E402
from dfir.ge.graph import Graph  # noqa: E402
from dfir.lowering.ge_graph import lower_ge_graph  # noqa: E402
from dfir.passes.plan_memory import SLOTS_ATTR  # noqa: E402
from dfir.passes.plan_output_size import max_bytes  # noqa: E402
from dfir.runtime.ge.graph_runner import GeGraphRunner  # noqa: E402

TARGET = 1.10
OPSET = [helper.make_opsetid("", 20)]


# --- generated graphs ------------------------------------------------------------------------------

def random_dag(ops: int, seed: int) -> tuple[Graph, str]:
    """`ops` ops over [batch, features] values (batch 1~64), each reading recent values."""
    rng = np.random.default_rng(seed)
    g = Graph(f"random_{ops}")
    values = [(g.data(0, [-1, 32], dt.DT_FLOAT, name="x"), 32)]

    def recent():
        return values[max(0, len(values) - 1 - int(rng.geometric(0.35)) + 1)]

    for _ in range(ops):
        v, f = recent()
        kind = rng.choice(["matmul", "matmul", "unary", "binary", "concat", "bias"])
        if kind == "matmul":
            out = int(rng.choice([16, 32, 64, 128]))
            weight = g.const(rng.standard_normal((f, out)).astype(np.float32))
            values.append((g.matmul(v, weight), out))
        elif kind == "unary":
            values.append((rng.choice([g.relu, g.tanh, g.sigmoid])(v), f))
        elif kind == "bias":
            values.append((g.add(v, g.const(rng.standard_normal(f).astype(np.float32))), f))
        else:
            partners = [(w, wf) for w, wf in values[-8:] if wf == f or kind == "concat"] or [(v, f)]
            w, wf = partners[int(rng.integers(len(partners)))]
            if kind == "binary":
                values.append((g.add(v, w), f))
            elif f + wf <= 256:
                values.append((g.concat([v, w], axis=1), f + wf))
    g.set_outputs([values[-1][0]])
    return g, "x:1~64,32"


def residual_tower(blocks: int) -> tuple[Graph, str]:
    """`blocks` pre-activation residual blocks of width 128 over a batch of 1~64."""
    rng = np.random.default_rng(blocks)
    g = Graph(f"residual_{blocks}")
    h = g.data(0, [-1, 128], dt.DT_FLOAT, name="x")
    for _ in range(blocks):
        w1 = g.const(rng.standard_normal((128, 256)).astype(np.float32) / 16)
        w2 = g.const(rng.standard_normal((256, 128)).astype(np.float32) / 16)
        h = g.add(h, g.matmul(g.relu(g.matmul(g.relu(h), w1)), w2))
    g.set_outputs([h])
    return g, "x:1~64,128"


# --- ONNX models -----------------------------------------------------------------------------------

def _init(name: str, array: np.ndarray) -> onnx.TensorProto:
    """An initializer; floating-point arrays are stored as float32."""
    return numpy_helper.from_array(array.astype(np.float32) if array.dtype.kind == "f" else array, name)


def onnx_mlp() -> tuple[onnx.ModelProto, str]:
    rng = np.random.default_rng(1)
    widths, nodes, inits, last = [256, 512, 512, 256, 10], [], [], "x"
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        inits += [_init(f"w{i}", rng.standard_normal((a, b)) / np.sqrt(a)), _init(f"b{i}", rng.standard_normal(b))]
        nodes += [helper.make_node("MatMul", [last, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"])]
        last = f"a{i}"
        if i < len(widths) - 2:
            nodes.append(helper.make_node("Relu", [last], [f"r{i}"]))
            last = f"r{i}"
    nodes.append(helper.make_node("Softmax", [last], ["y"], axis=-1))
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])], inits)
    return helper.make_model(graph, opset_imports=OPSET), "x:1~64,256"


def onnx_cnn() -> tuple[onnx.ModelProto, str]:
    rng = np.random.default_rng(2)
    nodes, inits, last, channels = [], [], "x", 3
    for i, out in enumerate([16, 32, 64]):
        inits += [_init(f"k{i}", rng.standard_normal((out, channels, 3, 3)) / 8),
                  _init(f"c{i}", rng.standard_normal(out))]
        nodes += [helper.make_node("Conv", [last, f"k{i}", f"c{i}"], [f"conv{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"])]
        last, channels = f"relu{i}", out
        if i < 2:
            nodes.append(helper.make_node("MaxPool", [last], [f"pool{i}"], kernel_shape=[2, 2], strides=[2, 2]))
            last = f"pool{i}"
    inits += [_init("fc_w", rng.standard_normal((64, 10)) / 8), _init("fc_b", rng.standard_normal(10))]
    nodes += [helper.make_node("GlobalAveragePool", [last], ["gap"]),
              helper.make_node("Flatten", ["gap"], ["flat"]),
              helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"])]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 10])], inits)
    return helper.make_model(graph, opset_imports=OPSET), "x:1~8,3,16~64,16~64"


def onnx_transformer_block(d: int = 64, heads: int = 4) -> tuple[onnx.ModelProto, str]:
    """Pre-norm attention and MLP with residuals, [batch, seq, d] in and out."""
    rng = np.random.default_rng(3)

    def weight(name, *shape):
        inits.append(_init(name, rng.standard_normal(shape) / np.sqrt(shape[0])))
        return name

    inits = [_init("ln_s", np.ones(d, np.float32)), _init("ln_b", np.zeros(d, np.float32)),
             _init("heads_shape", np.array([0, 0, heads, d // heads], np.int64)),
             _init("model_shape", np.array([0, 0, d], np.int64)),
             _init("scale", np.array(1 / np.sqrt(d // heads)))]
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln_s", "ln_b"], ["ln1"], axis=-1),
        *(n("MatMul", ["ln1", weight(f"w_{t}", d, d)], [t]) for t in "qkv"),
        *(n("Reshape", [t, "heads_shape"], [f"{t}_h"]) for t in "qkv"),
        n("Transpose", ["q_h"], ["q_t"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k_h"], ["k_t"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v_h"], ["v_t"], perm=[0, 2, 1, 3]),
        n("MatMul", ["q_t", "k_t"], ["scores"]),
        n("Mul", ["scores", "scale"], ["scaled"]),
        n("Softmax", ["scaled"], ["attn"], axis=-1),
        n("MatMul", ["attn", "v_t"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", "model_shape"], ["ctx_m"]),
        n("MatMul", ["ctx_m", weight("w_o", d, d)], ["proj"]),
        n("Add", ["x", "proj"], ["res1"]),
        n("LayerNormalization", ["res1", "ln_s", "ln_b"], ["ln2"], axis=-1),
        n("MatMul", ["ln2", weight("w_1", d, 4 * d)], ["up"]),
        n("Gelu", ["up"], ["act"]),
        n("MatMul", ["act", weight("w_2", 4 * d, d)], ["down"]),
        n("Add", ["res1", "down"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "t", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", "t", d])], inits)
    return helper.make_model(graph, opset_imports=OPSET), f"x:1~4,1~128,{d}"


# --- measuring -------------------------------------------------------------------------------------

def planned(graph: Graph, input_shape: str) -> ge.GraphOp:
    module = dfir.compile(graph, {"ge.inputShape": input_shape}, stop_after="plan").module
    return next(op for op in module.walk() if isinstance(op, ge.GraphOp))


def live_peak(graph_op: ge.GraphOp) -> int:
    """The most arena bytes live at one step of the schedule (the block's op order).

    A value in an arena slot lives from the op defining it to its last use (an output: to the
    graph's end); a view keeps the slot it looks into alive; values sharing a slot (in place)
    count once. Exits if two slots live at one step overlap (the plan would be wrong)."""
    ops = list(graph_op.block.ops)
    step = {op: i for i, op in enumerate(ops)}
    slot_of: dict = {}  # value -> (offset, size) of the arena slot it lives in
    for op in ops:
        slots = op.attributes.get(SLOTS_ATTR)
        for result, slot in zip(op.results, slots.data if slots is not None else ()):
            if slot.in_arena:
                slot_of[result] = (slot.offset.data, slot.size.data)
            elif slot.kind.data == "view" and op.operands[0] in slot_of:
                slot_of[result] = slot_of[op.operands[0]]
    live: list[set] = [set() for _ in ops]
    for value, slot in slot_of.items():
        last = max((step[use.operation] for use in value.uses), default=step[value.owner])
        for at in range(step[value.owner], last + 1):
            live[at].add(slot)
    for at, slots in enumerate(live):
        ordered = sorted(slots)
        for (offset, size), (next_offset, _) in zip(ordered, ordered[1:]):
            if offset + size > next_offset:
                sys.exit(f"@{graph_op.sym_name.data}: slots overlap at step {at}: {ordered}")
    return max((sum(size for _, size in slots) for slots in live), default=0)


def memory_row(name: str, graph_op: ge.GraphOp) -> dict:
    arena = graph_op.attributes["arena_bytes"].value.data
    bound = live_peak(graph_op)
    planner_bound = graph_op.attributes["arena_lower_bound"].value.data
    if planner_bound != bound:
        print(f"{name}: the planner's lower bound {planner_bound:,} B differs from the peak of live bytes {bound:,} B")
    naive = 0  # one 64-byte aligned buffer per arena value: what planning without reuse needs
    for op in graph_op.block.ops:
        slots = op.attributes.get(SLOTS_ATTR)
        for result, slot in zip(op.results, slots.data if slots is not None else ()):
            if slot.in_arena:
                naive += -(-max_bytes(result.type) // 64) * 64
    ops = sum(1 for op in graph_op.block.ops if op.operands and not isinstance(op, ge.OutputOp))
    return {"graph": name, "ops": ops, "naive": naive, "bound": bound, "arena": arena,
            "ratio": arena / bound if bound else 1.0}


def runners(graph_op: ge.GraphOp) -> tuple[GeGraphRunner, GeGraphRunner]:
    """(arena runner, the same entry unplanned)."""
    entry, weights = lower_ge_graph(graph_op)
    buffer, descs = bytearray(), []
    for array in weights:
        buffer += bytes(-len(buffer) % 64)
        descs.append({"offset": len(buffer), "size": array.nbytes, "dtype": dt.from_numpy(array.dtype).name,
                      "shape": list(array.shape)})
        buffer += array.tobytes()
    entry["weights"] = descs
    plain = {**{k: v for k, v in entry.items() if k != "arena_bytes"},
             "ops": [{k: v for k, v in op.items() if k != "slots"} for op in entry["ops"]]}
    return GeGraphRunner(entry, bytes(buffer)), GeGraphRunner(plain, bytes(buffer))


def cpu_seconds(runners: tuple[GeGraphRunner, ...], inputs: list[np.ndarray], reps: int) -> list[float]:
    """The median CPU seconds of one run of each runner: CPU time, not wall time, and runs
    interleaved, so that other work on a shared machine affects both alike."""
    times: list[list[float]] = [[] for _ in runners]
    for runner in runners:
        runner.run(inputs)
    for _ in range(reps):
        for runner, samples in zip(runners, times):
            start = time.process_time()
            runner.run(inputs)
            samples.append(time.process_time() - start)
    return [statistics.median(samples) for samples in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="small graphs and few repetitions (CI)")
    args = parser.parse_args()
    sizes, seeds, blocks, reps = ([20, 60], 1, 3, 3) if args.smoke else ([25, 100, 400], 4, 12, 60)

    models = {"onnx_mlp": onnx_mlp(), "onnx_cnn": onnx_cnn(), "onnx_transformer": onnx_transformer_block()}
    graphs = [(f"random_{n}_s{seed}", *random_dag(n, seed)) for n in sizes for seed in range(seeds)]
    graphs.append((f"residual_{blocks}", *residual_tower(blocks)))
    graphs += [(name, Graph.from_onnx(model, name), spec) for name, (model, spec) in models.items()]

    rows, planned_ops = [], {}
    for name, graph, spec in graphs:
        graph_op = planned(graph, spec)
        planned_ops[name] = graph_op
        rows.append(memory_row(name, graph_op))
    print(f"{'graph':<22}{'ops':>6}{'no reuse B':>14}{'lower bnd B':>14}{'arena B':>14}"
          f"{'arena/lower':>13}{'saved':>8}  target <= {TARGET}")
    for r in rows:
        verdict = "ok" if r["ratio"] <= TARGET else "OVER"
        print(f"{r['graph']:<22}{r['ops']:>6}{r['naive']:>14,}{r['bound']:>14,}{r['arena']:>14,}"
              f"{r['ratio']:>13.3f}{1 - r['arena'] / r['naive']:>8.0%}  {verdict}")

    feeds = {"onnx_mlp": [(64, 256)], "onnx_cnn": [(8, 3, 64, 64)], "onnx_transformer": [(4, 128, 64)]}
    rng = np.random.default_rng(0)
    print(f"\n{'model (largest input)':<22}{'unplanned ms':>14}{'arena ms':>12}{'arena/unplanned':>17}"
          f"   CPU time, median of {reps} interleaved runs")
    for name, shapes in feeds.items():
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        arena, plain = runners(planned_ops[name])
        np.testing.assert_allclose(arena.run(inputs)[0], plain.run(inputs)[0], rtol=1e-5, atol=1e-5)
        plain_s, arena_s = cpu_seconds((plain, arena), inputs, reps)
        print(f"{name:<22}{plain_s * 1e3:>14.2f}{arena_s * 1e3:>12.2f}{arena_s / plain_s:>17.2f}")
    if any(r["ratio"] > TARGET for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
