"""Real models: dfir's GE backends against onnxruntime on torchvision CNNs and two small transformers.

Models (random weights, nothing downloaded): ResNet-18/50, MobileNetV2, MobileNetV3-small,
EfficientNet-B0, SqueezeNet 1.1, ShuffleNetV2 x1.0, DenseNet-121, RegNetY-400MF, ConvNeXt-tiny
(torchvision, `weights=None`, 3x224x224), a small BERT (4 layers, hidden 256, 4 heads, vocabulary
8192) and a small GPT-2 (4 layers, width 256, 4 heads, vocabulary 8192), both over 128 tokens and
giving their last hidden state. Each is exported once per batch size (static shapes, one file per
batch: `NAME_bBATCH.onnx`) with `torch.onnx.export(..., opset_version=18, dynamo=False)` into
--cache-dir, where later runs find it.

Per model, batch and thread count T (`--threads 1,all`; `all` is every core), the same inputs run as
  ort       an onnxruntime CPU session with `intra_op_num_threads=T` (the baseline),
  B model   the model as a one-node FlowGraph (`df.GraphProcessPoint(df.Framework.ONNX, path)`)
            compiled with {"dfir.ge.backend": B, "dfir.ge.threads": T}, its `.om` loaded with
            `dfir.load` and run with `model.feed_data([x])` / `fetch_data()` (the model's path),
  B pipe    the same FlowGraph run as the seeds' users do: `graph.feed_data({x: array})` /
            `graph.fetch_data()` (its first feed loads it from the compile cache),
for every backend B of --backends (`iree-cpu`, `onnxruntime`, `auto`). A backend the installed dfir
does not know shows `n/a`; when it does not know `dfir.ge.threads`, the dfir rows run with each
backend's own thread count, the same model in every thread row (the output says so).

Timing: variants are interleaved (one run of each, in a rotating order, per round; one warm-up round),
--repeats rounds; each cell is the median ms and the spread [min-max]. Every output of every timed
run is checked against onnxruntime's (after its clock stops). Ratios are dfir / onnxruntime at equal
threads (lower is better), with the geometric mean of each column.

Compile: cold is the ONNX import (GraphProcessPoint) and `dfir.compile` with an empty compile cache
(`ge.graph_compiler_cache_dir` + `ge.graph_key`) and no IREE executable kept in the process, warm the
same FlowGraph compiled again (cache hit), in seconds; for `auto`, the backend it chose and what it
measured (from the compile report).

Run: pip install -e '.[bench]' && python benchmarks/real_models.py [--models resnet18,bert]
     [--batches 1,8] [--threads 1,all] [--backends iree-cpu,onnxruntime,auto] [--repeats 10]
     [--cache-dir ~/.cache/dfir-bench/models] [--smoke]
--smoke needs no torch: one small CNN built with onnx.helper, batch 1, 1 thread, 3 repeats.
"""
from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import dfir
import dfir.dataflow as df
from dfir.ge.error import GeError

CORES = os.cpu_count() or 1
BACKENDS = ("iree-cpu", "onnxruntime", "auto")
THREADS_OPTION = "dfir.ge.threads"
VOCAB, TOKENS = 8192, 128
RTOL, ATOL = 1e-3, 1e-4  # atol scaled by the output's largest magnitude (deep random-weight CNNs grow)


# -- models ---------------------------------------------------------------------------------------

def _torchvision(name: str):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return build


def _bert():
    from transformers import BertConfig, BertModel
    config = BertConfig(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=1024, max_position_embeddings=TOKENS)
    return _LastHidden(BertModel(config, add_pooling_layer=False), config)


def _gpt2():
    from transformers import GPT2Config, GPT2Model
    config = GPT2Config(vocab_size=VOCAB, n_positions=TOKENS, n_embd=256, n_layer=4, n_head=4, use_cache=False)
    return _LastHidden(GPT2Model(config), config)


def _LastHidden(model, config):
    """The model's last hidden state as its one output; eager attention and an all-ones attention
    mask keep the trace to ops ONNX has (without a mask GPT-2 looks for packed sequences with aten::diff)."""
    import torch
    config._attn_implementation = "eager"

    class LastHidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids):
            return self.model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids)).last_hidden_state
    return LastHidden()


# name -> (builder of the torch module, input kind)
MODELS: dict[str, tuple[Callable, str]] = {
    "resnet18": (_torchvision("resnet18"), "image"),
    "resnet50": (_torchvision("resnet50"), "image"),
    "mobilenet_v2": (_torchvision("mobilenet_v2"), "image"),
    "mobilenet_v3_small": (_torchvision("mobilenet_v3_small"), "image"),
    "efficientnet_b0": (_torchvision("efficientnet_b0"), "image"),
    "squeezenet1_1": (_torchvision("squeezenet1_1"), "image"),
    "shufflenet_v2_x1_0": (_torchvision("shufflenet_v2_x1_0"), "image"),
    "densenet121": (_torchvision("densenet121"), "image"),
    "regnet_y_400mf": (_torchvision("regnet_y_400mf"), "image"),
    "convnext_tiny": (_torchvision("convnext_tiny"), "image"),
    "bert": (_bert, "tokens"),
    "gpt2": (_gpt2, "tokens"),
}


def export(name: str, batch: int, cache_dir: Path) -> Path:
    """`name` at `batch` as ONNX in `cache_dir` (exported once; seeds fixed, so a rerun is the same)."""
    path = cache_dir / f"{name}_b{batch}.onnx"
    if path.exists():
        return path
    import torch
    build, kind = MODELS[name]
    torch.manual_seed(0)
    model = build().eval()
    example = (torch.randn(batch, 3, 224, 224) if kind == "image" else torch.randint(0, VOCAB, (batch, TOKENS)),)
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with torch.no_grad():
        torch.onnx.export(model, example, str(partial), opset_version=18, dynamo=False,
                          input_names=["x"], output_names=["y"])
    partial.rename(path)
    return path


def tiny_cnn(path: Path) -> Path:
    """The smoke model, without torch: 3x32x32 through a strided conv, batch norm, ReLU6, an inverted
    residual (depthwise 3x3, pointwise 1x1, skip add), global pool and a dense layer to 10."""
    rng = np.random.default_rng(0)
    n = helper.make_node
    nodes = [n("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
             n("BatchNormalization", ["c0", "scale", "shift", "mean", "var"], ["b0"]),
             n("Clip", ["b0", "zero", "six"], ["a0"]),
             n("Conv", ["a0", "wd"], ["c1"], pads=[1, 1, 1, 1], group=16), n("Relu", ["c1"], ["a1"]),
             n("Conv", ["a1", "wp"], ["c2"]), n("Add", ["a0", "c2"], ["r"]),
             n("GlobalAveragePool", ["r"], ["g"]), n("Flatten", ["g"], ["f"]), n("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    shapes = {"w0": (16, 3, 3, 3), "wd": (16, 1, 3, 3), "wp": (16, 16, 1, 1), "wf": (10, 16), "bf": (10,),
              "scale": (16,), "shift": (16,), "mean": (16,)}
    tensors = [numpy_helper.from_array((rng.standard_normal(s) / np.sqrt(np.prod(s[1:]) or 1)).astype(np.float32), k)
               for k, s in shapes.items()]
    tensors += [numpy_helper.from_array(rng.uniform(0.5, 2, 16).astype(np.float32), "var"),
                numpy_helper.from_array(np.array(0, np.float32), "zero"), numpy_helper.from_array(np.array(6, np.float32), "six")]
    graph = helper.make_graph(nodes, "tiny_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], tensors)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def model_input(path: Path, rng: np.random.Generator) -> np.ndarray:
    """A random input of the model's one input: images N(0, 1), token ids in [0, VOCAB)."""
    (value,) = onnx.load(str(path), load_external_data=False).graph.input
    shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
    if value.type.tensor_type.elem_type == TensorProto.INT64:
        return rng.integers(0, VOCAB, shape, dtype=np.int64)
    return rng.standard_normal(shape).astype(np.float32)


# -- variants -------------------------------------------------------------------------------------

def threads_option_known() -> bool:
    """Whether the installed dfir accepts `dfir.ge.threads` (an unknown option is a GeError naming it)."""
    try:
        df.FlowGraph([df.GraphProcessPoint(df.Framework.ONNX, tiny_graph()).fnode(1, 1)(df.FlowData())],
                     {THREADS_OPTION: "1"})
    except GeError as error:
        if THREADS_OPTION in str(error):
            return False
        raise
    return True


def tiny_graph():
    from dfir.ge.graph import Graph
    g = Graph("probe")
    g.set_outputs([g.relu(g.data(0, [1], df.DT_FLOAT, name="x"))])
    return g


def unknown_backend(error: GeError, backend: str) -> bool:
    """The error says the installed dfir does not know `backend` (not that it failed on a model)."""
    return "dfir.ge.backend" in str(error) and backend in str(error)


def check(outputs: list[np.ndarray], expected: list[np.ndarray], what: str) -> None:
    assert len(outputs) == len(expected), f"{what}: {len(outputs)} outputs, expected {len(expected)}"
    for got, want in zip(outputs, expected):
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * scale, err_msg=what)


@dataclass
class Variant:
    label: str             # "ort", "iree-cpu model", "auto pipe", ...
    threads: int | None    # None: the backend's own thread count (dfir.ge.threads unknown)
    run: Callable[[], list[np.ndarray]] | None
    times: list[float] = field(default_factory=list)
    error: str = ""


@dataclass
class Compiled:
    backend: str
    threads: int | None
    cold: float
    warm: float
    chose: str


def ort_session(path: Path, threads: int) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # onnxruntime's pool spins on after a run by default, taking a core from whatever runs next in
    # the interleaved rounds (measured: the variant after the baseline ran up to 2.5x slower); its
    # own runs are timed inside Run, which stopping the spin at Run's end does not change
    options.add_session_config_entry("session.force_spinning_stop", "1")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def chosen_backend(report) -> str:
    """What the compile report says the graph runs on: the `auto:` line of a backend chosen by
    measuring (`auto: @g onnxruntime (onnxruntime 0.03 ms; iree-cpu 0.09 ms)`), else the codegen
    line (`convert-ge-to-linalg: @g iree-cpu`); "?" when neither is there (a cache hit)."""
    lines = str(report).splitlines()
    for prefix in ("auto:", "convert-ge-to-linalg:"):
        for line in lines:
            if line.startswith(prefix):
                found = re.match(r"\S+ @\S+ (.*)", line)
                chose = found.group(1) if found else line.split(":", 1)[1].strip()
                return chose if len(chose) <= 160 else chose[:157] + "..."
    return "?"


def forget_compiled() -> None:
    """Make a cold compile compile, as in a fresh process: empty the process's memo of IREE
    executables, where the installed dfir keeps one."""
    try:
        from dfir.lowering.iree_executable import forget_compiled as forget
    except ImportError:
        return
    forget()


def dfir_variants(path: Path, x: np.ndarray, backend: str, threads: int | None, key: str, cache_root: Path,
                  closers: list) -> tuple[list[Variant], Compiled]:
    """Compile the one-node FlowGraph cold and warm; its model path and its pipeline path."""
    options = {"dfir.ge.backend": backend, "ge.graph_key": key}
    if threads is not None:
        options[THREADS_OPTION] = str(threads)
    cache = cache_root / key
    cache.mkdir()
    options["ge.graph_compiler_cache_dir"] = str(cache)
    forget_compiled()
    start = time.perf_counter()
    data = df.FlowData()
    flow = df.FlowGraph([df.GraphProcessPoint(df.Framework.ONNX, str(path)).fnode(1, 1)(data)], options)
    compiled = dfir.compile(flow)
    cold = time.perf_counter() - start
    chose = chosen_backend(compiled.report)  # a cache hit's report has no codegen line
    start = time.perf_counter()
    compiled = dfir.compile(flow)
    warm = time.perf_counter() - start
    model = dfir.load(compiled.om)
    closers.append(model.close)
    flow.feed_data({data: x})  # the first feed loads the FlowGraph (from the compile cache)
    flow.fetch_data(timeout=600_000)

    def through_model():
        model.feed_data([x])
        tensors, _, ret = model.fetch_data(timeout=600_000)
        assert ret == 0, ret
        return [t.numpy() for t in tensors]

    def through_pipeline():
        flow.feed_data({data: x})
        tensors, _, ret = flow.fetch_data(timeout=600_000)
        assert ret == 0, ret
        return [t.numpy() for t in tensors]
    return ([Variant(f"{backend} model", threads, through_model), Variant(f"{backend} pipe", threads, through_pipeline)],
            Compiled(backend, threads, cold, warm, chose))


def time_interleaved(variants: list[Variant], expected: list[np.ndarray], repeats: int, what: str) -> None:
    """One warm-up round, then `repeats` rounds of one run per variant in a rotating order."""
    running = [v for v in variants if not v.error]
    for round_ in range(repeats + 1):
        shift = round_ % len(running)
        for v in running[shift:] + running[:shift]:
            start = time.perf_counter()
            try:
                outputs = v.run()
                elapsed = time.perf_counter() - start
                check(outputs, expected, f"{what} {v.label} threads={v.threads}")
            except Exception as error:  # noqa: BLE001 - reported with the tables, the other variants go on
                v.error, v.times = _first_line(error), []
                running.remove(v)
                continue
            if round_:
                v.times.append(elapsed * 1e3)


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    lines = [line for line in text.splitlines() if "Mismatch" in line or "Max abs" in line or "Max rel" in line]
    return f"{type(error).__name__}: " + ("; ".join(lines) if lines else text.splitlines()[0] if text else "")[:300]


@dataclass
class Result:
    model: str
    batch: int
    cells: dict[tuple[str, int | None], list[float]]  # (label, threads) -> ms per run
    compiles: list[Compiled]
    unavailable: set[str]
    failures: list[str]


def measure(name: str, path: Path, batch: int, args, threads: list[int], dfir_threads: list[int | None],
            cache_root: Path) -> Result:
    x = model_input(path, np.random.default_rng(batch))
    compiles, unavailable, failures, closers, variants = [], set(), [], [], []
    try:
        for backend in args.backends:
            for t in dfir_threads:
                key = f"{name}_b{batch}_{backend}_t{t}".replace(".", "_")
                try:
                    more, compiled = dfir_variants(path, x, backend, t, key, cache_root, closers)
                except Exception as error:  # noqa: BLE001 - reported with the tables, the other backends go on
                    if isinstance(error, GeError) and unknown_backend(error, backend):
                        unavailable.add(backend)
                        break
                    failures.append(f"{backend} threads={t}: compile or load failed: {_first_line(error)}")
                    variants += [Variant(f"{backend} {p}", t, None, error="compile or load") for p in ("model", "pipe")]
                    continue
                variants += more
                compiles.append(compiled)
        # onnxruntime's sessions (and their thread pools) only once every dfir worker has forked
        sessions = {t: ort_session(path, t) for t in threads}
        input_name = sessions[threads[0]].get_inputs()[0].name
        expected = sessions[threads[0]].run(None, {input_name: x})
        variants[:0] = [Variant("ort", t, lambda s=s: s.run(None, {input_name: x})) for t, s in sessions.items()]
        time_interleaved(variants, expected, args.repeats, f"{name} batch {batch}")
    finally:
        for close in closers:
            close()
        df.finalize()
    failures += [f"{v.label} threads={v.threads}: {v.error}" for v in variants if v.error and v.run]
    for v in variants:
        print(f"  {v.label:18} threads={v.threads}: {_cell(v.times if not v.error else [])} ms", flush=True)
    for c in compiles:
        print(f"  compile {c.backend:12} threads={c.threads}: cold {c.cold:.2f} s, warm {c.warm:.3f} s, chose {c.chose}",
              flush=True)
    for failure in failures:
        print(f"  FAILED {name} batch {batch} {failure}", flush=True)
    return Result(name, batch, {(v.label, v.threads): v.times for v in variants}, compiles, unavailable, failures)


# -- report ---------------------------------------------------------------------------------------

def _cell(times: list[float] | None) -> str:
    if times is None:
        return "n/a"
    if not times:
        return "failed"
    return f"{statistics.median(times):.2f} [{min(times):.2f}-{max(times):.2f}]"


def _thread_label(t: int) -> str:
    return f"{t} (all)" if t == CORES and t != 1 else str(t)


def report(results: list[Result], backends: list[str], threads: list[int], threads_known: bool) -> None:
    labels = ["ort"] + [f"{b} {p}" for b in backends for p in ("model", "pipe")]
    width = 22
    print("\nms per run: median [min-max]")
    print(f"{'model':19} {'batch':>5} {'threads':>7} " + " ".join(f"{label:>{width}}" for label in labels))
    ratios: dict[str, list[float]] = {label: [] for label in labels[1:]}
    ratio_rows = []
    for r in results:
        for t in threads:
            def times(label):
                return r.cells.get((label, t if label == "ort" or threads_known else None))
            print(f"{r.model:19} {r.batch:5d} {_thread_label(t):>7} "
                  + " ".join(f"{_cell(times(label)):>{width}}" for label in labels))
            base = statistics.median(times("ort"))
            row = {}
            for label in labels[1:]:
                if times(label):
                    row[label] = statistics.median(times(label)) / base
                    ratios[label].append(row[label])
            ratio_rows.append((r.model, r.batch, t, row))
    print("\ndfir / onnxruntime at equal threads (median over median; lower is better)")
    print(f"{'model':19} {'batch':>5} {'threads':>7} " + " ".join(f"{label:>16}" for label in labels[1:]))
    for model, batch, t, row in ratio_rows:
        print(f"{model:19} {batch:5d} {_thread_label(t):>7} "
              + " ".join(f"{row[label]:16.2f}" if label in row else f"{'n/a':>16}" for label in labels[1:]))
    print(f"{'geometric mean':19} {'':5} {'':7} " + " ".join(
        f"{math.exp(statistics.fmean(math.log(v) for v in ratios[label])):16.2f}" if ratios[label] else f"{'n/a':>16}"
        for label in labels[1:]))
    print("\ncompile s: cold (ONNX import + compile, empty cache), warm (cache hit); auto: the backend it chose")
    print(f"{'model':19} {'batch':>5} {'backend':>12} {'threads':>7} {'cold':>8} {'warm':>8}  chose")
    for r in results:
        for c in r.compiles:
            t = "own" if c.threads is None else _thread_label(c.threads)
            print(f"{r.model:19} {r.batch:5d} {c.backend:>12} {t:>7} {c.cold:8.2f} {c.warm:8.3f}  {c.chose}")
        for backend in sorted(r.unavailable):
            print(f"{r.model:19} {r.batch:5d} {backend:>12} {'':>7} {'n/a':>8} {'n/a':>8}  "
                  f"(the installed dfir does not know dfir.ge.backend={backend})")
    failures = [f"{r.model} batch {r.batch} {f}" for r in results for f in r.failures]
    print(f"\nfailures: {len(failures)}" + "".join(f"\n  {f}" for f in failures))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    parser.add_argument("--batches", default="1,8", help="comma-separated batch sizes")
    parser.add_argument("--threads", default="1,all", help="comma-separated thread counts; all = every core")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated dfir.ge.backend values")
    parser.add_argument("--repeats", type=int, default=10, help="timed rounds (median and min-max reported)")
    parser.add_argument("--cache-dir", default="~/.cache/dfir-bench/models", help="where exported models are kept")
    parser.add_argument("--smoke", action="store_true", help="a small onnx.helper CNN (no torch), batch 1, "
                                                             "1 thread, 3 repeats: a quick check for CI")
    args = parser.parse_args()
    args.backends = args.backends.split(",")
    threads = sorted({CORES if t == "all" else int(t) for t in ("1" if args.smoke else args.threads).split(",")})
    batches = [1] if args.smoke else [int(b) for b in args.batches.split(",")]
    args.repeats = 3 if args.smoke else args.repeats
    threads_known = threads_option_known()
    print(f"cores: {CORES}; backends: {', '.join(args.backends)}; dfir {THREADS_OPTION}: "
          + ("set to each thread count" if threads_known else
             "unknown to the installed dfir, not set: dfir rows run each backend with its own threads "
             "(the same compiled model in every thread row)"))
    dfir_threads: list[int | None] = list(threads) if threads_known else [None]
    cache_dir = Path(args.cache_dir).expanduser()
    results = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        if args.smoke:
            jobs = [("tiny_cnn", 1, tiny_cnn(work / "tiny_cnn.onnx"))]
        else:
            models = args.models.split(",")
            unknown = sorted(set(models) - set(MODELS))
            if unknown:
                parser.error(f"unknown models {unknown}; known: {', '.join(MODELS)}")
            jobs = [(name, batch, export(name, batch, cache_dir)) for name in models for batch in batches]
        for name, batch, path in jobs:
            print(f"{name} batch {batch} ({path})", flush=True)
            results.append(measure(name, path, batch, args, threads, dfir_threads, work))
    report(results, args.backends, threads, threads_known)
    if any(r.failures for r in results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
