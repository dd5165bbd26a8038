"""GE graph execution: dfir's reference kernels against onnxruntime, same models, same inputs.

An MLP (784-512-256-10) and a small CNN (3x32x32: three conv blocks, global pool, dense) are
built with onnx.helper. Each runs, in the same process and on the same inputs, as
  ort     an onnxruntime CPU session (the baseline),
  runner  dfir's GeGraphRunner on the imported graph's plan entry (kernels only),
  model   the compiled .om loaded with dfir.load, through feed_data / fetch_data (adds the
          scheduler thread and message passing per transaction).
Outputs are checked against onnxruntime before timing. Times are medians per run in ms; ratios
are dfir time / onnxruntime time (lower is better). Both sides use the same number of threads:
OPENBLAS_NUM_THREADS (numpy's BLAS; 1 unless set) is also onnxruntime's intra-op thread count.

Run: python benchmarks/ge_exec.py [--batches 1,32] [--repeats 30] [--smoke]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads its BLAS
THREADS = int(os.environ["OPENBLAS_NUM_THREADS"])

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import dfir
import dfir.data_type as dt
from dfir.ge.graph import Graph
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.runtime.ge_runner import GeGraphRunner


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


def _runner(graph: Graph) -> GeGraphRunner:
    """The graph's plan entry with its weights packed as the .om's WEIGHTS_DATA would be."""
    entry, arrays = lower_ge_graph(graph.to_ir())
    buffer, descs = bytearray(), []
    for array in arrays:
        buffer += bytes(-len(buffer) % 64)
        descs.append({"offset": len(buffer), "size": array.nbytes, "dtype": dt.from_numpy(array.dtype).name,
                      "shape": list(array.shape)})
        buffer += array.tobytes()
    entry["weights"] = descs
    return GeGraphRunner(entry, bytes(buffer))


def _median_ms(run: Callable[[], object], repeats: int) -> float:
    run()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def measure(name: str, proto: onnx.ModelProto, batch: int, repeats: int, rng: np.random.Generator) -> dict:
    shape = [d.dim_value or batch for d in proto.graph.input[0].type.tensor_type.shape.dim]
    x = rng.standard_normal(shape).astype(np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})[0]
    graph = Graph.from_onnx(proto)
    runner = _runner(graph)
    np.testing.assert_allclose(runner.run([x])[0], expected, rtol=1e-4, atol=1e-5)
    with dfir.load(dfir.compile(graph).om) as model:
        def through_model():
            model.feed_data([x])
            outputs, _, ret = model.fetch_data(timeout=60000)
            assert ret == 0
            return outputs[0].numpy()
        np.testing.assert_allclose(through_model(), expected, rtol=1e-4, atol=1e-5)
        row = {"model": name, "batch": batch,
               "ort": _median_ms(lambda: session.run(None, {"x": x}), repeats),
               "runner": _median_ms(lambda: runner.run([x]), repeats),
               "compiled": _median_ms(through_model, repeats)}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,32", help="comma-separated batch sizes")
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per measurement (median reported)")
    parser.add_argument("--smoke", action="store_true", help="batch 1, 3 repeats: a quick check for CI")
    args = parser.parse_args()
    batches = [1] if args.smoke else [int(b) for b in args.batches.split(",")]
    repeats = 3 if args.smoke else args.repeats
    rng = np.random.default_rng(0)
    print(f"threads: {THREADS} (numpy BLAS and onnxruntime intra-op)")
    print(f"{'model':6} {'batch':>5} {'ort ms':>9} {'runner ms':>10} {'runner/ort':>11} {'model ms':>9} {'model/ort':>10}")
    for name, build in (("mlp", mlp), ("cnn", cnn)):
        proto = build(rng)
        for batch in batches:
            r = measure(name, proto, batch, repeats, rng)
            print(f"{r['model']:6} {r['batch']:5d} {r['ort']:9.3f} {r['runner']:10.3f} {r['runner'] / r['ort']:11.2f} "
                  f"{r['compiled']:9.3f} {r['compiled'] / r['ort']:10.2f}")


if __name__ == "__main__":
    main()
