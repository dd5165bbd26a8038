"""What loading an `.om` costs: import time, load time, worker start-up, and the memory of a loaded
model's processes against an onnxruntime session of the same model.

Models: MobileNetV2 and ResNet-50 (torchvision, random weights, batch 1, exported once into
--cache-dir as benchmarks/real_models.py does), each as a one-node FlowGraph
(`df.GraphProcessPoint(df.Framework.ONNX, path)`) compiled with `dfir.ge.backend=onnxruntime` and
saved as an `.om`; the small model is real_models.py's small CNN compiled the same way.

Every figure comes from a fresh `python -c` process (cwd outside the checkout), --runs times
(median [min-max]), in two variants run alternately: `runtime` (`import dfir`, then what is timed)
and `+compiler` (`import dfir; import dfir.driver.compiler` first: what `import dfir` imported
before it became lazy, so the two columns compare the same machine at the same moment):
  import dfir        the imports (the interpreter's own start-up excluded), and the number of
                     xDSL modules and compiler modules (`dfir.dialects`, `dfir.passes`,
                     `dfir.lowering`, `dfir.driver`, `dfir.frontend.importer`) left loaded
  load               `dfir.load(path)` of the small model, until it returns (its workers ready),
                     and the imports plus the load
  worker start-up    within that load, from the first worker's fork until every worker reported
                     ready (`ProcessScheduler._fork` / `_await_ready`, timed from outside)
  memory             a model loaded with `dfir.load` that has run one input: PSS and RSS
                     (/proc/<pid>/smaps_rollup) summed over the driver and its workers, against a
                     fresh process that imports onnxruntime and numpy, builds an `InferenceSession`
                     of the same ONNX file (the options dfir's runner uses) and runs the same input.
                     PSS splits a page shared by several processes between them, so the sum counts
                     the driver's pages a forked worker still shares once; the RSS sum counts them
                     in every process. The target: dfir's PSS at most onnxruntime's + 30 MiB.

Run: pip install -e '.[bench]' && python benchmarks/load_footprint.py [--models mobilenet_v2,resnet50]
     [--runs 7] [--cache-dir ~/.cache/dfir-bench/models] [--smoke]
--smoke needs no torch: the small CNN only, 2 runs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from real_models import export, model_input, tiny_cnn  # noqa: E402

import numpy as np  # noqa: E402

import dfir  # noqa: E402
import dfir.dataflow as df  # noqa: E402

TARGET_MIB = 30
COMPILER = ("dfir.dialects", "dfir.passes", "dfir.lowering", "dfir.driver", "dfir.frontend.importer")

# Each probe prints one JSON line. The memory is read while the model is loaded and has run once.
_COMMON = f"""
import json, os, sys, time
COMPILER = {COMPILER!r}
def loaded_compiler():
    names = list(sys.modules)
    return (sum(n == "xdsl" or n.startswith("xdsl.") for n in names),
            sum(any(n == c or n.startswith(c + ".") for c in COMPILER) for n in names))
def rollup(pid):
    fields = {{}}
    with open(f"/proc/{{pid}}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("Rss:", "Pss:"):
                fields[parts[0][:-1].lower()] = int(parts[1]) * 1024
    return fields
def children(pid):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{{entry}}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                pass
    return found
"""

IMPORT_PROBE = _COMMON + """
start = time.perf_counter()
import dfir
if sys.argv[1] == "+compiler":
    import dfir.driver.compiler
print(json.dumps({"import_s": time.perf_counter() - start, "loaded": loaded_compiler()}))
"""

LOAD_PROBE = _COMMON + """
import numpy as np
variant, path, input_path = sys.argv[1:4]
start = time.perf_counter()
import dfir
if variant == "+compiler":
    import dfir.driver.compiler
imported = time.perf_counter()
marks = {}
try:
    from dfir.runtime.driver.process_scheduler import ProcessScheduler
    fork, await_ready = ProcessScheduler._fork, ProcessScheduler._await_ready
    def timed_fork(self, *args, **kwargs):
        marks.setdefault("fork", time.perf_counter())
        return fork(self, *args, **kwargs)
    def timed_await(self, *args, **kwargs):
        try:
            return await_ready(self, *args, **kwargs)
        finally:
            marks["ready"] = time.perf_counter()
    ProcessScheduler._fork, ProcessScheduler._await_ready = timed_fork, timed_await
except (ImportError, AttributeError):
    pass
model = dfir.load(path)
loaded = time.perf_counter()
x = np.load(input_path)
model.feed_data([x])
outputs, _, ret = model.fetch_data(timeout=600_000)
assert ret == 0, ret
pids = [os.getpid()] + children(os.getpid())
memory = [rollup(pid) for pid in pids]
print(json.dumps({"import_s": imported - start, "load_s": loaded - imported,
                  "workers_s": marks["ready"] - marks["fork"] if len(marks) == 2 else None,
                  "pss": sum(m["pss"] for m in memory), "rss": sum(m["rss"] for m in memory),
                  "processes": len(pids), "loaded": loaded_compiler()}))
model.close()
"""

ORT_PROBE = _COMMON + """
import numpy as np
import onnxruntime
path, input_path = sys.argv[1], sys.argv[2]
options = onnxruntime.SessionOptions()
options.intra_op_num_threads = os.cpu_count()
options.inter_op_num_threads = 1
options.add_session_config_entry("session.force_spinning_stop", "1")
session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
session.run(None, {session.get_inputs()[0].name: np.load(input_path)})
memory = rollup(os.getpid())
print(json.dumps({"pss": memory["pss"], "rss": memory["rss"], "processes": 1}))
"""


def probe(code: str, *args: str, cwd: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"probe failed ({done.returncode}): {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_om(onnx_path: Path, out: Path) -> Path:
    data = df.FlowData()
    flow = df.FlowGraph([df.GraphProcessPoint(df.Framework.ONNX, str(onnx_path)).fnode(1, 1)(data)],
                        {"dfir.ge.backend": "onnxruntime"})
    dfir.compile(flow).save(str(out))
    return out.with_suffix(".om")


def cell(values: list[float], scale: float = 1.0, digits: int = 0) -> str:
    values = [v * scale for v in values]
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


MIB = 1 / 2 ** 20


VARIANTS = ("runtime", "+compiler")


def alternately(runs: int, code: str, *args: str, cwd: Path) -> dict[str, list[dict]]:
    """`runs` probes of each variant, one of each in turn."""
    results: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    for _ in range(runs):
        for variant in VARIANTS:
            results[variant].append(probe(code, variant, *args, cwd=cwd))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="mobilenet_v2,resnet50", help="comma-separated torchvision models")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per figure (median [min-max])")
    parser.add_argument("--cache-dir", default="~/.cache/dfir-bench/models", help="where exported models are kept")
    parser.add_argument("--smoke", action="store_true", help="the small CNN only, 2 runs: a quick check for CI")
    args = parser.parse_args()
    runs = 2 if args.smoke else args.runs
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        jobs = [("small_cnn", tiny_cnn(work / "small_cnn.onnx"))]
        if not args.smoke:
            cache_dir = Path(args.cache_dir).expanduser()
            jobs += [(name, export(name, 1, cache_dir)) for name in args.models.split(",")]
        models = {}
        for name, onnx_path in jobs:
            om = compile_om(onnx_path, work / name)
            x = work / f"{name}_x.npy"
            np.save(x, model_input(onnx_path, np.random.default_rng(0)))
            models[name] = (onnx_path, om, x)
        df.finalize()

        imports = alternately(runs, IMPORT_PROBE, cwd=work)
        _, small_om, small_x = models["small_cnn"]
        loads = alternately(runs, LOAD_PROBE, str(small_om), str(small_x), cwd=work)
        print(f"fresh processes per figure: {runs}; ms, median [min-max]")
        print(f"{'':26} {'runtime':>22} {'+compiler':>22}")
        rows = [("import dfir", imports, lambda r: r["import_s"]),
                ("dfir.load small .om", loads, lambda r: r["load_s"]),
                ("imports + dfir.load", loads, lambda r: r["import_s"] + r["load_s"]),
                ("worker start-up", loads, lambda r: r["workers_s"])]
        for label, results, value in rows:
            cells = [[value(r) for r in results[v] if value(r) is not None] for v in VARIANTS]
            print(f"{label:26} " + " ".join(f"{cell(c, 1e3) if c else 'n/a':>22}" for c in cells))
        for v in VARIANTS:
            xdsl, compiler = loads[v][0]["loaded"]
            print(f"{v} left loaded: {xdsl} xDSL modules, {compiler} compiler modules")

        print(f"\nmemory of a loaded model that ran once (driver + workers), MiB: median [min-max]; "
              f"target: runtime PSS <= ort PSS + {TARGET_MIB}")
        print(f"{'model':12} {'procs':>5} " + " ".join(f"{h:>14}" for h in (
            "runtime PSS", "+compiler PSS", "ort PSS", "runtime RSS", "+compiler RSS", "ort RSS")) + "  PSS diff  verdict")
        for name, (onnx_path, om, x) in models.items():
            ours = alternately(runs, LOAD_PROBE, str(om), str(x), cwd=work)
            theirs = [probe(ORT_PROBE, str(onnx_path), str(x), cwd=work) for _ in range(runs)]
            diff = (statistics.median(r["pss"] for r in ours["runtime"]) - statistics.median(r["pss"] for r in theirs)) * MIB
            cells = [[r[kind] for r in results] for kind in ("pss", "rss")
                     for results in (ours["runtime"], ours["+compiler"], theirs)]
            print(f"{name:12} {ours['runtime'][0]['processes']:5d} " + " ".join(f"{cell(c, MIB):>14}" for c in cells)
                  + f"  {diff:+8.0f}  {'met' if diff <= TARGET_MIB else 'missed'}")


if __name__ == "__main__":
    main()
