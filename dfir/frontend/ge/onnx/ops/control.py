"""Control flow: ONNX Scan unrolled over its (fixed) sequence length.

    final, stacked = Scan(state0, xs)   body(state, x_t) -> (state', y_t)
becomes, for t = 0 .. n-1 (reversed for a reverse direction),
    x_t = gather(xs, t, axis)   state, y_t = body's ops on (state, x_t)
and the y_t stacked along their output axis. A body runs as graph ops named `<scan>/t<t>/...`;
a sequence length that is not fixed is refused, naming the node.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer


def _axes(values: list[int] | None, count: int, ranks: list[int]) -> list[int]:
    axes = list(values) if values else [0] * count
    return [axis % rank if rank else axis for axis, rank in zip(axes, ranks)]


def _scan(imp: Importer, node: onnx.NodeProto) -> list[Value]:
    attrs = attributes_of(node)
    body: onnx.GraphProto = attrs["body"]
    scans = attrs["num_scan_inputs"]
    states = [imp.tensor(node, i) for i in range(len(node.input) - scans)]
    xs = [imp.tensor(node, i) for i in range(len(states), len(node.input))]
    in_axes = _axes(attrs.get("scan_input_axes"), scans, [x.type.rank for x in xs])
    in_reversed = list(attrs.get("scan_input_directions") or [0] * scans)
    lengths = {x.shape[axis] for x, axis in zip(xs, in_axes)}
    if len(lengths) != 1 or -1 in lengths:
        raise imp.node_error(node, f"the scan inputs need one fixed sequence length, got lengths {sorted(lengths)}")
    (length,) = lengths
    produced = len(body.output) - len(states)
    steps: list[list[Value]] = [[] for _ in range(produced)]
    label = node.name or f"{node.op_type}_{imp.node_index}"
    for t in range(length):
        prefix = f"{label}/t{t}/"
        slices = [_step(imp, x, length - 1 - t if back else t, axis, f"{prefix}{k}")
                  for k, (x, axis, back) in enumerate(zip(xs, in_axes, in_reversed))]
        results = imp.run_subgraph(body, [*states, *slices], prefix)
        states = results[:len(states)]
        for outputs, value in zip(steps, results[len(states):]):
            outputs.append(value)
    out_axes = _axes(attrs.get("scan_output_axes"), produced, [steps[k][0].type.rank + 1 for k in range(produced)])
    out_reversed = list(attrs.get("scan_output_directions") or [0] * produced)
    stacked = [_stack(imp, node, values[::-1] if back else values, axis, k)
               for k, (values, axis, back) in enumerate(zip(steps, out_axes, out_reversed))]
    return [*states, *stacked]


def _step(imp: Importer, x: Value, t: int, axis: int, name: str) -> Value:
    """Slice `t` of `x` along `axis`, that axis removed."""
    index = imp.g.const(np.array(t, np.int64), name=imp.claim(f"{name}_index"))
    return imp.g.gather(x, index, axis, name=imp.claim(f"{name}_slice"))


def _stack(imp: Importer, node: onnx.NodeProto, values: list[Value], axis: int, k: int) -> Value:
    parts = [imp.g.unsqueeze(v, [axis], name=imp.name(node, f"/out{k}_t{t}")) for t, v in enumerate(values)]
    return parts[0] if len(parts) == 1 else imp.g.concat(parts, axis, name=imp.name(node, f"/out{k}"))


CONVERTERS: dict[str, Converter] = {"Scan": _scan}
