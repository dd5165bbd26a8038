"""ONNX import: an ONNX model (default-domain opset 13 or later) becomes a `Graph`.

    g = import_onnx("model.onnx", Graph)    # what Graph.from_onnx("model.onnx") does

1. Load the model (a path or an `onnx.ModelProto`) and check it with the ONNX checker; a missing,
   unreadable or invalid file is a GeError naming the file. The default domain's opset must be
   13 or later.
2. Refuse unsupported ops up front: one GeError lists every unsupported op type with the nodes
   using it.
3. Inputs become `data` ops in order (initializers listed as inputs are weights, not inputs);
   a dimension without a `dim_value` (a `dim_param`, or nothing) is -1.
4. Walk the nodes the graph outputs need, in order. A node that computes shapes (Constant,
   Shape, Gather, Slice, Concat, Unsqueeze, Squeeze, Reshape, Cast, Identity, integer
   arithmetic) and whose inputs are all known at import time (for Shape: its input's rank) is
   *folded*: its value is computed here, with the dimensions of dynamic inputs as symbols
   (`_Dim`). Any other node is converted by its entry of `CONVERTERS` into `Graph` ops. Inputs
   an op takes as attributes (Reshape's shape, Slice's starts, Pad's pads...) must be known;
   Resize's sizes may also be a run-time tensor. A known value used as a tensor operand becomes
   a `const` (or, with symbols, ops computing it from `shape`) where it is first used.
5. Reshape targets built from a tensor's own dimensions (`x.view(x.size(0), -1)`) resolve to
   the 0 (copy) and -1 (infer) of `ge.reshape`.

Initializers become `const` ops named after them, created where first used.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.shape_arith import slice_bounds

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Graph, Value

__all__ = ["import_onnx", "CONVERTERS", "MIN_OPSET"]

MIN_OPSET = 13
"""The oldest default-domain opset the importer reads (attribute/input forms of ops before it differ)."""


# --- loading ------------------------------------------------------------------------------------

def import_onnx(model: str | os.PathLike | onnx.ModelProto, new_graph: Callable[[str], Graph],
                name: str | None = None) -> Graph:
    """The graph of an ONNX model, built into `new_graph(name)` (a `Graph`, through its builder
    methods); `name` defaults to the file's stem or the graph's name."""
    proto, label, default_name = _load(model)
    _check_opset(proto, label)
    _check_supported(proto, label)
    return _Importer(proto, label, new_graph(name or default_name)).run()


def _load(model: object) -> tuple[onnx.ModelProto, str, str]:
    """(checked model, how errors name it, default graph name)."""
    if isinstance(model, onnx.ModelProto):
        label = model.graph.name or "<onnx.ModelProto>"
        proto = model
    elif isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        label = path
        proto = _read(path)
    else:
        raise GeError(f"an ONNX model must be a file path or an onnx.ModelProto, got {type(model).__name__}")
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as e:
        raise GeError(f"ONNX model '{label}' is not a valid ONNX model: {str(e).strip().splitlines()[0]}") from None
    default = os.path.splitext(os.path.basename(label))[0] if proto is not model else (proto.graph.name or "onnx_graph")
    return proto, label, default


def _read(path: str) -> onnx.ModelProto:
    if not os.path.exists(path):
        raise GeError(f"ONNX model file '{path}' does not exist")
    if os.path.isdir(path):
        raise GeError(f"ONNX model file '{path}' is a directory")
    try:
        return onnx.load(path)
    except OSError as e:
        raise GeError(f"ONNX model file '{path}' cannot be read: {e.strerror or e}") from None
    except Exception as e:  # protobuf decoding raises several unrelated types
        raise GeError(f"ONNX model file '{path}' is not a valid ONNX model: {e}") from None


def _check_opset(proto: onnx.ModelProto, label: str) -> None:
    versions = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    if not versions or versions[0] < MIN_OPSET:
        found = f"opset {versions[0]}" if versions else "no opset"
        raise GeError(f"ONNX model '{label}' uses {found} of the default domain; dfir imports opset "
                      f"{MIN_OPSET} or later (onnx.version_converter can upgrade it)")


def _check_supported(proto: onnx.ModelProto, label: str) -> None:
    unsupported: dict[str, list[str]] = {}
    for index, node in enumerate(proto.graph.node):
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        if op not in CONVERTERS and op not in _FOLDERS:
            unsupported.setdefault(op, []).append(_node_label(node, index))
    if unsupported:
        listed = ", ".join(f"{op} ({'node' if len(nodes) == 1 else 'nodes'} {', '.join(nodes)})"
                           for op, nodes in unsupported.items())
        raise GeError(f"ONNX model '{label}' has ops dfir does not support: {listed}")


def _node_label(node: onnx.NodeProto, index: int) -> str:
    return f"'{node.name}'" if node.name else f"#{index}"


# --- values known at import time ------------------------------------------------------------------

@dataclass(frozen=True)
class _Dim:
    """Dimension `axis` of tensor `tensor`, unknown until run time."""

    tensor: str
    axis: int


@dataclass(frozen=True)
class _Known:
    """A tensor's value at import time. `array` has dtype object, holding ints and `_Dim`s, when
    some entry is symbolic; `dtype` is then the tensor's real element type."""

    array: np.ndarray
    dtype: np.dtype

    @staticmethod
    def of(array: np.ndarray, dtype: np.dtype | None = None) -> _Known:
        """`array` as known, turned numeric when no entry is symbolic."""
        dtype = np.dtype(dtype or array.dtype)
        if array.dtype == object and not any(isinstance(v, _Dim) for v in array.flat):
            array = array.astype(dtype)
        return _Known(array, dtype)

    @property
    def is_constant(self) -> bool:
        return self.array.dtype != object

    def ints(self) -> list[int]:
        return [int(v) for v in self.array.reshape(-1)]


# --- the importer -------------------------------------------------------------------------------

class _Importer:
    """One import: ONNX tensor names -> Graph values or known values; see the module docstring."""

    def __init__(self, proto: onnx.ModelProto, label: str, graph: Graph):
        self.proto = proto
        self.label = label
        self.g = graph
        self.values: dict[str, Value] = {}
        self.known: dict[str, _Known] = {}
        self.names: set[str] = set()
        self.shapes: dict[str, Value] = {}
        self.node_index = 0

    def run(self) -> Graph:
        weights = {t.name: t for t in self.proto.graph.initializer}
        for name, tensor in weights.items():
            array = numpy_helper.to_array(tensor)
            self.known[name] = _Known.of(array)
        inputs = [vi for vi in self.proto.graph.input if vi.name not in weights]
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
        dtype = self.dtype_of(tensor_type.elem_type, f"input '{info.name}'")
        self.values[info.name] = self.g.data(index, shape, dtype, name=self.claim(info.name))

    def _needed_nodes(self) -> set[int]:
        """Indexes of the nodes the graph outputs depend on."""
        producer = {out: i for i, node in enumerate(self.proto.graph.node) for out in node.output if out}
        needed: set[int] = set()
        pending = [o.name for o in self.proto.graph.output]
        while pending:
            index = producer.get(pending.pop())
            if index is not None and index not in needed:
                needed.add(index)
                pending.extend(i for i in self.proto.graph.node[index].input if i)
        return needed

    def _visit(self, node: onnx.NodeProto, index: int) -> None:
        self.node_index = index
        folder = _FOLDERS.get(node.op_type)
        inputs = [self.known.get(i) if i else None for i in node.input]
        all_known = all(k is not None or not i for k, i in zip(inputs, node.input))
        if folder is not None and (all_known or node.op_type == "Shape"):
            folded = folder(self, node, inputs)
            if folded is not None:
                self.known[node.output[0]] = folded
                return
        outputs = CONVERTERS[node.op_type](self, node)
        for name, value in zip(node.output, outputs):
            if name:
                self.values[name] = value

    # --- what converters use ---

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

    def static(self, node: onnx.NodeProto, i: int, what: str) -> _Known | None:
        """Input `i` of `node`, which must be known at import time (None when absent)."""
        if i >= len(node.input) or not node.input[i]:
            return None
        known = self.known.get(node.input[i])
        if known is None:
            raise self.node_error(node, f"{what} (input '{node.input[i]}') must be known when the model "
                                        "is imported: a constant, or computed from shapes")
        return known

    def static_ints(self, node: onnx.NodeProto, i: int, what: str) -> list[int] | None:
        """Input `i` as a list of ints known at import time, with no symbolic entry."""
        known = self.static(node, i, what)
        if known is None:
            return None
        if not known.is_constant:
            raise self.node_error(node, f"{what} (input '{node.input[i]}') depends on dynamic dimensions: "
                                        f"{_spell(known)}")
        return known.ints()

    def dims(self, name: str) -> list[int | _Dim]:
        """The dimensions of ONNX tensor `name`: sizes, or `_Dim`s where not fixed."""
        if name in self.values:
            return [d if d >= 0 else _Dim(name, i) for i, d in enumerate(self.values[name].shape)]
        return list(self.known[name].array.shape)

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
        return GeError(message, context={"onnx": self.label})

    def node_error(self, node: onnx.NodeProto, message: str) -> GeError:
        return GeError(f"{node.op_type}: {message}",
                       context={"onnx": self.label, "node": node.name or f"#{self.node_index}"})

    # --- known values as graph values ---

    def _materialize(self, name: str, known: _Known) -> Value:
        """A graph value computing `known`: a const, or shape arithmetic for symbolic entries."""
        if known.is_constant:
            return self.g.const(known.array, name=self.claim(name))
        pieces = [self._piece(name, run) for run in _runs(known.array.reshape(-1))]
        vector = pieces[0] if len(pieces) == 1 else self.g.concat(pieces, 0, name=self.claim(f"{name}/concat"))
        if known.dtype != np.int64:
            vector = self.g.cast(vector, dt.from_numpy(known.dtype), name=self.claim(f"{name}/cast"))
        if known.array.ndim == 0:
            vector = self.g.squeeze(vector, [0], name=self.claim(f"{name}/squeeze"))
        return vector

    def _piece(self, name: str, run: list) -> Value:
        """A run of ints (a const) or of consecutive dimensions of one tensor (a slice of its shape)."""
        if not isinstance(run[0], _Dim):
            return self.g.const(np.array(run, np.int64), name=self.claim(f"{name}/const"))
        tensor = run[0].tensor
        if tensor not in self.shapes:
            self.shapes[tensor] = self.g.shape(self.tensor_named(tensor), name=self.claim(f"{tensor}/shape"))
        first = run[0].axis
        return self.g.slice(self.shapes[tensor], [first], [first + len(run)], name=self.claim(f"{name}/dims"))


def _runs(entries: np.ndarray) -> list[list]:
    """Entries grouped into runs of ints and runs of consecutive dimensions of one tensor."""
    runs: list[list] = []
    for entry in entries:
        last = runs[-1][-1] if runs else None
        same_kind = last is not None and isinstance(entry, _Dim) == isinstance(last, _Dim)
        follows = not isinstance(entry, _Dim) or (
            last is not None and isinstance(last, _Dim) and entry.tensor == last.tensor and entry.axis == last.axis + 1)
        if same_kind and follows:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def _spell(known: _Known) -> str:
    """A known value for messages: symbolic entries as `dim(<tensor>, <axis>)`."""
    entries = [f"dim({v.tensor}, {v.axis})" if isinstance(v, _Dim) else str(v) for v in known.array.reshape(-1)]
    return "[" + ", ".join(entries) + "]"


# --- attributes -----------------------------------------------------------------------------------

def _attrs(node: onnx.NodeProto) -> dict[str, object]:
    """The node's attributes as Python values (strings decoded)."""
    values = {}
    for attribute in node.attribute:
        value = helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            value = value.decode()
        values[attribute.name] = value
    return values


def _attr(node: onnx.NodeProto, name: str, default=None):
    return _attrs(node).get(name, default)


# --- folding ---------------------------------------------------------------------------------------

Folder = Callable[[_Importer, onnx.NodeProto, list], "_Known | None"]


def _fold_constant(imp: _Importer, node: onnx.NodeProto, inputs: list) -> _Known:
    attrs = _attrs(node)
    if "value" in attrs:
        return _Known.of(numpy_helper.to_array(attrs["value"]))
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):
        if key in attrs:
            return _Known.of(np.array(attrs[key], dtype))
    raise imp.node_error(node, f"only tensor, float and int values are supported, got {sorted(attrs)}")


def _fold_identity(imp, node, inputs):
    return inputs[0]


def _fold_shape(imp: _Importer, node: onnx.NodeProto, inputs: list) -> _Known:
    dims = imp.dims(node.input[0])
    start, end = _attr(node, "start", 0), _attr(node, "end", None)
    picked = dims[slice_bounds(len(dims), start, len(dims) if end is None else end, 1)]
    return _Known.of(np.array(picked, dtype=object).reshape(len(picked)), np.int64)


def _fold_cast(imp, node, inputs):
    (x,) = inputs
    to = helper.tensor_dtype_to_np_dtype(_attr(node, "to"))
    if x.is_constant:
        return _Known.of(x.array.astype(to))
    return _Known(x.array, to) if to.kind in "iu" else None


def _fold_gather(imp, node, inputs):
    x, indices = inputs
    if not indices.is_constant:
        return None
    axis = _attr(node, "axis", 0) % max(x.array.ndim, 1)
    size = x.array.shape[axis]
    if ((indices.array < -size) | (indices.array >= size)).any():
        raise imp.node_error(node, f"indices {indices.ints()} are out of range for {size} entries")
    return _Known.of(np.asarray(np.take(x.array, indices.array, axis=axis), x.array.dtype), x.dtype)


def _fold_slice(imp, node, inputs):
    x, starts, ends, axes, steps = (inputs + [None, None])[:5]
    if not all(k is None or k.is_constant for k in (starts, ends, axes, steps)):
        return None
    index = [slice(None)] * x.array.ndim
    starts, ends = starts.ints(), ends.ints()
    axes = axes.ints() if axes is not None else list(range(len(starts)))
    steps = steps.ints() if steps is not None else [1] * len(starts)
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis] = slice_bounds(x.array.shape[axis], start, end, step)
    return _Known.of(x.array[tuple(index)], x.dtype)


def _fold_concat(imp, node, inputs):
    return _Known.of(np.concatenate([k.array for k in inputs], axis=_attr(node, "axis")), inputs[0].dtype)


def _fold_unsqueeze(imp, node, inputs):
    x, axes = inputs
    return _Known.of(np.expand_dims(x.array, tuple(axes.ints())), x.dtype) if axes.is_constant else None


def _fold_squeeze(imp, node, inputs):
    x, *axes = inputs
    if axes and axes[0] is not None and not axes[0].is_constant:
        return None
    axes = tuple(axes[0].ints()) if axes and axes[0] is not None else None
    return _Known.of(np.squeeze(x.array, axis=axes), x.dtype)


def _fold_reshape(imp, node, inputs):
    x, shape = inputs
    if not shape.is_constant:
        return None
    target = [x.array.shape[i] if s == 0 else s for i, s in enumerate(shape.ints())]
    return _Known.of(x.array.reshape(target), x.dtype)


def _fold_arithmetic(combine: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Folder:
    def fold(imp, node, inputs):
        x, y = inputs
        try:
            result = combine(x.array, y.array)
        except TypeError:  # a symbolic dimension in the arithmetic: compute it at run time
            return None
        return _Known.of(np.asarray(result), np.result_type(x.dtype, y.dtype))
    return fold


def _truncating_divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "f" or y.dtype.kind == "f":
        return x / y
    quotient = np.floor_divide(x, y)
    return quotient + ((quotient * y != x) & ((x < 0) != (y < 0)))


_FOLDERS: dict[str, Folder] = {
    "Constant": _fold_constant, "Identity": _fold_identity, "Shape": _fold_shape, "Cast": _fold_cast,
    "Gather": _fold_gather, "Slice": _fold_slice, "Concat": _fold_concat, "Unsqueeze": _fold_unsqueeze,
    "Squeeze": _fold_squeeze, "Reshape": _fold_reshape,
    "Add": _fold_arithmetic(np.add), "Sub": _fold_arithmetic(np.subtract),
    "Mul": _fold_arithmetic(np.multiply), "Div": _fold_arithmetic(_truncating_divide),
}
"""Op type -> how it computes its value at import time when its inputs are known (None: it cannot)."""


# --- converting -----------------------------------------------------------------------------------

Converter = Callable[[_Importer, onnx.NodeProto], Sequence["Value"]]


def _binary(method: str) -> Converter:
    def convert(imp, node):
        return [getattr(imp.g, method)(imp.tensor(node, 0), imp.tensor(node, 1), name=imp.name(node))]
    return convert


def _unary(method: str) -> Converter:
    def convert(imp, node):
        return [getattr(imp.g, method)(imp.tensor(node, 0), name=imp.name(node))]
    return convert


def _variadic(method: str) -> Converter:
    """Max and Min of one or more inputs, as a chain of binary ops."""
    def convert(imp, node):
        values = [imp.tensor(node, i) for i in range(len(node.input))]
        if len(values) == 1:
            return [imp.g.identity(values[0], name=imp.name(node))]
        result = values[0]
        for i, value in enumerate(values[1:], 1):
            suffix = "" if i == len(values) - 1 else f"/{i}"
            result = getattr(imp.g, method)(result, value, name=imp.name(node, suffix))
        return [result]
    return convert


def _pow(imp, node):
    x, y = imp.tensor(node, 0), imp.tensor(node, 1)
    if y.dtype != x.dtype:
        y = imp.g.cast(y, x.dtype, name=imp.name(node, "/exponent"))
    return [imp.g.pow(x, y, name=imp.name(node))]


def _gelu(imp, node):
    return [imp.g.gelu(imp.tensor(node, 0), approximate=_attr(node, "approximate", "none"), name=imp.name(node))]


def _matmul(imp, node):
    """numpy matmul: a 1-D operand gains a dimension of 1 for the product and loses it after."""
    x, y = imp.tensor(node, 0), imp.tensor(node, 1)
    dropped = []
    if x.type.rank == 1:
        x, dropped = imp.g.unsqueeze(x, [0], name=imp.name(node, "/lhs")), dropped + [-2]
    if y.type.rank == 1:
        y, dropped = imp.g.unsqueeze(y, [1], name=imp.name(node, "/rhs")), dropped + [-1]
    if not dropped:
        return [imp.g.matmul(x, y, name=imp.name(node))]
    product = imp.g.matmul(x, y, name=imp.name(node, "/matmul"))
    return [imp.g.squeeze(product, dropped, name=imp.name(node))]


def _gemm(imp, node):
    attrs = _attrs(node)
    return [imp.g.gemm(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2),
                       alpha=attrs.get("alpha", 1.0), beta=attrs.get("beta", 1.0),
                       trans_a=bool(attrs.get("transA", 0)), trans_b=bool(attrs.get("transB", 0)),
                       name=imp.name(node))]


def _require_image(imp: _Importer, node: onnx.NodeProto, x: Value) -> None:
    if x.type.rank != 4:
        raise imp.node_error(node, f"only 2-D inputs (rank 4, NCHW) are supported, got shape {x.shape}")


def _window_pads(imp: _Importer, node: onnx.NodeProto, x: Value, kernel: Sequence[int],
                 attrs: dict) -> list[int]:
    """ONNX `pads` ([h_begin, w_begin, h_end, w_end]) or `auto_pad` as ge pads [top, bottom, left, right]."""
    auto = attrs.get("auto_pad", "NOTSET")
    if auto == "NOTSET":
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
        if len(pads) != 4:
            raise imp.node_error(node, f"pads must have 4 entries for a 2-D window, got {pads}")
        return [pads[0], pads[2], pads[1], pads[3]]
    if auto == "VALID":
        return [0, 0, 0, 0]
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise imp.node_error(node, f"auto_pad '{auto}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    sizes = x.shape[2:]
    if -1 in sizes:
        raise imp.node_error(node, f"auto_pad {auto} needs fixed spatial dimensions, got shape {x.shape}")
    pads = []
    strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    for size, k, stride, dilation in zip(sizes, kernel, strides, dilations):
        total = max(0, (-(-size // stride) - 1) * stride + dilation * (k - 1) + 1 - size)
        small, large = total // 2, total - total // 2
        pads += [small, large] if auto == "SAME_UPPER" else [large, small]
    return pads


def _conv(imp, node):
    x, w = imp.tensor(node, 0), imp.tensor(node, 1)
    _require_image(imp, node, x)
    attrs = _attrs(node)
    kernel = attrs.get("kernel_shape", w.shape[2:])
    return [imp.g.conv2d(x, w, imp.tensor(node, 2), strides=list(attrs.get("strides", [1, 1])),
                         pads=_window_pads(imp, node, x, kernel, attrs),
                         dilations=list(attrs.get("dilations", [1, 1])), groups=attrs.get("group", 1),
                         name=imp.name(node))]


def _pool(method: str) -> Converter:
    def convert(imp, node):
        x = imp.tensor(node, 0)
        _require_image(imp, node, x)
        if len(node.output) > 1 and node.output[1]:
            raise imp.node_error(node, "the Indices output is not supported")
        attrs = _attrs(node)
        kernel = list(attrs["kernel_shape"])
        flags = {"ceil_mode": bool(attrs.get("ceil_mode", 0))}
        if method == "avg_pool":
            flags["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
        return [getattr(imp.g, method)(x, kernel, strides=list(attrs.get("strides", [1, 1])),
                                       pads=_window_pads(imp, node, x, kernel, attrs),
                                       dilations=list(attrs.get("dilations", [1, 1])), **flags,
                                       name=imp.name(node))]
    return convert


def _only_first_output(imp: _Importer, node: onnx.NodeProto) -> None:
    if any(node.output[1:]):
        raise imp.node_error(node, f"only the first output is supported, the node also produces "
                                   f"{[o for o in node.output[1:] if o]}")


def _batch_norm(imp, node):
    attrs = _attrs(node)
    if attrs.get("training_mode", 0):
        raise imp.node_error(node, "training_mode 1 is not supported (inference only)")
    _only_first_output(imp, node)
    x, scale, offset, mean, variance = (imp.tensor(node, i) for i in range(5))
    return [imp.g.batch_norm(x, scale, offset, mean, variance, epsilon=attrs.get("epsilon", 1e-5),
                             name=imp.name(node))]


def _layer_norm(imp, node):
    _only_first_output(imp, node)
    attrs = _attrs(node)
    return [imp.g.layer_norm(imp.tensor(node, 0), imp.tensor(node, 1), imp.tensor(node, 2),
                             axis=attrs.get("axis", -1), epsilon=attrs.get("epsilon", 1e-5), name=imp.name(node))]


def _softmax(imp, node):
    return [imp.g.softmax(imp.tensor(node, 0), axis=_attr(node, "axis", -1), name=imp.name(node))]


def _reshape(imp, node):
    x = imp.tensor(node, 0)
    return [imp.g.reshape(x, _reshape_target(imp, node), name=imp.name(node))]


def _reshape_target(imp: _Importer, node: onnx.NodeProto) -> list[int]:
    """The target shape as `ge.reshape` takes it: an entry that is the input's own dimension at
    the same position is 0 (copy), and a single other run-time entry is -1 (inferred)."""
    known = imp.static(node, 1, "the shape")
    entries = list(known.array.reshape(-1))
    if _attr(node, "allowzero", 0) and any(e == 0 for e in entries if not isinstance(e, _Dim)):
        raise imp.node_error(node, "allowzero 1 with a 0 in the shape is not supported")
    target = [0 if e == _Dim(node.input[0], i) else None if isinstance(e, _Dim) else int(e)
              for i, e in enumerate(entries)]
    unknown = target.count(None)
    if unknown > 1 or (unknown and -1 in target):
        raise imp.node_error(node, f"the shape {_spell(known)} has more than one entry known only at run time")
    return [-1 if t is None else t for t in target]


def _transpose(imp, node):
    x = imp.tensor(node, 0)
    perm = _attr(node, "perm", list(reversed(range(x.type.rank))))
    return [imp.g.transpose(x, list(perm), name=imp.name(node))]


def _concat(imp, node):
    values = [imp.tensor(node, i) for i in range(len(node.input))]
    return [imp.g.concat(values, _attr(node, "axis"), name=imp.name(node))]


def _split(imp, node):
    x = imp.tensor(node, 0)
    attrs = _attrs(node)
    axis = attrs.get("axis", 0)
    sizes = imp.static_ints(node, 1, "split")
    if sizes is None:
        count = attrs.get("num_outputs", len(node.output))
        size = x.shape[axis] if -x.type.rank <= axis < x.type.rank else -1
        if size == -1:
            raise imp.node_error(node, f"an even split needs dimension {axis} fixed, got shape {x.shape}")
        chunk = -(-size // count)
        sizes = [chunk] * (count - 1) + [size - chunk * (count - 1)]
    return imp.g.split(x, sizes, axis, name=imp.name(node))


def _slice(imp, node):
    starts = imp.static_ints(node, 1, "starts")
    return [imp.g.slice(imp.tensor(node, 0), starts, imp.static_ints(node, 2, "ends"),
                        imp.static_ints(node, 3, "axes"), imp.static_ints(node, 4, "steps"),
                        name=imp.name(node))]


def _gather(imp, node):
    return [imp.g.gather(imp.tensor(node, 0), imp.tensor(node, 1), _attr(node, "axis", 0), name=imp.name(node))]


def _squeeze(imp, node):
    x = imp.tensor(node, 0)
    axes = imp.static_ints(node, 1, "axes")
    if axes is None:
        if -1 in x.shape:
            raise imp.node_error(node, f"Squeeze without axes needs every dimension fixed, got shape {x.shape}")
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    return [imp.g.squeeze(x, axes, name=imp.name(node))]


def _unsqueeze(imp, node):
    return [imp.g.unsqueeze(imp.tensor(node, 0), imp.static_ints(node, 1, "axes"), name=imp.name(node))]


def _pad(imp, node):
    x = imp.tensor(node, 0)
    mode = _attr(node, "mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise imp.node_error(node, f"mode '{mode}' is not supported, expected constant, reflect or edge")
    pads = imp.static_ints(node, 1, "pads")
    value = imp.static(node, 2, "constant_value")
    axes = imp.static_ints(node, 3, "axes")
    if axes is not None:
        rank, full = x.type.rank, [0] * (2 * x.type.rank)
        for j, axis in enumerate(axes):
            full[axis % rank], full[rank + axis % rank] = pads[j], pads[len(axes) + j]
        pads = full
    fill = 0.0 if value is None or value.array.size == 0 else float(value.array.reshape(-1)[0])
    return [imp.g.pad(x, pads, mode, fill, name=imp.name(node))]


def _flatten(imp, node):
    return [imp.g.flatten(imp.tensor(node, 0), _attr(node, "axis", 1), name=imp.name(node))]


def _reduce(method: str) -> Converter:
    def convert(imp, node):
        x = imp.tensor(node, 0)
        attrs = _attrs(node)
        axes = imp.static_ints(node, 1, "axes") if len(node.input) > 1 else attrs.get("axes")
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return [imp.g.identity(x, name=imp.name(node))]
            axes = list(range(x.type.rank))
        return [getattr(imp.g, method)(x, list(axes), keep_dims=bool(attrs.get("keepdims", 1)), name=imp.name(node))]
    return convert


def _cast(imp, node):
    dtype = imp.dtype_of(_attr(node, "to"), "the Cast target")
    return [imp.g.cast(imp.tensor(node, 0), dtype, name=imp.name(node))]


_RESIZE_COORDINATES = {"align_corners": {"align_corners": True}, "half_pixel": {"half_pixel_centers": True},
                       "pytorch_half_pixel": {"half_pixel_centers": True}, "asymmetric": {}}


def _resize(imp, node):
    """Linear Resize of the two spatial dimensions of an NCHW tensor: `resize_bilinear`."""
    x = imp.tensor(node, 0)
    attrs = _attrs(node)
    mode = attrs.get("mode", "nearest")
    if mode != "linear":
        raise imp.node_error(node, f"mode '{mode}' is not supported, expected 'linear'")
    _require_image(imp, node, x)
    for key, default in (("antialias", 0), ("exclude_outside", 0), ("keep_aspect_ratio_policy", "stretch")):
        if attrs.get(key, default) != default:
            raise imp.node_error(node, f"{key} {attrs[key]!r} is not supported")
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    if transform not in _RESIZE_COORDINATES:
        raise imp.node_error(node, f"coordinate_transformation_mode '{transform}' is not supported, expected "
                                   f"one of {', '.join(_RESIZE_COORDINATES)}")
    axes = list(attrs.get("axes", [0, 1, 2, 3]))
    if [a % 4 for a in axes] not in ([0, 1, 2, 3], [2, 3]):
        raise imp.node_error(node, f"axes {axes} are not supported, expected [2, 3] or all four")
    size = _resize_size(imp, node, x, len(axes) == 2)
    if transform == "pytorch_half_pixel" and (not isinstance(size, list) or min(size) <= 1):
        raise imp.node_error(node, "coordinate_transformation_mode 'pytorch_half_pixel' is supported only "
                                   "for output sizes known to be > 1")
    return [imp.g.resize_bilinear(x, size, **_RESIZE_COORDINATES[transform], name=imp.name(node))]


def _resize_size(imp: _Importer, node: onnx.NodeProto, x: Value, spatial_only: bool) -> list[int] | Value:
    """The output [height, width]: ints when known at import time, else a graph value."""
    skip = 0 if spatial_only else 2
    if len(node.input) > 3 and node.input[3]:
        known = imp.known.get(node.input[3])
        if known is None:
            sizes = imp.tensor(node, 3)
            return sizes if spatial_only else imp.g.slice(sizes, [2], [4], name=imp.name(node, "/size"))
        _check_kept_dims(imp, node, x, known.array.reshape(-1)[:skip])
        entries = known.array.reshape(-1)[skip:]
        if all(not isinstance(e, _Dim) for e in entries):
            return [int(e) for e in entries]
        return imp.tensor_named(node.input[3]) if spatial_only else imp.g.slice(
            imp.tensor_named(node.input[3]), [2], [4], name=imp.name(node, "/size"))
    scales = imp.static(node, 2, "scales")
    if scales is None:
        raise imp.node_error(node, "needs scales or sizes")
    factors = [float(f) for f in scales.array.reshape(-1)]
    if not spatial_only and factors[:2] != [1.0, 1.0]:
        raise imp.node_error(node, f"scales {factors} resize dimensions 0 or 1; only 2 and 3 can be resized")
    spatial = x.shape[2:]
    sizes = [size * f for size, f in zip(spatial, factors[skip:])]
    if -1 in spatial or any(s != int(s) for s in sizes):
        raise imp.node_error(node, f"scales {factors} need fixed spatial dimensions giving whole sizes, got "
                                   f"shape {x.shape}; give sizes instead")
    return [int(s) for s in sizes]


def _check_kept_dims(imp: _Importer, node: onnx.NodeProto, x: Value, sizes: Sequence) -> None:
    """Resize sizes for dimensions 0 and 1 must keep them (where that is decidable at import)."""
    for axis, size in enumerate(sizes):
        fixed = x.shape[axis]
        if not (isinstance(size, _Dim) or fixed == -1 or int(size) == fixed):
            raise imp.node_error(node, f"sizes resize dimension {axis} from {fixed} to {int(size)}; only "
                                       "dimensions 2 and 3 can be resized")


CONVERTERS: dict[str, Converter] = {
    "Add": _binary("add"), "Sub": _binary("sub"), "Mul": _binary("mul"), "Div": _binary("div"),
    "Pow": _pow, "Max": _variadic("maximum"), "Min": _variadic("minimum"),
    "Identity": _unary("identity"), "Relu": _unary("relu"), "Sqrt": _unary("sqrt"), "Exp": _unary("exp"),
    "Log": _unary("log"), "Tanh": _unary("tanh"), "Sigmoid": _unary("sigmoid"), "Erf": _unary("erf"),
    "Gelu": _gelu, "MatMul": _matmul, "Gemm": _gemm, "Conv": _conv,
    "MaxPool": _pool("max_pool"), "AveragePool": _pool("avg_pool"),
    "GlobalAveragePool": _unary("global_avg_pool"), "BatchNormalization": _batch_norm,
    "LayerNormalization": _layer_norm, "Softmax": _softmax, "Reshape": _reshape, "Transpose": _transpose,
    "Concat": _concat, "Split": _split, "Slice": _slice, "Gather": _gather, "Squeeze": _squeeze,
    "Unsqueeze": _unsqueeze, "Pad": _pad, "Flatten": _flatten, "ReduceSum": _reduce("reduce_sum"),
    "ReduceMean": _reduce("reduce_mean"), "ReduceMax": _reduce("reduce_max"), "Cast": _cast,
    "Resize": _resize,
}
"""ONNX op type -> how a node of it becomes graph ops (its outputs' values, in order). Shape and
Constant have none: they are always folded (see `_FOLDERS`)."""
