"""A vision pipeline: Python preprocessing, ResNet-50, Python postprocessing, against a plain loop.

The pipeline (a FlowGraph, fed with `graph.feed_data({image: array})` and fetched with
`graph.fetch_data()`, as the seeds' users write it):
  preprocess   a @pyflow UDF: a uint8 HxWx3 image resized to 224x224 (nearest neighbour, numpy),
               scaled to [0, 1], normalized by the ImageNet mean and std, as a float32 [1, 3, 224, 224]
  resnet50     `df.GraphProcessPoint(df.Framework.ONNX, "resnet50_b1.onnx")` (torchvision, random
               weights, exported as benchmarks/real_models.py does, into the same --cache-dir), compiled
               with `dfir.ge.backend` --backend and `dfir.ge.threads` all cores (when dfir knows it)
  postprocess  a @pyflow UDF: softmax, then the top 5 classes and their probabilities
Three placements, each compiled through the compile cache (later ones reuse the GE graph's executable):
`separate`, each node on its own logical device (one worker process each: the three stages overlap;
deploy info + resource config in the graph's options); `one`, all three on one device; and
`replicated`, the network on as many devices as there are cores, one thread each (`dfir.ge.threads`
= 1), the two UDFs on a device of their own: whole images in parallel, where one image's
intra-op threads leave cores idle (onnxruntime's two threads run ResNet-50 1.8x, not 2x, as fast
as one).
A feeder thread feeds the images ahead (at most WINDOW in flight, `dfir.runtime.channel_depth` =
WINDOW) while this thread fetches.

The baseline, in the same run: the same three functions in a plain Python loop, the network run
by an onnxruntime session on all cores. Throughput in images/s over --images random uint8 256x320
images (median and [min-max] of --repeats interleaved runs), and dfir / loop (the target is 1.2x or
more). Every image's top 5 is checked against the loop's (classes equal; where two classes swap,
their probabilities must tie within 1e-5).

Run: pip install -e '.[bench]' && python benchmarks/vision_pipeline.py [--images 200] [--repeats 3]
     [--backend auto] [--cache-dir ~/.cache/dfir-bench/models] [--smoke]
--smoke needs no torch: real_models.py's small CNN on 32x32, 20 images of 24x40, 1 repeat.
Timing numpy: with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set, run it as
`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/vision_pipeline.py`.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np
import onnxruntime as ort

import dfir.dataflow as df
from dfir.ge.error import GeError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_models import THREADS_OPTION, chosen_backend, export, threads_option_known, tiny_cnn  # noqa: E402

CORES = os.cpu_count() or 1
WINDOW = 32
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)
PLACEMENTS = ("separate", "one", "replicated")
PLACEMENT_NAMES = {"separate": "dfir, one device per node", "one": "dfir, one device",
                   "replicated": f"dfir, network x{CORES}"}


def make_preprocess(size: int) -> Callable[[np.ndarray], np.ndarray]:
    def preprocess(image):
        height, width, _ = image.shape
        rows = np.arange(size) * height // size
        cols = np.arange(size) * width // size
        resized = image[rows[:, None], cols[None, :]].astype(np.float32) * np.float32(1 / 255)
        return np.ascontiguousarray(((resized - MEAN) / STD).transpose(2, 0, 1)[None])
    return preprocess


def postprocess(logits):
    z = logits[0] - logits[0].max()
    probs = np.exp(z)
    probs /= probs.sum()
    top = np.argsort(-probs, kind="stable")[:5]
    return top.astype(np.int64), probs[top].astype(np.float32)


def check_top5(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray], what: str) -> None:
    (got_classes, got_probs), (want_classes, want_probs) = got, want
    np.testing.assert_allclose(got_probs, want_probs, rtol=1e-3, atol=1e-5, err_msg=what)
    for i in np.flatnonzero(got_classes != want_classes):  # a swap is fine only between tied classes
        assert abs(float(want_probs[i]) - float(got_probs[i])) <= 1e-5 and got_classes[i] in want_classes, \
            f"{what}: top-5 {got_classes.tolist()} != {want_classes.tolist()} (probabilities {want_probs.tolist()})"


def flow_graph(model_path: Path, size: int, placement: str, options: dict[str, str],
               work: Path) -> tuple[df.FlowData, df.FlowGraph]:
    image = df.FlowData(name="image")
    pre = df.pyflow(make_preprocess(size)).fnode(name="preprocess")
    net = df.GraphProcessPoint(df.Framework.ONNX, str(model_path)).fnode(1, 1, name="resnet50")
    post = df.pyflow(num_returns=2)(postprocess).fnode(name="postprocess")
    outputs = post(net(pre(image)))
    options = {**options, "dfir.runtime.channel_depth": str(WINDOW)}
    if placement == "one":
        return image, df.FlowGraph(list(outputs), options)
    if placement == "separate":
        devices = {pre.name: "0:0:0", net.name: "0:0:1", post.name: "0:0:2"}
    else:  # the network once per core, one thread each
        devices = {pre.name: "0:0:0", net.name: f"0:0:1~{CORES}", post.name: "0:0:0"}
        options[THREADS_OPTION] = "1"
    (work / f"deploy_{placement}.json").write_text(json.dumps(
        {"deploy_info": [{"flow_node_name": n, "logic_device_id": d} for n, d in devices.items()]}))
    (work / "resources.json").write_text(json.dumps(
        {"cluster": [{"cluster_nodes": [{"node_id": 0, "node_type": "host", "ipaddr": "127.0.0.1",
                                         "item_list": [{"item_id": d} for d in range(CORES + 1)]}]}]}))
    options |= {"ge.experiment.data_flow_deploy_info_path": str(work / f"deploy_{placement}.json"),
                "ge.resourceConfigPath": str(work / "resources.json")}
    return image, df.FlowGraph(list(outputs), options)


class Pipeline:
    """The FlowGraph, loaded (its first feed compiles through the cache and loads it)."""

    def __init__(self, model_path: Path, size: int, placement: str, options: dict[str, str], work: Path,
                 warm_up: np.ndarray):
        self.placement = placement
        self.image, self.graph = flow_graph(model_path, size, placement, options, work)
        start = time.perf_counter()
        self.backend = chosen_backend(self.graph.compile().report)  # "?" where the cache held the GE graph
        self.graph.feed_data({self.image: warm_up})
        self.fetch()
        self.load_seconds = time.perf_counter() - start

    def fetch(self) -> tuple[int, tuple[np.ndarray, np.ndarray]]:
        """The next result and its transaction id (replicas may finish out of feed order)."""
        tensors, info, ret = self.graph.fetch_data(timeout=600_000)
        assert ret == 0, ret
        return info.transaction_id, (tensors[0].numpy(), tensors[1].numpy())

    def run(self, images: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        credits = threading.Semaphore(WINDOW)

        def feed():
            for image in images:
                credits.acquire()
                self.graph.feed_data({self.image: image})
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        results = []
        for _ in images:
            results.append(self.fetch())
            credits.release()
        feeder.join()
        return [result for _, result in sorted(results, key=lambda fetched: fetched[0])]


def loop(session: ort.InferenceSession, preprocess: Callable, images: list[np.ndarray]) -> list:
    name = session.get_inputs()[0].name
    return [postprocess(session.run(None, {name: preprocess(image)})[0]) for image in images]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=200, help="images per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each way (median and min-max reported)")
    parser.add_argument("--backend", default="auto", help="dfir.ge.backend of the network")
    parser.add_argument("--cache-dir", default="~/.cache/dfir-bench/models", help="where exported models are kept")
    parser.add_argument("--smoke", action="store_true", help="a small CNN (no torch), 20 small images, 1 repeat")
    args = parser.parse_args()
    count, repeats = (20, 1) if args.smoke else (args.images, args.repeats)
    height, width, size = (24, 40, 32) if args.smoke else (256, 320, 224)
    rng = np.random.default_rng(0)
    images = [rng.integers(0, 256, (height, width, 3), dtype=np.uint8) for _ in range(count)]
    preprocess = make_preprocess(size)
    options = {"dfir.ge.backend": args.backend}
    threads_known = threads_option_known()
    if threads_known:
        options[THREADS_OPTION] = str(CORES)
    print(f"cores: {CORES}; {count} images {height}x{width}x3 -> {size}x{size}; dfir.ge.backend={args.backend}, "
          + (f"{THREADS_OPTION}={CORES}" if threads_known else f"{THREADS_OPTION} unknown to the installed dfir (not set)")
          + f"; onnxruntime loop: {CORES} threads")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        model_path = tiny_cnn(work / "tiny_cnn.onnx") if args.smoke else export("resnet50", 1, Path(args.cache_dir).expanduser())
        options |= {"ge.graph_compiler_cache_dir": str(work), "ge.graph_key": "vision_pipeline"}
        try:  # dfir's workers fork before onnxruntime's session starts its thread pool
            pipelines = [Pipeline(model_path, size, p, options, work, images[0]) for p in PLACEMENTS]
        except GeError as error:
            if "dfir.ge.backend" in str(error) and args.backend in str(error):
                print(f"dfir: n/a (the installed dfir does not know dfir.ge.backend={args.backend})")
                return
            raise
        session_options = ort.SessionOptions()
        session_options.intra_op_num_threads = CORES
        # no pool spinning on after the loop's runs into the pipeline's rounds (see real_models.py)
        session_options.add_session_config_entry("session.force_spinning_stop", "1")
        session = ort.InferenceSession(str(model_path), session_options, providers=["CPUExecutionProvider"])
        expected = loop(session, preprocess, images)
        for p in pipelines:
            backend = "" if p.backend == "?" else f"; the network runs on {p.backend}"
            print(f"{PLACEMENT_NAMES[p.placement]}: compile (through the cache), load and a first image "
                  f"{p.load_seconds:.2f} s{backend}")
        ways: dict[str, Callable[[], list]] = {"python loop + onnxruntime": lambda: loop(session, preprocess, images)}
        ways |= {PLACEMENT_NAMES[p.placement]: (lambda p=p: p.run(images)) for p in pipelines}
        rates: dict[str, list[float]] = {name: [] for name in ways}
        try:
            for round_ in range(repeats):
                names = list(ways)
                for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                    start = time.perf_counter()
                    results = ways[name]()
                    rates[name].append(count / (time.perf_counter() - start))
                    for i, (got, want) in enumerate(zip(results, expected, strict=True)):
                        check_top5(got, want, f"{name}, image {i}")
        finally:
            df.finalize()
    base = statistics.median(rates["python loop + onnxruntime"])
    print(f"{'way':28} {'images/s':>9} {'[min-max]':>15} {'/ loop':>7}")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"{name:28} {median:9.1f} {f'[{min(values):.1f}-{max(values):.1f}]':>15} {median / base:7.2f}")
    print(f"every image's top 5 matched the loop's ({count} images x {repeats} runs per way); target: dfir >= 1.2x the loop")


if __name__ == "__main__":
    main()
