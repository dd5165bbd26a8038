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


# CI installs no bench extra: these run their --smoke without torch, and say they checked their results
WITHOUT_TORCH = {"real_models": "failures: 0", "vision_pipeline": "every image's top 5 matched the loop's",
                 "load_footprint": "runtime left loaded: 0 xDSL modules, 0 compiler modules"}


@pytest.mark.parametrize("name", sorted(WITHOUT_TORCH))
def test_model_benchmarks_smoke_run_without_torch(name, tmp_path):
    script = str(Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py")
    hide_torch = ("import runpy, sys; sys.modules.update(torch=None, torchvision=None, transformers=None); "
                  f"sys.argv = [{script!r}, '--smoke']; runpy.run_path({script!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", hide_torch], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert WITHOUT_TORCH[name] in done.stdout, done.stdout[-2000:]


def test_every_benchmark_is_found():
    assert {p.stem for p in BENCHMARKS} >= {"compile_scaling", "udf_overhead", "runtime_throughput",
                                            "ge_exec", "memory_plan", "incremental", "replication", "onnx_suite",
                                            "input_batching", "weights",
                                            "cluster_throughput", "real_models", "vision_pipeline"}
