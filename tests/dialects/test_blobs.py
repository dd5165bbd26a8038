"""Weight blobs (`dfir.dialects.blobs`): large GE constants are `dense_resource`s whose bytes stay
out of the IR text and reach the `.om`'s WEIGHTS_DATA once; a resource section parses back to the
same bytes; a blob that is missing or malformed is a GeError that names it."""
from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, DenseResourceAttr
from xdsl.parser import Parser

import dfir
from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.dialects.blobs import BLOB_MIN_BYTES, blob_bytes
from dfir.driver.job import make_context
from dfir.ge.graph import Graph
from dfir.lowering.ge_graph import lower_ge_graph
from dfir.om.plan import Plan
from dfir.om.schema import PartitionType
from dfir.runtime.ge.graph_runner import GeGraphRunner
from dfir.runtime.om import read_om
from dfir.tools.inspect_om import inspect_om

_handles = itertools.count()


def _weights(shape=(64, 64), seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def _plus_const(weights: np.ndarray) -> Graph:
    g = Graph("plus")
    x = g.data(0, list(weights.shape), dt.DT_FLOAT, name="x")
    g.set_outputs([g.add(x, g.const(weights, name="w"))])
    return g


def _parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _graph_text(handle: str, type_text: str, hex_text: str | None) -> str:
    """A graph returning one constant of blob `handle`, and a resource section of `hex_text`."""
    section = "" if hex_text is None else f'{{-# dialect_resources: {{ builtin: {{ {handle}: "{hex_text}" }} }} #-}}'
    return (f'ge.graph @g {{\n  %w = ge.const dense_resource<{handle}> : {type_text}\n'
            f'  ge.output %w : !ge.tensor<[{type_text[7:-5].replace("x", ", ")}], f32>\n}}\n{section}')


def _fresh_handle() -> str:
    """A handle no other test uses: xDSL renames a resource parsed twice in one process."""
    return f"weight_t{next(_handles)}"


def test_a_large_constant_is_a_blob_and_its_bytes_stay_out_of_the_ir_text():
    weights = _weights()
    (op,) = [op for op in _plus_const(weights).to_ir().block.ops if isinstance(op, ge.ConstOp)]
    assert isinstance(op.value, DenseResourceAttr)
    assert re.fullmatch(r"weight_[0-9a-f]{32}", op.value.resource_handle.data)
    assert bytes(blob_bytes(op.value)) == weights.tobytes()
    text = str(op)
    assert text.startswith(f"%w = ge.const dense_resource<{op.value.resource_handle.data}> : tensor<64x64xf32>")
    assert weights[:4].tobytes().hex().upper() not in text


def test_small_constants_stay_dense_from_4_kib_on_a_constant_is_a_blob():
    g = Graph("small")
    small = g.const(np.arange(BLOB_MIN_BYTES // 4 - 1, dtype=np.float32), name="small")
    least = g.const(np.arange(BLOB_MIN_BYTES // 4, dtype=np.float32), name="least")
    splat = g.const(np.full((256, 256), 3.0, np.float32), name="splat")
    g.set_outputs([small, least, splat])
    values = [op.value for op in g.to_ir().block.ops if isinstance(op, ge.ConstOp)]
    assert [type(v) for v in values] == [DenseIntOrFPElementsAttr, DenseResourceAttr, DenseResourceAttr]


def test_the_same_bytes_are_one_blob_with_one_handle():
    weights = _weights(seed=3)
    handles = {op.value.resource_handle.data for graph in (_plus_const(weights), _plus_const(weights.copy()))
               for op in graph.to_ir().block.ops if isinstance(op, ge.ConstOp)}
    assert len(handles) == 1


@pytest.mark.parametrize("backend", ["reference", "iree-cpu"])
def test_compile_load_run_gives_the_weights_exactly(backend):
    weights = _weights((96, 80), seed=1)
    compiled = dfir.compile(_plus_const(weights), {"dfir.ge.backend": backend})
    model = read_om(compiled.om).models[0]
    ir_text = bytes(model.partition(PartitionType.IR_TEXT).data)
    assert b"dense_resource<weight_" in ir_text and len(ir_text) < weights.nbytes // 4
    assert weights.tobytes()[:64].hex().upper().encode() not in ir_text
    (weights_data,) = model.partitions_of(PartitionType.WEIGHTS_DATA)
    assert bytes(weights_data.data) == weights.tobytes()
    x = np.random.default_rng(2).standard_normal(weights.shape, dtype=np.float32)
    with dfir.load(compiled.om) as loaded:
        loaded.feed_data([x])
        outputs, _, ret = loaded.fetch_data(timeout=60000)
    assert ret == 0 and np.array_equal(outputs[0].numpy(), x + weights)


def test_the_om_is_deterministic_with_blobs():
    weights = _weights(seed=4)
    first = dfir.compile(_plus_const(weights), {"dfir.ge.backend": "reference"}).om
    assert dfir.compile(_plus_const(weights.copy()), {"dfir.ge.backend": "reference"}).om == first


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)))
def test_a_parsed_resource_section_gives_its_bytes(array):
    handle = _fresh_handle()
    type_text = f"tensor<{'x'.join(map(str, array.shape))}xf32>"
    module = _parse(_graph_text(handle, type_text, "0x40000000" + array.tobytes().hex()))
    _, (weight,) = lower_ge_graph(module.ops.first)
    assert weight.shape == array.shape and weight.tobytes() == array.tobytes()


@pytest.mark.parametrize("hex_text, message", [
    (None, "dense_resource<{h}> names no blob: the IR text holds no resource {h} (an .om keeps a blob's "
           "bytes in WEIGHTS_DATA, not in its IR_TEXT)"),
    ("0x4000000000zz", "resource {h}: its text is not hex after 0x"),
    ("0x4000", "resource {h}: a blob starts with its 4-byte alignment, got 2 bytes"),
    ("0x030000000000803F00000040", "resource {h}: alignment 3 is not a power of two"),
    ("0x400000000000803F", "dense_resource<{h}> : tensor<2xf32> needs 8 bytes, its blob has 4"),
])
def test_a_missing_or_malformed_blob_is_named(hex_text, message):
    handle = _fresh_handle()
    module = _parse(_graph_text(handle, "tensor<2xf32>", hex_text))
    with pytest.raises(GeError) as info:
        lower_ge_graph(module.ops.first)
    assert str(info.value) == message.format(h=handle)


def test_forget_blobs_drops_them():
    script = ("import numpy as np; from dfir.core import data_type as dt; from dfir.ge.graph import Graph\n"
              "from dfir.dialects.blobs import forget_blobs; from dfir.lowering.ge_graph import lower_ge_graph\n"
              "g = Graph('g'); g.set_outputs([g.const(np.arange(2048, dtype=np.float32))])\n"
              "graph = g.to_ir(); forget_blobs()\n"
              "try:\n    lower_ge_graph(graph)\nexcept Exception as e:\n    print(str(e).split(':')[0])\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert re.fullmatch(r"dense_resource<weight_[0-9a-f]{32}> names no blob\n", result.stdout)


def test_the_ir_text_of_an_om_parses_back_with_its_handles_and_inspect_lists_the_weights():
    weights = _weights(seed=6)
    om = dfir.compile(_plus_const(weights), {"dfir.ge.backend": "reference"}).om
    model = read_om(om).models[0]
    module = _parse(bytes(model.partition(PartitionType.IR_TEXT).data).decode())
    (graph,) = [op for op in module.ops if isinstance(op, ge.GraphOp)]
    (const,) = [op for op in graph.block.ops if isinstance(op, ge.ConstOp)]
    handle = const.value.resource_handle.data
    assert bytes(blob_bytes(const.value)) == weights.tobytes()  # the compiling process still has it
    weights_data = model.partition(PartitionType.WEIGHTS_DATA)
    assert f"WEIGHTS_DATA offset={weights_data.offset} size={weights.nbytes}" in inspect_om(om)
    assert handle.startswith("weight_")


def test_constants_naming_one_blob_share_one_weight():
    weights = _weights(seed=7)
    g = Graph("twice")
    x = g.data(0, list(weights.shape), dt.DT_FLOAT, name="x")
    g.set_outputs([g.add(g.add(x, g.const(weights, name="a")), g.const(weights.copy(), name="b"))])
    entry, arrays = lower_ge_graph(g.to_ir())
    blob = {"weight": 0, "blob": next(op["attrs"]["blob"] for op in entry["ops"] if op["op"] == "const")}
    assert [op["attrs"] for op in entry["ops"] if op["op"] == "const"] == [blob, blob]
    assert len(arrays) == 1
    compiled = dfir.compile(g, {"dfir.ge.backend": "reference"})
    (weights_data,) = read_om(compiled.om).models[0].partitions_of(PartitionType.WEIGHTS_DATA)
    assert bytes(weights_data.data) == weights.tobytes()
    with dfir.load(compiled.om) as loaded:
        loaded.feed_data([np.ones_like(weights)])
        outputs, _, _ = loaded.fetch_data(timeout=60000)
    assert np.array_equal(outputs[0].numpy(), 1 + weights + weights)


def test_loaded_weights_are_views_of_the_mapped_file(tmp_path):
    weights = _weights(seed=8)
    path = dfir.compile(_plus_const(weights), {"dfir.ge.backend": "reference"}).save(tmp_path / "plus")
    model = read_om(path).models[0]
    plan = Plan.from_json(json.loads(bytes(model.partition(PartitionType.FLOW_MODEL).data)))
    mapped = model.partition(PartitionType.WEIGHTS_DATA).data
    runner = GeGraphRunner(plan.ge_graphs[0], mapped)
    (bound,) = runner._bound.values()
    assert np.shares_memory(bound, np.frombuffer(mapped, np.uint8)) and not bound.flags.writeable
    assert np.array_equal(bound, weights)


@pytest.mark.parametrize("backend", ["reference", "iree-cpu"])
def test_a_blob_of_booleans_keeps_its_values(backend):
    flags = np.random.default_rng(9).random((64, 80)) < 0.5
    g = Graph("flags")
    x = g.data(0, list(flags.shape), dt.DT_BOOL, name="x")
    g.set_outputs([g.logical_and(x, g.const(flags, name="flags"))])
    assert isinstance(next(op for op in g.to_ir().block.ops if isinstance(op, ge.ConstOp)).value, DenseResourceAttr)
    x_value = np.random.default_rng(10).random(flags.shape) < 0.5
    with dfir.load(dfir.compile(g, {"dfir.ge.backend": backend}).om) as loaded:
        loaded.feed_data([x_value])
        outputs, _, ret = loaded.fetch_data(timeout=60000)
    assert ret == 0 and np.array_equal(outputs[0].numpy(), x_value & flags)
