"""Data movement: reshapes, transposes, joins, splits, slices, gathers and pads (gathers and scatters
at computed positions are in `indexing`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import onnx

from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.known import Dim, spell
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.onnx.importer import Importer

def _reshape(imp, node):
    x = imp.tensor(node, 0)
    return [imp.g.reshape(x, _reshape_target(imp, node), name=imp.name(node))]


def _reshape_target(imp: Importer, node: onnx.NodeProto) -> list[int]:
    """The target shape as `ge.reshape` takes it: an entry that is the input's own dimension at
    the same position is 0 (copy), and a single other run-time entry is -1 (inferred)."""
    known = imp.static(node, 1, "the shape")
    entries = list(known.array.reshape(-1))
    if attribute(node, "allowzero", 0) and any(e == 0 for e in entries if not isinstance(e, Dim)):
        raise imp.node_error(node, "allowzero 1 with a 0 in the shape is not supported")
    own = imp.dims(node.input[0])
    target = [(0 if i < len(own) and e == own[i] else None) if isinstance(e, Dim) else int(e)
              for i, e in enumerate(entries)]
    unknown = target.count(None)
    if unknown > 1 or (unknown and -1 in target):
        raise imp.node_error(node, f"the shape {spell(known)} has more than one entry known only at run time")
    return [-1 if t is None else t for t in target]


def _transpose(imp, node):
    x = imp.tensor(node, 0)
    perm = attribute(node, "perm", list(reversed(range(x.type.rank))))
    return [imp.g.transpose(x, list(perm), name=imp.name(node))]


def _concat(imp, node):
    values = [imp.tensor(node, i) for i in range(len(node.input))]
    return [imp.g.concat(values, attribute(node, "axis"), name=imp.name(node))]


def _split(imp, node):
    x = imp.tensor(node, 0)
    attrs = attributes_of(node)
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
    return [imp.g.gather(imp.tensor(node, 0), imp.tensor(node, 1), attribute(node, "axis", 0), name=imp.name(node))]


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
    mode = attribute(node, "mode", "constant")
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
    return [imp.g.flatten(imp.tensor(node, 0), attribute(node, "axis", 1), name=imp.name(node))]


def _expand(imp, node):
    return [imp.g.expand(imp.tensor(node, 0), imp.static_ints(node, 1, "the shape"), name=imp.name(node))]


def _tile(imp, node):
    return [imp.g.tile(imp.tensor(node, 0), imp.static_ints(node, 1, "repeats"), name=imp.name(node))]


def _depth_to_space(imp, node):
    """[N, C, H, W] -> [N, C/b², H*b, W*b] as a reshape, a transpose and a reshape (ONNX's definition)."""
    x = imp.tensor(node, 0)
    b, (channels, height, width) = attribute(node, "blocksize"), _image_dims(imp, node, x)
    if channels % (b * b):
        raise imp.node_error(node, f"channels {channels} are not a multiple of blocksize² = {b * b}")
    c = channels // (b * b)
    if attribute(node, "mode", "DCR") == "DCR":
        split, perm = [0, b, b, c, height, width], [0, 3, 4, 1, 5, 2]
    else:
        split, perm = [0, c, b, b, height, width], [0, 1, 4, 2, 5, 3]
    return [_reshape_transpose_reshape(imp, node, x, split, perm, [0, c, height * b, width * b])]


def _space_to_depth(imp, node):
    """[N, C, H, W] -> [N, C*b², H/b, W/b] (ONNX's definition; opset 28 adds CRD mode)."""
    x = imp.tensor(node, 0)
    b, (channels, height, width) = attribute(node, "blocksize"), _image_dims(imp, node, x)
    if height % b or width % b:
        raise imp.node_error(node, f"height {height} and width {width} must be multiples of blocksize {b}")
    split = [0, channels, height // b, b, width // b, b]
    perm = [0, 3, 5, 1, 2, 4] if attribute(node, "mode", "DCR") == "DCR" else [0, 1, 3, 5, 2, 4]
    return [_reshape_transpose_reshape(imp, node, x, split, perm, [0, channels * b * b, height // b, width // b])]


def _image_dims(imp: Importer, node: onnx.NodeProto, x) -> list[int]:
    """Channels, height and width of an NCHW input; they must be fixed (the batch may vary)."""
    if x.type.rank != 4 or -1 in x.shape[1:]:
        raise imp.node_error(node, f"the input must be NCHW with fixed C, H and W, got shape {x.shape}")
    return x.shape[1:]


def _reshape_transpose_reshape(imp: Importer, node: onnx.NodeProto, x, split, perm, target):
    g = imp.g
    blocks = g.reshape(x, split, name=imp.name(node, "/split"))
    moved = g.transpose(blocks, perm, name=imp.name(node, "/transpose"))
    return g.reshape(moved, target, name=imp.name(node))


def _trilu(imp, node):
    k = imp.static_ints(node, 1, "k")
    return [imp.g.trilu(imp.tensor(node, 0), k[0] if k else 0, upper=bool(attribute(node, "upper", 1)),
                        name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "Reshape": _reshape, "Transpose": _transpose, "Concat": _concat, "Split": _split, "Slice": _slice,
    "Gather": _gather, "Squeeze": _squeeze, "Unsqueeze": _unsqueeze, "Pad": _pad, "Flatten": _flatten,
    "Expand": _expand, "Tile": _tile, "DepthToSpace": _depth_to_space, "SpaceToDepth": _space_to_depth,
    "Trilu": _trilu,
}
