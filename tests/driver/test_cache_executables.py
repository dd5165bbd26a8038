"""The compile cache keeps the IREE executables of compiled GE graphs with their units: a graph
taken from the cache is never compiled by IREE again."""
from __future__ import annotations

import numpy as np

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.lowering import iree_executable
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om
from codegen_graphs import DOUBLE_F32, codegen_pass, compiler_calls, double_graph  # noqa: F401

KEY = "compiled_pipe"


def make_udf(offset: int):
    def shift(x):
        return x + offset
    return df.pyflow(shift)


def build(offset: int) -> df.FlowGraph:
    """x -> shift(+offset) -> double (a GE graph compiled by IREE) -> out."""
    names.reset()
    x = df.FlowData(name="x")
    point = df.GraphProcessPoint(df.Framework.ONNX, double_graph(), name="doubler")
    return df.FlowGraph([point.fnode(1, 1, name="double")(make_udf(offset).fnode()(x))], name="pipe")


def options(cache_dir) -> dict[str, str]:
    return {"ge.graph_compiler_cache_dir": str(cache_dir), "ge.graph_key": KEY}


def run(om: bytes) -> list[float]:
    with dfir.load(om) as model:
        model.feed_data({"x": np.array([1.0, 2.0], np.float32)})
        outputs, _, ret = model.fetch_data(timeout=30_000)
    assert ret == 0, ret.message
    return outputs[0].numpy().tolist()


def executables(om: bytes) -> list[bytes]:
    return [bytes(p.data) for p in read_om(om).models[0].partitions_of(PartitionType.GE_EXECUTABLE)]


def test_a_cached_graph_is_not_compiled_again(tmp_path, codegen_pass, compiler_calls):
    codegen_pass["double"] = ("iree-cpu", DOUBLE_F32)
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    first = dfir.compile(build(1), options(cache_dir))
    assert len(compiler_calls) == 1 and len(executables(first.om)) == 1

    iree_executable.forget_compiled()  # only the cache can spare the compile now
    changed = dfir.compile(build(5), options(cache_dir))   # the UDF changed, the GE graph did not
    assert "1 of 2 process points reused" in "\n".join(changed.report)
    whole = dfir.compile(build(5), options(cache_dir))      # the whole model from the cache
    assert len(compiler_calls) == 1
    assert executables(changed.om) == executables(whole.om) == executables(first.om)
    assert run(changed.om) == [12.0, 14.0] and run(whole.om) == [12.0, 14.0]

    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    assert changed.om == dfir.compile(build(5), options(fresh_dir)).om
