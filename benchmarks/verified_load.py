"""How fast a model with large weights loads, verified, against reading and hashing its file.

The model: a GE graph `x + w`, `w` a float32 constant of --mib MiB (its bytes the model's
WEIGHTS_DATA), compiled for --backend and signed with a key made for the run. Every figure comes
from a fresh `python -c` process (the file in the page cache, the imports done before the clock
starts), --runs times, the probes run alternately; ms and GB/s, median [min-max]:
  read + SHA-256   the file read in 1 MiB chunks and hashed, in one pass (hashlib)
  read_om          `dfir.runtime.om.read_om(path)`: the sealed copy, hashed as it is taken, and
                   the native checks
  dfir.load        `dfir.load(path, trusted_keys=...)` until it returns (its workers ready)
The target: dfir.load at >= 0.8x the rate of read + SHA-256. read_om and dfir.load use two
threads (one reads and hashes, one copies into the memfd), the read + SHA-256 pass one: the
machine's 1-minute load average, printed before and after, says whether other work took the
second core.

Run: python benchmarks/verified_load.py [--mib 256] [--backend reference] [--runs 5] [--smoke]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

TARGET = 0.8

PROBES = {
    "read + SHA-256": """
import hashlib
start = time.perf_counter()
digest, chunk = hashlib.sha256(), bytearray(1 << 20)
view = memoryview(chunk)
with open(path, "rb", buffering=0) as file:
    while (count := file.readinto(chunk)):
        digest.update(view[:count])
""",
    "read_om": """
from dfir.runtime.om import read_om
start = time.perf_counter()
om = read_om(path)
""",
    "dfir.load": """
import dfir
import dfir.om.ed25519  # the signature check's cryptography, imported on first use
import dfir.runtime.driver.loader
start = time.perf_counter()
model = dfir.load(path, trusted_keys=public)
""",
}


def build(directory: str, mib: int, backend: str) -> tuple[str, str]:
    """The signed `.om` of x + w (w: `mib` MiB of float32) and the public key's PEM file."""
    import dfir
    from dfir.core import data_type as dt
    from dfir.ge.graph import Graph
    from dfir.om.keys import write_key_pair
    private, public, _ = write_key_pair(os.path.join(directory, "bench"))
    count = mib * (1 << 20) // 4
    graph = Graph("verified_load")
    x = graph.data(0, [count], dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.add(x, graph.const(np.full(count, 1.0, np.float32), name="w"))])
    path = os.path.join(directory, "model.om")
    dfir.compile(graph, {"dfir.ge.backend": backend}, sign_with=private).save(path)
    return path, public


def timed(probe: str, path: str, public: str) -> float:
    code = (f"import time\npath, public = {path!r}, {public!r}\n{PROBES[probe]}\n"
            "print(time.perf_counter() - start)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=os.path.dirname(path))
    if done.returncode:
        raise SystemExit(f"{probe} failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--backend", default="reference")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="4 MiB, one run of each probe, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.mib, args.runs = 4, 1
    with tempfile.TemporaryDirectory() as directory:
        path, public = build(directory, args.mib, args.backend)
        size = os.path.getsize(path)
        times: dict[str, list[float]] = {probe: [] for probe in PROBES}
        load_before = os.getloadavg()[0]
        for _ in range(args.runs):
            for probe in PROBES:
                times[probe].append(timed(probe, path, public))
        load_after = os.getloadavg()[0]
    print(f"{size / (1 << 20):.0f} MiB .om ({args.backend}), {args.runs} fresh processes per figure: "
          f"median [min-max]; {os.cpu_count()} CPUs, load average {load_before:.2f} before, {load_after:.2f} after")
    rates = {probe: sorted(size / t / 1e9 for t in ts) for probe, ts in times.items()}
    for probe, ts in times.items():
        r = rates[probe]
        print(f"{probe:16s} {statistics.median(ts) * 1000:8.1f} ms  {statistics.median(r):5.2f} GB/s "
              f"[{r[0]:.2f}-{r[-1]:.2f}]")
    ratio = statistics.median(rates["dfir.load"]) / statistics.median(rates["read + SHA-256"])
    print(f"dfir.load / (read + SHA-256): {ratio:.2f}x, target >= {TARGET}x: {'met' if ratio >= TARGET else 'not met'}")


if __name__ == "__main__":
    main()
