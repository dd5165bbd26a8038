"""What a GE node costs inside a loaded FlowGraph, against a direct call of the same executable.

Per model (an MLP and a small CNN built with onnx.helper; ResNet-18 and MobileNetV3-small with
random weights when torchvision is installed, exported once into /tmp/models) and per backend
this machine has, a one-node FlowGraph runs the model (`GraphProcessPoint(Framework.ONNX, path)`),
compiled once with `dfir.ge.backend` set. Three variants are timed, one message at a time,
interleaved in rounds so that whatever else loads the machine loads them alike:

  direct    the runner the worker uses (`host.load_ge_runner` on the loaded plan's entry, as
            `host.build_nodes` makes it) called in a loop in this process;
  model     `dfir.load(path)`: `model.feed_data([x])`, then `model.fetch_data()`;
  flowgraph the seeds' way: `graph.feed_data({x: a})`, then `graph.fetch_data()`.

Each call is timed alone; a variant's figure is the median over all rounds, with its 10th-90th
percentile spread. The overhead is a pipeline's median less the direct call's; the target is
at most 50 us plus the copies the node's inputs and outputs need, estimated as the time to
copy their bytes once (`np.copyto` of inputs + outputs into buffers already touched, measured
here). `cpu us` is the CPU time this process and its children (the models' workers) spent per
call, from the scheduler's accounting: on a machine others load it moves far less than the wall
time, so `+cpu us` is the runtime's own work per message. Every pipeline result is checked
against the direct call's. The machine's load (`os.getloadavg`) is printed before and after.

Run: python benchmarks/ge_node_overhead.py [--models mlp,cnn,resnet18,mobilenet_v3_small]
                                           [--backends reference,iree-cpu,onnxruntime]
                                           [--rounds 15] [--seconds 0.2] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the worker and the driver share the cores
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.frontend.options import BACKEND_CHOICES
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from dfir.runtime.worker import host

MODELS_DIR = Path("/tmp/models")
TARGET_US = 50.0
WAIT_MS = 60_000


# -- models -----------------------------------------------------------------------------------

def _write_atomically(path: Path, data: bytes) -> None:
    """Write `path` so that a reader (another process sharing the folder) sees all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(temporary, path)


def _mlp() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w1, b1 = rng.standard_normal((256, 512), np.float32) * 0.05, rng.standard_normal(512, np.float32)
    w2, b2 = rng.standard_normal((512, 10), np.float32) * 0.05, rng.standard_normal(10, np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
             helper.make_node("Add", ["h3", "b2"], ["y"])]
    weights = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    c1, k1 = rng.standard_normal((16, 3, 3, 3), np.float32) * 0.2, rng.standard_normal(16, np.float32)
    c2, k2 = rng.standard_normal((32, 16, 3, 3), np.float32) * 0.1, rng.standard_normal(32, np.float32)
    fc, fb = rng.standard_normal((10, 32), np.float32) * 0.2, rng.standard_normal(10, np.float32)
    nodes = [helper.make_node("Conv", ["x", "c1", "k1"], ["a0"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a0"], ["a1"]),
             helper.make_node("Conv", ["a1", "c2", "k2"], ["a2"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["a2"], ["a3"]),
             helper.make_node("GlobalAveragePool", ["a3"], ["a4"]),
             helper.make_node("Flatten", ["a4"], ["a5"]),
             helper.make_node("Gemm", ["a5", "fc", "fb"], ["y"], transB=1)]
    weights = [numpy_helper.from_array(a, n) for a, n in ((c1, "c1"), (k1, "k1"), (c2, "c2"), (k2, "k2"),
                                                           (fc, "fc"), (fb, "fb"))]
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _torchvision(name: str) -> Path | None:
    """/tmp/models/<name>.onnx (exported with random weights, batch 1, when not there yet), or None
    without torchvision."""
    path = MODELS_DIR / f"{name}.onnx"
    if path.exists():
        return path
    try:
        import torch
        import torchvision
    except ImportError:
        return None
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None).eval()
    with tempfile.TemporaryDirectory() as folder:
        exported = Path(folder) / "model.onnx"
        torch.onnx.export(net, (torch.randn(1, 3, 224, 224),), str(exported), input_names=["x"],
                          output_names=["y"], opset_version=18, dynamo=False)
        _write_atomically(path, onnx.load(str(exported)).SerializeToString())
    return path


def model_path(name: str, folder: Path) -> Path | None:
    if name in ("mlp", "cnn"):
        path = folder / f"{name}.onnx"
        path.write_bytes({"mlp": _mlp, "cnn": _cnn}[name]().SerializeToString())
        return path
    return _torchvision(name)


def input_of(path: Path) -> np.ndarray:
    graph_input = onnx.load(str(path), load_external_data=False).graph.input[0]
    shape = [d.dim_value or 1 for d in graph_input.type.tensor_type.shape.dim]
    return np.random.default_rng(2).standard_normal(shape, np.float32)


# -- the three variants -------------------------------------------------------------------------

class Case:
    """One model compiled for one backend: the direct call, the loaded model and the FlowGraph."""

    def __init__(self, path: Path, backend: str, folder: Path, x: np.ndarray):
        names.reset()
        point = df.GraphProcessPoint(df.Framework.ONNX, str(path))
        data = df.FlowData(name="x")
        self.graph = df.FlowGraph([point.fnode(1, 1)(data)], {"dfir.ge.backend": backend})
        self.data, self.x = data, x
        om_path = folder / f"{path.stem}-{backend}.om"
        compiled = self.graph.compile()
        compiled.save(str(om_path.with_suffix("")))
        self.runner = _runner_as_worker_builds_it(om_path)
        self.model = dfir.load(str(om_path))
        self.expected = np.asarray(self.runner.run([x])[0]).copy()
        self.out_bytes = self.expected.nbytes
        self.check(self.model_call(), "model")
        self.check(self.flowgraph_call(), "flowgraph")

    def direct_call(self):
        return self.runner.run([self.x])[0]

    def model_call(self):
        self.model.feed_data([self.x])
        outputs, _, ret = self.model.fetch_data(timeout=WAIT_MS)
        if ret != 0:
            sys.exit(f"model fetch failed: {int(ret)} {getattr(ret, 'message', '')}")
        return outputs[0]

    def flowgraph_call(self):
        self.graph.feed_data({self.data: self.x})
        outputs, _, ret = self.graph.fetch_data(timeout=WAIT_MS)
        if ret != 0:
            sys.exit(f"flowgraph fetch failed: {int(ret)} {getattr(ret, 'message', '')}")
        return outputs[0]

    def check(self, output, what: str) -> None:
        got = output.numpy() if hasattr(output, "numpy") else np.asarray(output)
        np.testing.assert_allclose(got, self.expected, rtol=1e-4, atol=1e-5, err_msg=what)

    def close(self) -> None:
        self.model.close()
        df.finalize()


def _runner_as_worker_builds_it(om_path: Path):
    """The runner of the .om's one GE graph, as `host.build_nodes` makes it in the worker."""
    model = read_om(str(om_path)).models[0]
    plan = Plan.from_json(model.partition(PartitionType.FLOW_MODEL).data)
    weights = model.partitions_of(PartitionType.WEIGHTS_DATA)
    executables = [p.data for p in model.partitions_of(PartitionType.GE_EXECUTABLE)]
    n, node = next((n, node) for n, node in enumerate(plan.nodes) if hasattr(node.pp, "graph"))
    return host.load_ge_runner(plan.ge_graphs[node.pp.graph], weights[0].data if weights else None,
                               list(zip(plan.executables, executables)), plan.units_of(n)[0].device)


# -- timing ---------------------------------------------------------------------------------------

def timed(call: Callable[[], object], count: int) -> list[float]:
    samples = []
    clock = time.perf_counter
    for _ in range(count):
        start = clock()
        call()
        samples.append(clock() - start)
    return samples


def copy_seconds(nbytes: int, rounds: int = 200) -> float:
    """The median time to copy `nbytes` once between buffers already touched (a memcpy)."""
    source, target = np.ones(max(nbytes, 1), np.uint8), np.zeros(max(nbytes, 1), np.uint8)
    np.copyto(target, source)
    return statistics.median(timed(lambda: np.copyto(target, source), rounds))


def spread(samples: list[float]) -> tuple[float, float, float]:
    """(median, 10th percentile, 90th percentile) in us."""
    q = statistics.quantiles(samples, n=10)
    return statistics.median(samples) * 1e6, q[0] * 1e6, q[-1] * 1e6


VARIANTS = ("direct", "model", "flowgraph")


def cpu_seconds() -> float:
    """CPU time of this process's threads and its child processes' (the models' workers) so far,
    from the scheduler's accounting (/proc/<pid>/task/<tid>/schedstat, in ns)."""
    pids = [os.getpid()]
    for tid in os.listdir("/proc/self/task"):
        try:
            pids += [int(c) for c in open(f"/proc/self/task/{tid}/children").read().split()]
        except OSError:
            pass
    total = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                total += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
            except (OSError, IndexError, ValueError):
                pass
    return total / 1e9


def measure(case: Case, rounds: int, seconds: float) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Per variant: the seconds of each call, and the CPU seconds per call of all processes."""
    per_call = statistics.median(timed(case.direct_call, 5))
    count = max(3, min(400, int(seconds / max(per_call, 1e-6))))
    calls = {"direct": case.direct_call, "model": case.model_call, "flowgraph": case.flowgraph_call}
    for call in calls.values():  # warm every path
        timed(call, max(2, count // 4))
    samples: dict[str, list[float]] = {v: [] for v in VARIANTS}
    cpu = {v: 0.0 for v in VARIANTS}
    for r in range(rounds):
        order = VARIANTS if r % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            before = cpu_seconds()
            samples[variant] += timed(calls[variant], count)
            cpu[variant] += cpu_seconds() - before
    case.check(case.model_call(), "model")
    case.check(case.flowgraph_call(), "flowgraph")
    return samples, {v: cpu[v] / len(samples[v]) for v in VARIANTS}


def backends(wanted: str | None) -> list[str]:
    available = [b for b in ("reference", "iree-cpu", "onnxruntime") if b in BACKEND_CHOICES]
    return [b for b in wanted.split(",") if b in available] if wanted else available


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="mlp,cnn,resnet18,mobilenet_v3_small")
    parser.add_argument("--backends", default=None, help="default: every backend dfir knows")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=0.2, help="per variant per round")
    parser.add_argument("--skip-reference-above", type=float, default=20.0,
                        help="ms per direct call above which a reference run is skipped")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        args.models, args.rounds, args.seconds = "mlp", 2, 0.02
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.models.split(","):
            path = model_path(name, folder)
            if path is None:
                print(f"{name}: skipped (torchvision is not installed)")
                continue
            x = input_of(path)
            for backend in backends(args.backends):
                try:
                    case = Case(path, backend, folder, x)
                except Exception as error:  # noqa: BLE001 - a backend that cannot run a model is reported
                    print(f"{name} on {backend}: skipped ({type(error).__name__}: {str(error)[:160]})")
                    continue
                try:
                    direct_ms = statistics.median(timed(case.direct_call, 3)) * 1e3
                    if backend == "reference" and direct_ms > args.skip_reference_above:
                        print(f"{name} on {backend}: skipped ({direct_ms:.0f} ms a call)")
                        continue
                    samples, cpu = measure(case, args.rounds, args.seconds)
                    copies = copy_seconds(x.nbytes + case.out_bytes) * 1e6
                    rows.append((name, backend, samples, copies, cpu))
                    _print_row(*rows[-1])
                finally:
                    case.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{'model':20} {'backend':11} {'variant':9} {'median us':>10} {'p10-p90 us':>18} "
          f"{'+us':>8} {'limit us':>9} {'cpu us':>9} {'+cpu us':>8}  verdict")
    for row in rows:
        _print_table(*row)
    print(json.dumps([{"name": n, "backend": b, "copy_us": round(c, 2),
                       **{v: [round(q, 1) for q in spread(s[v])] for v in VARIANTS},
                       "cpu_us": {v: round(u[v] * 1e6, 1) for v in VARIANTS}}
                      for n, b, s, c, u in rows]))


def _print_row(name, backend, samples, copies, cpu) -> None:
    medians = {v: spread(samples[v])[0] for v in VARIANTS}
    print(f"{name} on {backend}: direct {medians['direct']:.1f} us, model +{medians['model'] - medians['direct']:.1f}"
          f" us, flowgraph +{medians['flowgraph'] - medians['direct']:.1f} us (copies {copies:.1f} us)", flush=True)


def _print_table(name, backend, samples, copies, cpu) -> None:
    """One line per variant; `cpu us`: the CPU time all processes spent per call (load changes it
    far less than the wall time it took)."""
    direct = spread(samples["direct"])[0]
    limit = TARGET_US + copies
    for variant in VARIANTS:
        median, low, high = spread(samples[variant])
        extra = "" if variant == "direct" else f"{median - direct:8.1f}"
        extra_cpu = "" if variant == "direct" else f"{(cpu[variant] - cpu['direct']) * 1e6:8.1f}"
        verdict = "" if variant == "direct" else ("met" if median - direct <= limit else "MISSED")
        print(f"{name:20} {backend:11} {variant:9} {median:10.1f} {f'{low:.1f}-{high:.1f}':>18} "
              f"{extra:>8} {'' if variant == 'direct' else f'{limit:9.1f}':>9} {cpu[variant] * 1e6:9.1f} "
              f"{extra_cpu:>8}  {verdict}")


if __name__ == "__main__":
    main()
