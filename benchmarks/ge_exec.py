"""GE graph execution: dfir's backends against onnxruntime, same models, same inputs, one run.

Three models are built with onnx.helper: an MLP (784-512-256-10), a small CNN (3x32x32: three
conv blocks, global pool, dense) and a transformer block (sequence 64, width 128, 4 heads, MLP
512). Each runs, in the same process and on the same inputs, as
  ort      an onnxruntime CPU session (the baseline),
  ref      the graph compiled with dfir.ge.backend=reference, loaded with dfir.load and run
           through feed_data / fetch_data (numpy kernels, scheduler thread, message passing),
  iree     the same with dfir.ge.backend=iree-cpu (the IREE executable in the .om),
  call     the IREE executable called directly (IreeGraphRunner: no scheduler, no messages).
Outputs are checked against onnxruntime before timing. Times are medians per run in ms; the
ratios are dfir / onnxruntime (lower is better) and ref / iree (the speedup of compiling).
Both sides use THREADS threads: numpy's BLAS (OPENBLAS_NUM_THREADS) and onnxruntime's intra-op
pool; IREE's CPU driver (local-sync) runs one thread per call whatever THREADS is.

The compile table gives, per model, the cold compile (import to .om, IREE included) and the warm
one (compile cache on, unchanged graph) of each backend, in seconds.

--sweep compiles each model's codegen module with extra IREE flags and times the direct call,
to see which flags matter (the flags dfir uses are `lowering.iree_executable.compile_flags`).

--cnns DIR times the ONNX models in DIR (e.g. torchvision exports at batch 1) instead: onnxruntime
at 1 and 2 intra-op threads against the direct call of each IREE CPU variant
(`lowering.iree_executable.CPU_VARIANTS`) at 1 and 2 threads (runtime.iree_device: local-sync,
local-task), interleaved round by round; outputs checked against onnxruntime (a variant that does
not compile or is wrong is reported, not timed); medians with the quartiles, ratio to onnxruntime
at one thread, and the geomean of each column.

Run: [OPENBLAS_NUM_THREADS=N] python benchmarks/ge_exec.py [--batches 1,32] [--repeats 30] [--sweep] [--smoke]
     python benchmarks/ge_exec.py --cnns /tmp/models [--repeats 12]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS
THREADS = int(os.environ["OPENBLAS_NUM_THREADS"])

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import iree.compiler
import iree.runtime

import dfir
from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.ge.graph import Graph
from dfir.lowering.codegen import codegen_module_text, parameter_values
from dfir.lowering.iree_executable import CPU_VARIANTS, compile_executable, compile_flags, custom_form
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.ge.iree_device import loaded_module, parameters_module
from dfir.runtime.ge.iree_runner import IreeGraphRunner
from dfir.runtime.om import read_om


def _weights(rng: np.random.Generator, **shapes) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array((rng.standard_normal(s) / np.sqrt(np.prod(s[1:]) or 1)).astype(np.float32), n)
            for n, s in shapes.items()]


def mlp(rng: np.random.Generator) -> onnx.ModelProto:
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1), helper.make_node("Relu", ["h1"], ["a1"]),
             helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"], transB=1), helper.make_node("Relu", ["h2"], ["a2"]),
             helper.make_node("Gemm", ["a2", "w3", "b3"], ["h3"], transB=1), helper.make_node("Softmax", ["h3"], ["y"])]
    weights = _weights(rng, w1=(512, 784), b1=(512,), w2=(256, 512), b2=(256,), w3=(10, 256), b3=(10,))
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 784])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def cnn(rng: np.random.Generator) -> onnx.ModelProto:
    nodes, weights, x = [], {}, "x"
    for i, (cin, cout) in enumerate([(3, 16), (16, 32), (32, 64)]):
        nodes += [helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"]),
                  helper.make_node("MaxPool", [f"r{i}"], [f"p{i}"], kernel_shape=[2, 2], strides=[2, 2])]
        weights |= {f"w{i}": (cout, cin, 3, 3), f"b{i}": (cout,)}
        x = f"p{i}"
    nodes += [helper.make_node("GlobalAveragePool", [x], ["g"]), helper.make_node("Flatten", ["g"], ["f"]),
              helper.make_node("Gemm", ["f", "wd", "bd"], ["y"], transB=1)]
    weights |= {"wd": (10, 64), "bd": (10,)}
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], _weights(rng, **weights))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def transformer(rng: np.random.Generator, seq: int = 64, width: int = 128, heads: int = 4) -> onnx.ModelProto:
    """Pre-norm self-attention and MLP with residuals; input and output [N, seq, width]."""
    head_width = width // heads
    n = helper.make_node
    nodes = [n("LayerNormalization", ["x", "g1", "b1"], ["ln1"], axis=-1),
             *(n("MatMul", ["ln1", f"w{p}"], [f"{p}0"]) for p in "qkv"),
             *(n("Reshape", [f"{p}0", "heads"], [f"{p}1"]) for p in "qkv"),
             n("Transpose", ["q1"], ["q"], perm=[0, 2, 1, 3]), n("Transpose", ["k1"], ["kt"], perm=[0, 2, 3, 1]),
             n("Transpose", ["v1"], ["v"], perm=[0, 2, 1, 3]),
             n("MatMul", ["q", "kt"], ["s0"]), n("Div", ["s0", "scale"], ["s1"]), n("Softmax", ["s1"], ["p"], axis=-1),
             n("MatMul", ["p", "v"], ["o0"]), n("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
             n("Reshape", ["o1", "merged"], ["o2"]), n("MatMul", ["o2", "wo"], ["o3"]), n("Add", ["x", "o3"], ["r1"]),
             n("LayerNormalization", ["r1", "g2", "b2"], ["ln2"], axis=-1),
             n("MatMul", ["ln2", "w1"], ["f0"]), n("Gelu", ["f0"], ["f1"]), n("MatMul", ["f1", "w2"], ["f2"]),
             n("Add", ["r1", "f2"], ["y"])]
    weights = _weights(rng, wq=(width, width), wk=(width, width), wv=(width, width), wo=(width, width),
                       w1=(width, 4 * width), w2=(4 * width, width))
    weights += [numpy_helper.from_array(np.full(width, v, np.float32), name)
                for name, v in (("g1", 1), ("b1", 0), ("g2", 1), ("b2", 0))]
    weights += [numpy_helper.from_array(np.array([0, seq, heads, head_width], np.int64), "heads"),
                numpy_helper.from_array(np.array([0, seq, width], np.int64), "merged"),
                numpy_helper.from_array(np.array(np.sqrt(head_width), np.float32), "scale")]
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", seq, width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", seq, width])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


MODELS = {"mlp": mlp, "cnn": cnn, "block": transformer}


def _median_ms(run: Callable[[], object], repeats: int) -> float:
    run()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _session(proto: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _compiled(graph: Graph, backend: str, cache_dir: str | None = None) -> tuple[dfir.CompiledModel, float]:
    options = {"dfir.ge.backend": backend}
    if cache_dir is not None:
        options |= {"ge.graph_compiler_cache_dir": cache_dir, "ge.graph_key": f"{graph.name}_{backend}"}
    start = time.perf_counter()
    compiled = dfir.compile(graph, options)
    return compiled, time.perf_counter() - start


def _direct_call(om: bytes) -> IreeGraphRunner:
    """The runner of the model's one compiled GE graph, on its executable in the .om."""
    model = read_om(om).models[0]
    plan = Plan.from_json(model.partition(PartitionType.FLOW_MODEL).data)
    (entry,) = plan.ge_graphs
    vmfb = model.partitions_of(PartitionType.GE_EXECUTABLE)[entry.executable].data
    weights = [p.data for p in model.partitions_of(PartitionType.WEIGHTS_DATA)]
    return IreeGraphRunner(entry, vmfb, plan.executables[entry.executable].sha256, "-1", weights[0] if weights else None)


def measure(name: str, proto: onnx.ModelProto, batch: int, repeats: int, rng: np.random.Generator,
            models: dict[str, bytes]) -> dict:
    shape = [d.dim_value or batch for d in proto.graph.input[0].type.tensor_type.shape.dim]
    x = rng.standard_normal(shape).astype(np.float32)
    session = _session(proto)
    expected = session.run(None, {"x": x})[0]
    row = {"model": name, "batch": batch, "ort": _median_ms(lambda: session.run(None, {"x": x}), repeats)}
    for backend in ("reference", "iree-cpu"):
        with dfir.load(models[backend]) as model:
            def through_model():
                model.feed_data([x])
                outputs, _, ret = model.fetch_data(timeout=60000)
                assert ret == 0
                return outputs[0].numpy()
            np.testing.assert_allclose(through_model(), expected, rtol=1e-4, atol=1e-4)
            row[backend] = _median_ms(through_model, repeats)
    runner = _direct_call(models["iree-cpu"])
    np.testing.assert_allclose(runner.run([x])[0], expected, rtol=1e-4, atol=1e-4)
    row["call"] = _median_ms(lambda: runner.run([x]), repeats)
    return row


def compile_times(graph: Graph) -> tuple[dict[str, float], dict[str, bytes]]:
    """Cold and warm (cached) compile seconds per backend, and the compiled .om per backend."""
    times, models = {}, {}
    for backend in ("reference", "iree-cpu"):
        with tempfile.TemporaryDirectory() as cache_dir:
            compiled, times[f"{backend} cold"] = _compiled(graph, backend, cache_dir)
            times[f"{backend} warm"] = _compiled(graph, backend, cache_dir)[1]
        models[backend] = compiled.om
    return times, models


SWEEP = {"default": (), "O3": ("--iree-opt-level=O3",), "data-tiling": ("--iree-opt-data-tiling",),
         "ukernels": ("--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels=all"),
         "O3+data-tiling": ("--iree-opt-level=O3", "--iree-opt-data-tiling")}


def sweep(name: str, graph: Graph, batch: int, repeats: int, rng: np.random.Generator) -> None:
    """Time the direct call of the graph's codegen module compiled with each set of extra flags."""
    module = dfir.compile(graph, {"dfir.ge.backend": "iree-cpu"}, stop_after="codegen").module
    (graph_op,) = [op for op in module.ops if isinstance(op, ge.GraphOp)]
    text = codegen_module_text(graph_op)
    parameters = parameter_values(graph_op)
    x = rng.standard_normal([batch, *(abs(d) for d in graph.inputs[0].shape[1:])]).astype(np.float32)
    for label, extra in SWEEP.items():
        start = time.perf_counter()
        try:
            vmfb = iree.compiler.compile_str(custom_form(text), extra_args=[*compile_flags("iree-cpu"), *extra])
        except iree.compiler.CompilerToolError as error:
            first = next((line for line in str(error).splitlines() if "error:" in line), "failed")
            print(f"  {name:6} {label:16} does not compile: {first.split('error: ')[-1][:100]}")
            continue
        seconds = time.perf_counter() - start
        config = iree.runtime.Config("local-sync")
        context = iree.runtime.SystemContext(vm_modules=[parameters_module(config, parameters),
                                                         iree.runtime.VmModule.copy_buffer(config.vm_instance, vmfb)],
                                             config=config)
        main = context.modules.module.main
        print(f"  {name:6} {label:16} compile {seconds:5.2f} s  call {_median_ms(lambda: main(x).to_host(), repeats):8.3f} ms")


def cnns(folder: str, repeats: int, thread_counts: tuple[int, ...] = (1, 2)) -> None:
    """Time each ONNX model of `folder` on onnxruntime and on every IREE CPU variant (see the module doc)."""
    rows: dict[str, dict[str, float]] = {}
    for file in sorted(f for f in os.listdir(folder) if f.endswith(".onnx")):
        name, proto = file[:-5], onnx.load(os.path.join(folder, file))
        x = np.random.default_rng(0).standard_normal(
            [d.dim_value or 1 for d in proto.graph.input[0].type.tensor_type.shape.dim]).astype(np.float32)
        runs: dict[str, Callable[[], np.ndarray]] = {}
        for threads in thread_counts:
            options = ort.SessionOptions()
            options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
            session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
            runs[f"ort t{threads}"] = lambda session=session: session.run(None, {proto.graph.input[0].name: x})[0]
        expected = runs["ort t1"]()
        module = dfir.compile(Graph.from_onnx(proto), {"dfir.ge.backend": "iree-cpu"}, stop_after="codegen").module
        (graph_op,) = [op for op in module.ops if isinstance(op, ge.GraphOp)]
        text, parameters = codegen_module_text(graph_op), parameter_values(graph_op)
        for variant in CPU_VARIANTS:
            try:
                compiled = compile_executable(text, "iree-cpu", graph=name, variant=variant)
            except GeError as error:
                print(f"{name} {variant}: does not compile: {error.error_message[:160]}")
                continue
            for threads in thread_counts:
                device_module = loaded_module(compiled.vmfb, compiled.sha256, "iree-cpu", "-1", name, parameters, threads)
                call = lambda device_module=device_module: device_module.call([x])[0]
                error = float(np.abs(call() - expected).max() / np.abs(expected).max())
                if error > 1e-3:
                    print(f"{name} {variant} t{threads}: wrong, relative error {error:.3g}")
                    continue
                runs[f"{variant} t{threads}"] = call
        times: dict[str, list[float]] = {label: [] for label in runs}
        for _ in range(repeats):  # interleaved: each round calls every configuration once
            for label, run in runs.items():
                start = time.perf_counter()
                run()
                times[label].append((time.perf_counter() - start) * 1e3)
        rows[name] = {label: statistics.median(t) for label, t in times.items()}
        base = rows[name]["ort t1"]
        for label, t in times.items():
            q1, _, q3 = statistics.quantiles(t, n=4)
            print(f"{name:18} {label:12} {statistics.median(t):9.2f} ms  [{q1:.2f}-{q3:.2f}]  "
                  f"x{statistics.median(t) / base:.2f}", flush=True)
    labels = sorted({label for row in rows.values() for label in row if label != "ort t1"})
    for label in labels:
        ratios = [row[label] / row["ort t1"] for row in rows.values() if label in row]
        print(f"geomean {label:12} x{np.exp(np.mean(np.log(ratios))):.2f} over {len(ratios)} models")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,32", help="comma-separated batch sizes")
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per measurement (median reported)")
    parser.add_argument("--sweep", action="store_true", help="also time the direct call under extra IREE flags")
    parser.add_argument("--smoke", action="store_true", help="batch 1, 3 repeats: a quick check for CI")
    parser.add_argument("--cnns", metavar="DIR", help="time the ONNX models of DIR on every IREE CPU variant")
    args = parser.parse_args()
    if args.cnns:
        return cnns(args.cnns, args.repeats)
    batches = [1] if args.smoke else [int(b) for b in args.batches.split(",")]
    repeats = 3 if args.smoke else args.repeats
    rng = np.random.default_rng(0)
    print(f"threads: {THREADS} (numpy BLAS and onnxruntime intra-op; IREE local-sync: 1)")
    rows, compiles = [], {}
    protos = {name: build(rng) for name, build in MODELS.items()}
    for name, proto in protos.items():
        compiles[name], models = compile_times(Graph.from_onnx(proto))
        rows += [measure(name, proto, batch, repeats, rng, models) for batch in batches]
    print(f"{'model':6} {'batch':>5} {'ort ms':>8} {'ref ms':>8} {'iree ms':>8} {'call ms':>8} {'iree/ort':>9} "
          f"{'call/ort':>9} {'ref/iree':>9}")
    for r in rows:
        print(f"{r['model']:6} {r['batch']:5d} {r['ort']:8.3f} {r['reference']:8.3f} {r['iree-cpu']:8.3f} "
              f"{r['call']:8.3f} {r['iree-cpu'] / r['ort']:9.2f} {r['call'] / r['ort']:9.2f} "
              f"{r['reference'] / r['iree-cpu']:9.2f}")
    print(f"{'compile s':10} {'ref cold':>9} {'ref warm':>9} {'iree cold':>10} {'iree warm':>10} {'warm iree/ref':>14}")
    for name, t in compiles.items():
        print(f"{name:10} {t['reference cold']:9.2f} {t['reference warm']:9.3f} {t['iree-cpu cold']:10.2f} "
              f"{t['iree-cpu warm']:10.3f} {t['iree-cpu warm'] / t['reference warm']:14.2f}")
    if args.sweep:
        print("IREE flags (direct call, batch %d):" % batches[-1])
        for name, proto in protos.items():
            sweep(name, Graph.from_onnx(proto), batches[-1], repeats, rng)


if __name__ == "__main__":
    main()
