"""One ONNX import: ONNX tensor names become Graph values or values known at import time.

The model comes converted to the opset the op mapping reads, with its shapes inferred (see
`conversion`).

1. Inputs become `data` ops in order (initializers listed as inputs are weights, not inputs);
   a dimension without a `dim_value` (a `dim_param`, or nothing) is -1.
2. Walk the nodes the graph outputs need, in order. A node is folded (see `folding`) when it
   can be: a folder whose inputs are all known at import time (for Shape: its input's rank),
   or the reference evaluation of a node whose inputs are all numbers. Any other node is
   converted by its entry of `CONVERTERS` into `Graph` ops. Inputs an op takes as attributes
   (Reshape's shape, Slice's starts, Pad's pads...) must be known; a known value used as a
   tensor operand becomes a `const` (or, with symbols, ops computing it from `shape`) where it
   is first used.
3. A dimension dfir's types leave open is taken from shape inference where it is fixed there;
   one named by a `dim_param` is the dimension of the first graph input with that name, so
   shape arithmetic across tensors of one batch size folds.

Initializers become `const` ops named after them, created where first used.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx
from onnx import helper, numpy_helper

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.shape_arith import slice_bounds
from dfir.frontend.ge.onnx import folding
from dfir.frontend.ge.onnx.attributes import attribute, node_label
from dfir.frontend.ge.onnx.conversion import default_opset
from dfir.frontend.ge.onnx.folding import FOLDERS, TYPE_ONLY_INPUTS, evaluable, evaluate, numeric_tensors
from dfir.frontend.ge.onnx.known import Dim, Known, runs, spell
from dfir.frontend.ge.onnx.ops import CONVERTERS

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Graph, Value


def check_supported(proto: onnx.ModelProto, label: str) -> None:
    """One GeError listing every op type of `proto` that neither folds nor converts, with its nodes."""
    unsupported: dict[str, list[str]] = {}
    hints = []
    for index in unsupported_nodes(proto):
        node = proto.graph.node[index]
        unsupported.setdefault(op_name(node), []).append(node_label(node, index))
        hint = fix_hint(proto, [i for i in node.input if i]) if evaluable(node) else ""
        if hint:  # it would fold, were its inputs known
            hints.append(f"; node {node_label(node, index)} folds at import when its inputs are known: {hint}")
    if unsupported:
        listed = ", ".join(f"{op} ({'node' if len(nodes) == 1 else 'nodes'} {', '.join(nodes)})"
                           for op, nodes in unsupported.items())
        raise GeError(f"ONNX model '{label}' has ops dfir does not support: {listed}{''.join(hints[:1])}")


def unsupported_nodes(proto: onnx.ModelProto) -> list[int]:
    """The indices of the nodes of `proto` that neither fold nor convert."""
    types = inferred_types(proto)
    weights = {t.name for t in proto.graph.initializer}
    dynamic = {d.dim_param for vi in proto.graph.input if vi.name not in weights
               for d in vi.type.tensor_type.shape.dim if d.dim_param}
    numeric = numeric_tensors(proto, lambda node: _shape_may_be_static(node, types, dynamic))
    return [index for index, node in enumerate(proto.graph.node)
            if op_name(node) not in CONVERTERS and op_name(node) not in FOLDERS
            and not (evaluable(node) and all(not i or i in numeric for i in node.input))]


def op_name(node: onnx.NodeProto) -> str:
    """The op type, led by its domain outside the default one (`ai.onnx.ml.Binarizer`)."""
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"


def upstream(proto: onnx.ModelProto, names: list[str], through_shapes: bool = True) -> set[int]:
    """Indexes of the nodes tensors `names` depend on (without `through_shapes`, not through the
    input of a Shape or Size node, which reads only its input's shape)."""
    producer = {out: i for i, node in enumerate(proto.graph.node) for out in node.output if out}
    found: set[int] = set()
    pending = list(names)
    while pending:
        index = producer.get(pending.pop())
        if index is not None and index not in found:
            found.add(index)
            node = proto.graph.node[index]
            if through_shapes or node.op_type not in ("Shape", "Size"):
                pending.extend(i for i in node.input if i)
                pending.extend(outer_names(node))
    return found


def outer_names(node: onnx.NodeProto) -> set[str]:
    """The tensors of the enclosing graph that the subgraphs of `node` (a Scan's body) use."""
    used: set[str] = set()
    for attr in node.attribute:
        for graph in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs):
            defined = {*(i.name for i in graph.input), *(t.name for t in graph.initializer),
                       *(o for n in graph.node for o in n.output)}
            used |= {i for n in graph.node for i in [*n.input, *outer_names(n)] if i and i not in defined}
            used |= {o.name for o in graph.output if o.name not in defined}
    return used


def fix_hint(proto: onnx.ModelProto, names: list[str]) -> str:
    """How to import the model anyway where tensors `names` are computed from the values of
    model inputs: name those inputs and the `constant_inputs` argument that fixes them."""
    weights = {t.name for t in proto.graph.initializer}
    nodes = [proto.graph.node[i] for i in upstream(proto, names, through_shapes=False)]
    used = set(names) | {i for node in nodes if node.op_type not in ("Shape", "Size") for i in node.input}
    inputs = [vi for vi in proto.graph.input if vi.name not in weights]
    behind = [vi.name for vi in inputs if vi.name in used]
    tensors = all(vi.type.WhichOneof("value") == "tensor_type" for vi in inputs if vi.name in used)
    if not behind or not tensors or len(behind) == len(inputs):
        return ""  # fixing every input would leave nothing to feed
    plural = len(behind) > 1
    which = ("they are" if plural else "it is") if behind == names else "it is computed from"
    given = ", ".join(f"'{b}': ..." for b in behind)
    return (f"{which} the model input{'s' if plural else ''} {', '.join(repr(b) for b in behind)}: give "
            f"{'their values' if plural else 'its value'} with Graph.from_onnx(..., constant_inputs={{{given}}})")


def _then(clause: str) -> str:
    return f"; {clause}" if clause else ""


def inferred_types(proto: onnx.ModelProto) -> dict[str, onnx.TypeProto.Tensor]:
    """The tensor types shape inference gave the inputs and inner tensors of `proto` (not the
    outputs, whose declared shapes are the model author's)."""
    infos = [*proto.graph.input, *proto.graph.value_info]
    return {vi.name: vi.type.tensor_type for vi in infos if vi.type.WhichOneof("value") == "tensor_type"}


def _shape_may_be_static(node: onnx.NodeProto, types: dict[str, onnx.TypeProto.Tensor], dynamic: set[str]) -> bool:
    """Whether the dimensions a Shape node reads may all be fixed at import: shape inference fixes
    them, or leaves open some that dfir's types may fix (an output of Pad with computed pads, say),
    but none is a dimension of a graph input (a `dim_param` in `dynamic`). The walk refuses, naming
    the node, what then does not fold."""
    tensor_type = types.get(node.input[0])
    if tensor_type is None or not tensor_type.HasField("shape"):
        return False
    dims = list(tensor_type.shape.dim)
    picked = dims[slice_bounds(len(dims), attribute(node, "start", 0), attribute(node, "end", len(dims)), 1)]
    return not any(d.dim_param in dynamic for d in picked if d.HasField("dim_param"))


class Importer:
    """One import: ONNX tensor names -> Graph values or known values; see the module docstring."""

    def __init__(self, proto: onnx.ModelProto, label: str, graph: Graph):
        self.proto = proto
        self.label = label
        self.g = graph
        self.values: dict[str, Value] = {}
        self.known: dict[str, Known] = {}
        self.names: set[str] = set()
        self.shapes: dict[str, Value] = {}
        self.node_index = 0
        self.node: onnx.NodeProto | None = None  # the node being imported, which errors name
        self.opset = default_opset(proto)
        self.types = inferred_types(proto)
        infos = [*proto.graph.input, *proto.graph.value_info, *proto.graph.output]
        self.elem_types = {vi.name: vi.type.tensor_type.elem_type for vi in infos
                           if vi.type.WhichOneof("value") == "tensor_type" and vi.type.tensor_type.elem_type}
        self.symbols: dict[str, Dim] = {}  # dim_param -> the first graph input dimension it names

    def run(self) -> Graph:
        weights = {t.name: t for t in self.proto.graph.initializer}
        for name, tensor in weights.items():
            array = numpy_helper.to_array(tensor)
            self.known[name] = Known.of(array)
        inputs = [vi for vi in self.proto.graph.input if vi.name not in weights]
        if not inputs:
            raise self.error("the model has no inputs; a dfir graph runs when fed, so it needs at least one")
        for index, info in enumerate(inputs):
            self._add_input(index, info)
        needed = self._needed_nodes()
        for index, node in enumerate(self.proto.graph.node):
            if index in needed:
                self._visit(node, index)
        self.g.set_outputs([self.tensor_named(o.name) for o in self.proto.graph.output])
        return self.g

    # --- inputs and liveness ---

    def _add_input(self, index: int, info: onnx.ValueInfoProto) -> None:
        kind = info.type.WhichOneof("value")
        if kind != "tensor_type":
            raise self.error(f"input '{info.name}' is a {kind}, expected a tensor")
        tensor_type = info.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor_type.shape.dim]
        for axis, d in enumerate(tensor_type.shape.dim):
            if d.HasField("dim_param"):
                self.symbols.setdefault(d.dim_param, Dim(info.name, axis))
        dtype = self.dtype_of(tensor_type.elem_type, f"input '{info.name}'")
        self.values[info.name] = self.g.data(index, shape, dtype, name=self.claim(info.name))

    def _needed_nodes(self) -> set[int]:
        """Indexes of the nodes the graph outputs depend on."""
        return upstream(self.proto, [o.name for o in self.proto.graph.output])

    def _visit(self, node: onnx.NodeProto, index: int) -> None:
        self.node_index, self.node = index, node
        folder = FOLDERS.get(node.op_type)
        inputs = [self.known.get(i) if i else None for i in node.input]
        all_known = all(k is not None or not i for k, i in zip(inputs, node.input))
        type_only = TYPE_ONLY_INPUTS.get(node.op_type, frozenset())
        values_known = all(k is not None or not i or p in type_only for p, (k, i) in enumerate(zip(inputs, node.input)))
        if folder is not None and values_known:
            folded = folder(self, node, inputs)
            if folded is not None:
                self.known[node.output[0]] = folded
                return
        if all_known and all(k is None or k.is_constant for k in inputs) and evaluable(node):
            results = evaluate(self, node, inputs, required=node.op_type not in CONVERTERS)
            if results is not None:
                self.known.update((name, known) for name, known in zip(node.output, results) if name)
                return
        convert = CONVERTERS.get(node.op_type)
        if convert is None:
            raise self.node_error(node, self._why_not_folded(node, inputs))
        outputs = convert(self, node)
        for name, value in zip(node.output, outputs):
            if name:
                self.values[name] = value

    def _why_not_folded(self, node: onnx.NodeProto, inputs: list[Known | None]) -> str:
        """Why a node dfir has no converter for, which `check_supported` expected to fold, did not:
        its result is too large, or an input was not folded (itself too large)."""
        open_inputs = [name for name, k in zip(node.input, inputs) if name and (k is None or not k.is_constant)]
        if not open_inputs:
            return f"its result holds more than {folding.MAX_FOLDED_ELEMENTS} elements, too many to compute at import"
        return (f"dfir has no converter for this op and computes it at import only from constant inputs; "
                f"{', '.join(repr(i) for i in open_inputs)} {'is' if len(open_inputs) == 1 else 'are'} "
                "known only at run time")

    # --- what converters use ---

    def run_subgraph(self, graph: onnx.GraphProto, bound: list[Value], prefix: str) -> list[Value]:
        """The outputs of `graph` (a Scan's body) run once on the values `bound` to its inputs: its
        nodes are imported as if in this graph, their tensors and names led by `prefix`; tensors
        of the enclosing graph keep their names."""
        if len(bound) != len(graph.input):
            raise self.error(f"the subgraph '{graph.name}' takes {len(graph.input)} inputs, given {len(bound)}")
        inner = {*(i.name for i in graph.input), *(t.name for t in graph.initializer),
                 *(o for n in graph.node for o in n.output if o)}

        def rename(name: str) -> str:
            return prefix + name if name in inner else name
        for info, value in zip(graph.input, bound):
            self.values[rename(info.name)] = value
        for t in graph.initializer:
            self.known[rename(t.name)] = Known.of(numpy_helper.to_array(t))
        outer_node, outer_index = self.node, self.node_index
        for index, node in enumerate(graph.node):
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            copy.name = prefix + (node.name or f"{node.op_type}{index}")
            copy.input[:] = [rename(i) if i else i for i in node.input]
            copy.output[:] = [rename(o) if o else o for o in node.output]
            self._visit(copy, index)
        self.node, self.node_index = outer_node, outer_index
        return [self.tensor_named(rename(o.name)) for o in graph.output]

    def tensor(self, node: onnx.NodeProto, i: int) -> Value | None:
        """Input `i` of `node` as a graph value, or None when the input is absent."""
        if i >= len(node.input) or not node.input[i]:
            return None
        return self.tensor_named(node.input[i])

    def tensor_named(self, name: str) -> Value:
        """The graph value of ONNX tensor `name`, creating it from what is known if needed."""
        if name not in self.values:
            self.values[name] = self._materialize(name, self.known[name])
        return self.values[name]

    def static(self, node: onnx.NodeProto, i: int, what: str) -> Known | None:
        """Input `i` of `node`, which must be known at import time (None when absent)."""
        if i >= len(node.input) or not node.input[i]:
            return None
        known = self.known.get(node.input[i])
        if known is None:
            name = node.input[i]
            raise self.node_error(node, f"{what} (input '{name}') must be known when the model "
                                        f"is imported: a constant, or computed from shapes{_then(fix_hint(self.proto, [name]))}")
        return known

    def static_ints(self, node: onnx.NodeProto, i: int, what: str) -> list[int] | None:
        """Input `i` as a list of ints known at import time, with no symbolic entry."""
        known = self.static(node, i, what)
        if known is None:
            return None
        if not known.is_constant:
            raise self.node_error(node, f"{what} (input '{node.input[i]}') depends on dynamic dimensions: "
                                        f"{spell(known)}")
        return known.ints()

    def dims(self, name: str) -> list[int | Dim]:
        """The dimensions of ONNX tensor `name`: sizes, or `Dim`s where not fixed."""
        if name in self.values:
            return [d if d >= 0 else self._open_dim(name, i) for i, d in enumerate(self.values[name].shape)]
        return list(self.known[name].array.shape)

    def _open_dim(self, name: str, axis: int) -> int | Dim:
        """A dimension dfir's types leave open: fixed, or named, by shape inference (step 3)."""
        tensor_type = self.types.get(name)
        dims = tensor_type.shape.dim if tensor_type is not None and tensor_type.HasField("shape") else ()
        if axis < len(dims) and dims[axis].HasField("dim_value"):
            return dims[axis].dim_value
        if axis < len(dims) and dims[axis].dim_param in self.symbols:
            return self.symbols[dims[axis].dim_param]
        return Dim(name, axis)

    def inferred_type(self, name: str) -> int | None:
        """The element type the model (or shape inference) gives tensor `name` (None: unknown)."""
        return self.elem_types.get(name)

    def name(self, node: onnx.NodeProto, suffix: str = "") -> str:
        """A fresh graph node name for (a part of) `node`."""
        base = node.name or f"{node.op_type}_{self.node_index}"
        return self.claim(base + suffix)

    def claim(self, name: str) -> str:
        """`name`, or `name_<n>` when a node already has it."""
        candidate, n = name, 0
        while candidate in self.names:
            n += 1
            candidate = f"{name}_{n}"
        self.names.add(candidate)
        return candidate

    def dtype_of(self, elem_type: int, what: str) -> dt.DType:
        try:
            return dt.from_numpy(helper.tensor_dtype_to_np_dtype(elem_type))
        except (GeError, KeyError, TypeError):
            raise self.error(f"{what} has element type {onnx.TensorProto.DataType.Name(elem_type)}, which "
                             "GE tensors cannot hold") from None

    def error(self, message: str) -> GeError:
        """A GeError naming the model, and the node being imported if any."""
        if self.node is not None:
            return self.node_error(self.node, message)
        return GeError(message, context={"onnx": self.label})

    def node_error(self, node: onnx.NodeProto, message: str) -> GeError:
        return GeError(f"{node.op_type}: {message}",
                       context={"onnx": self.label, "node": node.name or f"#{self.node_index}"})

    # --- known values as graph values ---

    def _materialize(self, name: str, known: Known) -> Value:
        """A graph value computing `known`: a const, or shape arithmetic for symbolic entries."""
        if known.is_constant:
            return self.g.const(known.array, name=self.claim(name))
        pieces = [self._piece(name, run) for run in runs(known.array.reshape(-1))]
        vector = pieces[0] if len(pieces) == 1 else self.g.concat(pieces, 0, name=self.claim(f"{name}/concat"))
        if known.dtype != np.int64:
            vector = self.g.cast(vector, dt.from_numpy(known.dtype), name=self.claim(f"{name}/cast"))
        if known.array.ndim == 0:
            vector = self.g.squeeze(vector, [0], name=self.claim(f"{name}/squeeze"))
        return vector

    def _piece(self, name: str, run: list) -> Value:
        """A run of ints (a const) or of consecutive dimensions of one tensor (a slice of its shape)."""
        if not isinstance(run[0], Dim):
            return self.g.const(np.array(run, np.int64), name=self.claim(f"{name}/const"))
        tensor = run[0].tensor
        if tensor not in self.shapes:
            self.shapes[tensor] = self.g.shape(self.tensor_named(tensor), name=self.claim(f"{tensor}/shape"))
        first = run[0].axis
        return self.g.slice(self.shapes[tensor], [first], [first + len(run)], name=self.claim(f"{name}/dims"))
