"""Every benchmark runs in its `--smoke` mode (tiny sizes): they must not rot. No timing is asserted."""
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_smoke_run(script, tmp_path):
    # cwd outside the checkout: the benchmark imports the installed dfir and writes its files here
    done = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.strip(), f"{script.name} printed nothing"


def test_every_benchmark_is_found():
    assert {p.stem for p in BENCHMARKS} >= {"compile_scaling", "udf_overhead", "runtime_throughput",
                                            "ge_exec", "memory_plan", "incremental", "replication", "onnx_suite",
                                            "input_batching", "weights",
                                            "cluster_throughput"}
