"""`GraphProcessPoint(Framework.TENSORFLOW, "model.pb", load_params)`: a frozen TensorFlow graph,
converted to ONNX by tf2onnx and imported as any ONNX model.

Needs the optional packages tensorflow and tf2onnx (`pip install 'dfir[tensorflow]'`); without
them the graph file is refused naming that extra. A MindSpore graph (`Framework.MINDSPORE`, an
`.air` or `.mindir` file) is refused: export it to ONNX and load that with `Framework.ONNX`.

The graph's inputs are its `Placeholder` nodes and its outputs the outputs of the nodes nothing
consumes, in the file's node order, as GE's TensorFlow parser takes them. `load_params` takes GE's
parser params that say which:

- `input_data_names`: "a,b" orders the inputs (input i is the Placeholder named i-th); every
  Placeholder must be named, as GE requires.
- `ge.outputNodeName`: "node:0;node2:1" chooses the outputs (node and output index), in order.
- `output`: the graph's name (default: the file's stem).

GE's other parser params (`input_shape`, `ge.INPUT_NODES_SET_FP16`, `is_input_adjust_hw_layout`,
`is_output_adjust_hw_layout`, `enable_scope_fusion_passes`) are refused with their reason; any
other key is refused as GE refuses it. The compile config's `inputs_tensor_desc` then corrects the
inputs' data types and shapes as for every graph (`dfir.frontend.ge.graph_config`).

The conversion runs in a child process (`python -m dfir.frontend.ge.tensorflow_convert`), once per
file content and params in a process: TensorFlow then never shares a process with the user's
libraries (loaded before triton, which torch imports, it makes triton's import crash), its
start-up lines and settings stay there, and the pipeline's process does not pay its import.
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping

from dfir.core.errors import GeError
from dfir.frontend.ge.graph import Graph

EXTRA = "dfir[tensorflow]"
"""The pyproject extra that installs what the conversion needs."""

REQUIRED_PACKAGES = ("tensorflow", "tf2onnx")

OPSET = 17
"""The ONNX opset the converted model is written in."""

CONVERTER = "dfir.frontend.ge.tensorflow_convert"
"""The module the child process runs (`python -m`): the only one that imports TensorFlow."""

INPUT_DATA_NAMES = "input_data_names"
OUTPUT_NODE_NAME = "ge.outputNodeName"
GRAPH_NAME = "output"

REFUSED_PARAMS = {
    "input_shape": "give the input shapes in the compile config (inputs_tensor_desc or "
                   "build_options ge.inputShape)",
    "ge.INPUT_NODES_SET_FP16": "fp16 inputs are set by inputs_tensor_desc data_type DT_FLOAT16",
    "is_input_adjust_hw_layout": "dfir keeps the inputs' layout as the graph declares it",
    "is_output_adjust_hw_layout": "dfir keeps the outputs' layout as the graph declares it",
    "enable_scope_fusion_passes": "dfir runs no TensorFlow scope fusion passes",
}
"""GE's parser params that dfir does not act on, and why (refused, never ignored)."""


def refuse_mindspore(graph_file: str) -> GeError:
    """The error for a MindSpore graph file: ONNX export is the way in."""
    return GeError(f"GraphProcessPoint: MINDSPORE graph file '{graph_file}' cannot be loaded: dfir does "
                   "not read MindSpore graphs (.air, .mindir); export the network to ONNX "
                   "(mindspore.export(net, input, file_name=..., file_format='ONNX')) and load it with "
                   "Framework.ONNX")


def missing_packages() -> list[str]:
    """The packages of `REQUIRED_PACKAGES` that are not installed."""
    return [name for name in REQUIRED_PACKAGES if importlib.util.find_spec(name) is None]


def tensorflow_graph(graph_file: str | os.PathLike, load_params: Mapping[str, str]) -> Graph:
    """The graph of the frozen TensorFlow graph `graph_file` (module docstring); a GeError naming
    the file for a missing extra, an unreadable file, a bad load param or a failed conversion."""
    path = os.fspath(graph_file)
    where = f"GraphProcessPoint: TENSORFLOW graph file '{path}'"
    missing = missing_packages()
    if missing:
        raise GeError(f"{where} needs {' and '.join(missing)} to be converted to ONNX: "
                      f"pip install '{EXTRA}'")
    _check_params(load_params, where)
    try:
        stat = os.stat(path)
    except OSError as error:
        raise GeError(f"{where} cannot be read: {error.strerror}") from None
    name = load_params.get(GRAPH_NAME) or Path(path).stem
    model = _converted_bytes(path, stat.st_mtime_ns, stat.st_size, tuple(sorted(load_params.items())))
    with tempfile.TemporaryDirectory(prefix="dfir-tf2onnx-") as folder:
        onnx_file = Path(folder) / "model.onnx"
        onnx_file.write_bytes(model)
        return Graph.from_onnx(onnx_file, name)


@functools.lru_cache(maxsize=16)
def _converted_bytes(path: str, mtime_ns: int, size: int, params: tuple[tuple[str, str], ...]) -> bytes:
    """The serialized ONNX model of `path` as the child process converts it (the file's time and
    size key the cache: an edited file converts again)."""
    where = f"GraphProcessPoint: TENSORFLOW graph file '{path}'"
    with tempfile.TemporaryDirectory(prefix="dfir-tf2onnx-") as folder:
        output = Path(folder) / "model.onnx"
        error = output.with_suffix(".error")
        command = [sys.executable, "-m", CONVERTER, path, json.dumps(dict(params)), str(output)]
        done = subprocess.run(command, capture_output=True, text=True, env=_child_env())
        if done.returncode == GE_ERROR_STATUS and error.is_file():
            raise GeError(error.read_text())
        if done.returncode != 0 or not output.is_file():
            tail = "\n".join(done.stderr.strip().splitlines()[-_STDERR_TAIL_LINES:])
            raise GeError(f"{where}: the conversion process failed with exit status {done.returncode}:\n{tail}")
        return output.read_bytes()


GE_ERROR_STATUS = 3
"""The child's exit status when it wrote a GeError's message to `<output>.error`."""
_STDERR_TAIL_LINES = 20


def _child_env() -> dict[str, str]:
    """The child's environment: this process's, with its module path (dfir importable as here)
    and TensorFlow's C++ start-up lines off (the oneDNN notice goes only with oneDNN, which
    converting never runs)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    return env


def _check_params(load_params: Mapping[str, str], where: str) -> None:
    for key, value in load_params.items():
        if key in REFUSED_PARAMS:
            raise GeError(f"{where}: load param '{key}' is not supported: {REFUSED_PARAMS[key]}")
        if key not in (INPUT_DATA_NAMES, OUTPUT_NODE_NAME, GRAPH_NAME):
            raise GeError(f"{where}: load param '{key}' is not a TensorFlow parser param; expected "
                          f"{INPUT_DATA_NAMES}, {OUTPUT_NODE_NAME} or {GRAPH_NAME}")
        if not isinstance(value, str):
            raise GeError(f"{where}: load param '{key}' must be a str, got {type(value).__name__}")
    input_order(load_params.get(INPUT_DATA_NAMES, ""), where)
    output_tensors(load_params.get(OUTPUT_NODE_NAME, ""), where)


def input_order(names: str, where: str) -> list[str]:
    """`input_data_names` as a list of names, each once."""
    order = [name.strip() for name in names.split(",")] if names else []
    duplicate = next((name for i, name in enumerate(order) if name in order[:i]), None)
    if duplicate is not None:
        raise GeError(f"{where}: load param {INPUT_DATA_NAMES} names '{duplicate}' twice")
    return order


def output_tensors(spec: str, where: str) -> list[tuple[str, int]]:
    """`ge.outputNodeName` as (node, output index) pairs."""
    outputs = []
    for item in spec.split(";") if spec else []:
        node, sep, index = item.strip().rpartition(":")
        if not sep or not node or not index.isdigit():
            raise GeError(f"{where}: load param {OUTPUT_NODE_NAME} entry '{item}' must have the form "
                          "node:index")
        outputs.append((node, int(index)))
    return outputs
