"""The runtime stands alone: a fresh process that loads an `.om`, feeds it and fetches its outputs
(and `dfir run` on it) imports no xDSL and no compiler module, in the driver and in its worker; nor
`cryptography`, unless the load trusts keys and so checks the file's signature.

The model: x -> a GE graph node relu(x + x) (onnxruntime backend) -> a `@pyflow` UDF that returns
its input + 1 and the names of the compiler modules its own worker has loaded, as bytes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names as flow_names
from dfir.ge.graph import Graph
from dfir.om.keys import SIGNING_KEY_ENV, TRUSTED_KEYS_ENV, write_key_pair
from dfir.om.signature import signed

# what only compiling needs: xDSL, the IR, passes, lowering, the compile driver, the frontends
COMPILER = ("xdsl", "dfir.dialects", "dfir.passes", "dfir.lowering", "dfir.driver", "dfir.frontend.importer",
            "dfir.frontend.ge", "dfir.frontend.options", "dfir.frontend.dataflow.flow_graph", "dfir.ge", "dfir.tools.view")


def compiler_modules(names) -> list[str]:
    return sorted(n for n in names if any(n == c or n.startswith(c + ".") for c in COMPILER))


@df.pyflow(num_returns=2)
def report_modules(y):
    """y + 1, and the compiler modules loaded in this worker (comma-separated, as uint8)."""
    loaded = ",".join(compiler_modules(list(sys.modules)))
    return y + 1, np.frombuffer(loaded.encode() or b" ", np.uint8)


@pytest.fixture(scope="module")
def om_path(tmp_path_factory):
    flow_names.reset()  # the input is named x, whichever graphs this process made before
    g = Graph("double_relu")
    g.set_outputs([g.relu(g.add(*[g.data(0, shape=[4], dtype=df.DT_FLOAT, name="x")] * 2))])
    x = df.FlowData(name="x")
    y = df.GraphProcessPoint(df.Framework.ONNX, g).fnode(1, 1)(x)
    z, names = report_modules.fnode()(y)
    # the compiler ships the UDF's module by value: the fresh process does not import this file
    compiled = dfir.compile(df.FlowGraph([z, names], {"dfir.ge.backend": "onnxruntime"}))
    folder = tmp_path_factory.mktemp("standalone")
    compiled.save(str(folder / "model"))
    np.save(folder / "x.npy", np.array([-1.0, 0.0, 1.5, 2.0], np.float32))
    return folder / "model.om"


LOAD_AND_RUN = f"""
import json, sys
import numpy as np
COMPILER = {COMPILER!r}
def compiler_modules(names):
    return sorted(n for n in names if any(n == c or n.startswith(c + ".") for c in COMPILER))
import dfir
with dfir.load(sys.argv[1]) as model:
    assert model.feed_data([np.load(sys.argv[2])]) == 0
    outputs, _, ret = model.fetch_data(timeout=60000)
    assert ret == 0, ret
    driver_while_running = compiler_modules(sys.modules)
print(json.dumps({{"z": outputs[0].numpy().tolist(), "worker": bytes(outputs[1].numpy()).decode().strip(),
                  "driver": driver_while_running, "driver_after_close": compiler_modules(sys.modules)}}))
"""


def test_loading_and_running_an_om_imports_no_compiler_in_the_driver_or_its_worker(om_path, tmp_path):
    done = subprocess.run([sys.executable, "-c", LOAD_AND_RUN, str(om_path), str(om_path.parent / "x.npy")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["z"] == [1.0, 1.0, 4.0, 5.0]
    assert result["driver"] == []
    assert result["worker"] == ""
    assert result["driver_after_close"] == []


def test_the_worker_probe_would_see_a_compiler_module(om_path, tmp_path):
    """The same run with the compiler imported first: the driver and the forked worker report it."""
    preload = LOAD_AND_RUN.replace("import dfir\n", "import dfir\nimport dfir.driver.compiler\n", 1)
    done = subprocess.run([sys.executable, "-c", preload, str(om_path), str(om_path.parent / "x.npy")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "dfir.driver.compiler" in result["driver"] and "xdsl" in result["driver"]
    assert "dfir.driver.compiler" in result["worker"].split(",")


LOAD_ONLY = """
import json, sys
import dfir
with dfir.load(sys.argv[1], trust=(sys.argv[2] if len(sys.argv) > 2 else None)):
    print(json.dumps("cryptography" in sys.modules))
"""


def test_a_load_imports_cryptography_only_when_it_checks_the_signer(om_path, tmp_path):
    """Checking a signature is the one use of `cryptography` (a few MiB) in a load: every load
    checks one, except under trust="any", which leaves it unimported."""
    _, _, key = write_key_pair(str(tmp_path / "dev"))
    signed_path = tmp_path / "signed.om"
    signed_path.write_bytes(signed(om_path.read_bytes(), key))
    no_keys = {name: value for name, value in os.environ.items() if name not in (TRUSTED_KEYS_ENV, SIGNING_KEY_ENV)}

    def cryptography_imported(*arguments: str) -> bool:
        done = subprocess.run([sys.executable, "-c", LOAD_ONLY, *arguments], capture_output=True, text=True,
                              timeout=120, cwd=tmp_path, env=no_keys)
        assert done.returncode == 0, done.stderr[-4000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    assert cryptography_imported(str(om_path)) is True  # signed by the suite's own key
    assert cryptography_imported(str(om_path), "any") is False
    assert cryptography_imported(str(signed_path), "any") is False


def test_dfir_run_imports_no_compiler(om_path, tmp_path):
    # -X importtime names every module the command imports, on stderr
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "dfir.tools.cli", "run", str(om_path),
                           "--input", f"x={om_path.parent / 'x.npy'}"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    # output 1: the worker's compiler modules, none (one space)
    assert done.stdout == "output 0: shape=[4] dtype=float32\n[1., 1., 4., 5.]\noutput 1: shape=[1] dtype=uint8\n[32]\n"
    imported = [line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "dfir.runtime.driver.loader" in imported
    assert compiler_modules(imported) == []


def test_a_ray_server_actor_imports_no_compiler(tmp_path):
    """A Ray worker process rebuilds `ServerActor` by importing its module (and `dfir`)."""
    pytest.importorskip("ray")
    probe = f"""
import json, sys
COMPILER = {COMPILER!r}
from dfir.runtime.driver.ray_cluster import ServerActor
print(json.dumps(sorted(n for n in sys.modules if any(n == c or n.startswith(c + ".") for c in COMPILER))))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert json.loads(done.stdout) == []
