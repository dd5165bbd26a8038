"""Resize: bilinear resizing of the spatial dimensions of NCHW images."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import onnx

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.known import Dim
from dfir.frontend.ge.onnx.ops.converter import Converter, require_image

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer

_RESIZE_COORDINATES = {"align_corners": {"align_corners": True}, "half_pixel": {"half_pixel_centers": True},
                       "pytorch_half_pixel": {"half_pixel_centers": True}, "asymmetric": {}}


def _resize(imp, node):
    """Linear Resize of the two spatial dimensions of an NCHW tensor: `resize_bilinear`."""
    x = imp.tensor(node, 0)
    attrs = attributes_of(node)
    mode = attrs.get("mode", "nearest")
    if mode != "linear":
        raise imp.node_error(node, f"mode '{mode}' is not supported, expected 'linear'")
    require_image(imp, node, x)
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


def _resize_size(imp: Importer, node: onnx.NodeProto, x: Value, spatial_only: bool) -> list[int] | Value:
    """The output [height, width]: ints when known at import time, else a graph value."""
    skip = 0 if spatial_only else 2
    if len(node.input) > 3 and node.input[3]:
        known = imp.known.get(node.input[3])
        if known is None:
            sizes = imp.tensor(node, 3)
            return sizes if spatial_only else imp.g.slice(sizes, [2], [4], name=imp.name(node, "/size"))
        _check_kept_dims(imp, node, x, known.array.reshape(-1)[:skip])
        entries = known.array.reshape(-1)[skip:]
        if all(not isinstance(e, Dim) for e in entries):
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


def _check_kept_dims(imp: Importer, node: onnx.NodeProto, x: Value, sizes: Sequence) -> None:
    """Resize sizes for dimensions 0 and 1 must keep them (where that is decidable at import)."""
    for axis, size in enumerate(sizes):
        fixed = x.shape[axis]
        if not (isinstance(size, Dim) or fixed == -1 or int(size) == fixed):
            raise imp.node_error(node, f"sizes resize dimension {axis} from {fixed} to {int(size)}; only "
                                       "dimensions 2 and 3 can be resized")


CONVERTERS: dict[str, Converter] = {
    "Resize": _resize,
}
