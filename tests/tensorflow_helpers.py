"""Frozen TensorFlow graphs for the tests, written by a child process: TensorFlow never loads into
the test process (loaded before triton, which torch imports, it makes triton's import crash)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dfir.frontend.ge.tensorflow_import import EXTRA, missing_packages

ADD = """
    a = v1.placeholder(tf.float32, shape=[3], name="Placeholder")
    b = v1.placeholder(tf.float32, shape=[3], name="Placeholder_1")
    tf.add(a, b, name="add")
"""
"""GE's sample graph `add.pb`: Placeholder, Placeholder_1 (float32 [3]) -> add."""

_WRITER = """
import sys
import tensorflow as tf
v1 = tf.compat.v1
graph = tf.Graph()
with graph.as_default():
{body}
open(sys.argv[1], "wb").write(graph.as_graph_def().SerializeToString())
"""


def needs_tensorflow() -> None:
    """Skip the test unless the tensorflow extra is installed."""
    if missing_packages():
        pytest.skip(f"needs {' and '.join(missing_packages())} (pip install '{EXTRA}')")


def write_frozen_graph(path: Path, body: str) -> str:
    """The graph `body` builds (with `tf` and `v1` = tf.compat.v1) written to `path` as a binary GraphDef."""
    needs_tensorflow()
    code = _WRITER.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    "))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    path.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return str(path)
