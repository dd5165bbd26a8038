"""The child process of `dfir.frontend.ge.tensorflow_import`: converts one frozen TensorFlow graph
to ONNX with tf2onnx. The only dfir module that imports TensorFlow; run, never imported:

    python -m dfir.frontend.ge.tensorflow_convert GRAPH.pb PARAMS_JSON OUTPUT.onnx

It writes the model to OUTPUT.onnx and exits 0, or writes a GeError's message to OUTPUT.error and
exits with `GE_ERROR_STATUS`. `load_params` were checked by the parent; what needs the graph
(which Placeholders and nodes there are) is checked here.
"""
from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Mapping

import onnx
import tensorflow as tf
import tf2onnx

from dfir.core.errors import GeError
from dfir.frontend.ge.tensorflow_import import (GE_ERROR_STATUS, GRAPH_NAME, INPUT_DATA_NAMES, OPSET,
                                                OUTPUT_NODE_NAME, input_order, output_tensors)

# Their Python log lines (deprecations, progress) are not the user's concern.
for _name in ("tensorflow", "tf2onnx"):
    logging.getLogger(_name).setLevel(logging.ERROR)


def convert(path: str, load_params: Mapping[str, str], where: str) -> onnx.ModelProto:
    """The ONNX model of the graph at `path`: inputs and outputs as the parent's module docstring says."""
    graph_def = _read_graph_def(path, where)
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    inputs = _inputs(graph, load_params.get(INPUT_DATA_NAMES, ""), where)
    outputs = _outputs(graph, load_params.get(OUTPUT_NODE_NAME, ""), where)
    name = load_params.get(GRAPH_NAME) or Path(path).stem
    try:
        model, _ = tf2onnx.convert.from_graph_def(graph_def, name=name, input_names=[f"{i}:0" for i in inputs],
                                                  output_names=outputs, opset=OPSET)
    except Exception as error:  # noqa: BLE001 - tf2onnx raises what its op handlers raise
        raise GeError(f"{where} cannot be converted to ONNX by tf2onnx: {type(error).__name__}: {error}") from None
    _rename_inputs(model, {f"{i}:0": i for i in inputs})
    model.graph.name = name
    return model


def _read_graph_def(path: str, where: str):
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise GeError(f"{where} cannot be read: {error.strerror}") from None
    graph_def = tf.compat.v1.GraphDef()
    try:
        graph_def.ParseFromString(data)
    except Exception as error:  # noqa: BLE001 - protobuf's DecodeError, by implementation
        raise GeError(f"{where} is not a binary TensorFlow GraphDef (.pb): {error}") from None
    if not graph_def.node:
        raise GeError(f"{where} holds no TensorFlow graph nodes")
    return graph_def


def _inputs(graph, names: str, where: str) -> list[str]:
    """The Placeholder names in input order: `input_data_names`' order, else the file's."""
    placeholders = [op.name for op in graph.get_operations() if op.type == "Placeholder"]
    if not names:
        return placeholders
    order = input_order(names, where)
    unnamed = [name for name in placeholders if name not in order]
    if unnamed:
        raise GeError(f"{where}: input '{unnamed[0]}' is not in load param {INPUT_DATA_NAMES} "
                      f"'{names}'")
    unknown = [name for name in order if name not in placeholders]
    if unknown:
        raise GeError(f"{where}: load param {INPUT_DATA_NAMES} names '{unknown[0]}', which is not a "
                      f"Placeholder of the graph (its Placeholders: {', '.join(placeholders) or 'none'})")
    return order


def _outputs(graph, spec: str, where: str) -> list[str]:
    """The output tensor names: `ge.outputNodeName`'s, else every output of the unconsumed nodes."""
    if not spec:
        consumed = {tensor.name for op in graph.get_operations() for tensor in op.inputs}
        outputs = [tensor.name for op in graph.get_operations() if op.type != "Placeholder"
                   for tensor in op.outputs if tensor.name not in consumed]
        if not outputs:
            raise GeError(f"{where}: the graph has no output (no node's output is left unconsumed)")
        return outputs
    outputs = []
    for node, index in output_tensors(spec, where):
        try:
            op = graph.get_operation_by_name(node)
        except KeyError:
            raise GeError(f"{where}: load param {OUTPUT_NODE_NAME} names node '{node}', which is not "
                          "in the graph") from None
        if index >= len(op.outputs):
            raise GeError(f"{where}: load param {OUTPUT_NODE_NAME} names output {index} of node '{node}', "
                          f"which has {len(op.outputs)} outputs")
        outputs.append(f"{node}:{index}")
    return outputs


def _rename_inputs(model: onnx.ModelProto, names: Mapping[str, str]) -> None:
    """The ONNX inputs named as GE names the graph's Data nodes: after the Placeholder, not its tensor."""
    graph = model.graph
    for value in graph.input:
        value.name = names.get(value.name, value.name)
    for node in graph.node:
        node.input[:] = [names.get(name, name) for name in node.input]
    for value in graph.output:
        if value.name in names:  # a Placeholder passed straight through to an output
            value.name = names[value.name]


def main(argv: list[str]) -> int:
    """`GRAPH.pb PARAMS_JSON OUTPUT.onnx` (module docstring); returns the exit status."""
    path, params, output = argv
    where = f"GraphProcessPoint: TENSORFLOW graph file '{path}'"
    try:
        model = convert(path, json.loads(params), where)
    except GeError as error:
        Path(output).with_suffix(".error").write_text(error.error_message)
        return GE_ERROR_STATUS
    Path(output).write_bytes(model.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
