"""Resize and GridSample: ONNX Resize as `resize_bilinear` (bilinear resizing of NCHW images) or
`resize`, and GridSample as `grid_sample`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import onnx

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.known import Dim
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer

_BILINEAR_COORDINATES = {"align_corners": {"align_corners": True}, "half_pixel": {"half_pixel_centers": True},
                         "pytorch_half_pixel": {"half_pixel_centers": True}, "asymmetric": {}}
_BILINEAR_DEFAULTS = (("antialias", 0), ("exclude_outside", 0), ("keep_aspect_ratio_policy", "stretch"))


def _resize(imp, node):
    """Resize: `resize_bilinear` where the node is a bilinear resize of the two spatial dimensions
    of an NCHW tensor to sizes known at import (it has an IREE lowering), else `ge.resize`."""
    x = imp.tensor(node, 0)
    attrs = attributes_of(node)
    size = _bilinear_size(imp, node, x, attrs)
    if size is None:
        return [_general_resize(imp, node, x, attrs)]
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    return [imp.g.resize_bilinear(x, size, **_BILINEAR_COORDINATES[transform], name=imp.name(node))]


def _bilinear_size(imp: Importer, node: onnx.NodeProto, x: Value, attrs: dict) -> list[int] | Value | None:
    """The [height, width] of the node as a `resize_bilinear`, or None where it is not one."""
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    axes = [a % 4 for a in attrs.get("axes", [0, 1, 2, 3])]
    if (attrs.get("mode", "nearest") != "linear" or transform not in _BILINEAR_COORDINATES or len(x.shape) != 4
            or any(attrs.get(key, default) != default for key, default in _BILINEAR_DEFAULTS)
            or axes not in ([0, 1, 2, 3], [2, 3])):
        return None
    size = _resize_size(imp, node, x, len(axes) == 2)
    if transform == "pytorch_half_pixel" and (not isinstance(size, list) or min(size) <= 1):
        return None
    return size


def _resize_size(imp: Importer, node: onnx.NodeProto, x: Value, spatial_only: bool) -> list[int] | Value | None:
    """The output [height, width]: ints when known at import time, a graph value when only some
    entries are; None when the sizes or scales are not known, or resize dimensions 0 or 1."""
    skip = 0 if spatial_only else 2
    sizes = _present(imp, node, 3)
    if sizes is not None:
        known = imp.known.get(node.input[3])
        if known is None or not _keeps_dims(x, known.array.reshape(-1)[:skip]):
            return None
        entries = known.array.reshape(-1)[skip:]
        if all(not isinstance(e, Dim) for e in entries):
            return [int(e) for e in entries]
        return sizes if spatial_only else imp.g.slice(sizes, [2], [4], name=imp.name(node, "/size"))
    scales = imp.known.get(node.input[2]) if _present(imp, node, 2) is not None else None
    if scales is None or not scales.is_constant:
        return None
    factors = [float(f) for f in scales.array.reshape(-1)]
    spatial = x.shape[2:]
    out = [size * f for size, f in zip(spatial, factors[skip:])]
    if (not spatial_only and factors[:2] != [1.0, 1.0]) or -1 in spatial or any(s != int(s) for s in out):
        return None
    return [int(s) for s in out]


def _keeps_dims(x: Value, sizes: Sequence) -> bool:
    """Whether sizes for dimensions 0 and 1 keep them (where that is decidable at import)."""
    return all(isinstance(size, Dim) or x.shape[axis] == -1 or int(size) == x.shape[axis]
               for axis, size in enumerate(sizes))


def _general_resize(imp: Importer, node: onnx.NodeProto, x: Value, attrs: dict) -> Value:
    """`ge.resize` with the node's options (those of its mode only) and its roi, scales or sizes."""
    mode = attrs.get("mode", "nearest")
    transform = attrs.get("coordinate_transformation_mode", "half_pixel")
    if mode == "nearest" and attrs.get("antialias", 0):
        raise imp.node_error(node, "antialias applies to modes 'linear' and 'cubic' only, got mode 'nearest'")
    scales, sizes = _present(imp, node, 2), _present(imp, node, 3)
    if (scales is None) == (sizes is None):
        raise imp.node_error(node, "needs exactly one of scales and sizes, got "
                                   f"{'both' if scales is not None else 'neither'}")
    roi = imp.tensor(node, 1) if transform == "tf_crop_and_resize" else None
    if transform == "tf_crop_and_resize" and roi is None:
        raise imp.node_error(node, "coordinate_transformation_mode 'tf_crop_and_resize' needs a roi")
    options = {"nearest_mode": attrs.get("nearest_mode") if mode == "nearest" else None,
               "cubic_coeff_a": attrs.get("cubic_coeff_a", -0.75) if mode == "cubic" else None,
               "extrapolation_value": attrs.get("extrapolation_value", 0.0) if roi is not None else None,
               "keep_aspect_ratio_policy": attrs.get("keep_aspect_ratio_policy") if sizes is not None else None}
    return imp.g.resize(x, sizes=_static_or_value(imp, node, 3, sizes), scales=_static_or_value(imp, node, 2, scales),
                        roi=roi, axes=attrs.get("axes"), mode=mode, coordinate_transformation_mode=transform,
                        exclude_outside=bool(attrs.get("exclude_outside", 0)),
                        antialias=bool(attrs.get("antialias", 0)) and mode != "nearest",
                        name=imp.name(node), **options)


def _present(imp: Importer, node: onnx.NodeProto, i: int) -> Value | None:
    """Input `i` of the node, None when absent or known to be empty (as ONNX writes an absent one)."""
    if i >= len(node.input) or not node.input[i]:
        return None
    known = imp.known.get(node.input[i])
    return None if known is not None and known.array.size == 0 else imp.tensor(node, i)


def _static_or_value(imp: Importer, node: onnx.NodeProto, i: int, value: Value | None) -> list | Value | None:
    """The input's numbers when known at import (so they can fix the result type), else its value."""
    known = None if value is None else imp.known.get(node.input[i])
    return value if known is None or not known.is_constant else known.array.reshape(-1).tolist()


_GRID_SAMPLE_MODES = {"bilinear": "linear", "bicubic": "cubic"}  # GridSample-16's names


def _grid_sample(imp, node):
    """GridSample: `grid_sample`, with GridSample-16's mode names read as the later ones."""
    attrs = attributes_of(node)
    mode = attrs.get("mode", "linear")
    return [imp.g.grid_sample(imp.tensor(node, 0), imp.tensor(node, 1), _GRID_SAMPLE_MODES.get(mode, mode),
                              attrs.get("padding_mode", "zeros"), bool(attrs.get("align_corners", 0)),
                              name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "Resize": _resize,
    "GridSample": _grid_sample,
}
