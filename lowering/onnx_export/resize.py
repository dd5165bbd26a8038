"""Resize and grid-sample exports: ONNX Resize and GridSample (runtime/ge/kernels/resize.py)."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export, Unsupported
from dfir.om.plan import GeOp


def _resize_bilinear(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """Linear Resize of axes 2 and 3 to `size` (an attribute or the second operand)."""
    sizes = b.computed(b.cast(x[1], "DT_INT64")) if len(x) > 1 else b.ints(list(op.attrs["size"]))
    transform = "align_corners" if op.attrs.get("align_corners") else \
        "half_pixel" if op.attrs.get("half_pixel_centers") else "asymmetric"
    return [b.node("Resize", [x[0], "", "", sizes], axes=[2, 3], mode="linear",
                   coordinate_transformation_mode=transform)]


_RESIZE_OPTIONS = {"coordinate_transformation_mode": str, "nearest_mode": str, "cubic_coeff_a": float,
                   "extrapolation_value": float, "keep_aspect_ratio_policy": str}


def _resize(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """ONNX Resize itself: roi, scales and sizes are the operands the segment sizes say are there."""
    rest = iter(x[1:])
    roi, scales, sizes = (next(rest) if count else "" for count in op.attrs["operandSegmentSizes"][1:])
    options = {name: convert(op.attrs[name]) for name, convert in _RESIZE_OPTIONS.items() if name in op.attrs}
    if op.attrs["mode"] == "cubic":
        _check_cubic(b, x[0], op.attrs["axes"])
    roi = b.computed(roi) if roi else ""
    sizes = b.computed(b.cast(sizes, "DT_INT64")) if sizes else ""
    scales = b.computed(b.cast(scales, "DT_FLOAT")) if scales else ""
    return [b.node("Resize", [x[0], roi, scales, sizes], axes=list(op.attrs["axes"]), mode=op.attrs["mode"],
                   exclude_outside=int(bool(op.attrs.get("exclude_outside"))),
                   antialias=int(bool(op.attrs.get("antialias"))), **options)]


def _check_cubic(b: Builder, x: str, axes: list[int]) -> None:
    rank = b.rank(x)
    if not (rank == 2 or rank == 4 and {a % 4 for a in axes} <= {2, 3}):
        raise Unsupported(f"onnxruntime's cubic Resize takes a 2-D input or the last two axes of a 4-D one, "
                          f"not axes {list(axes)} of a {rank}-D input")


def _grid_sample(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    if op.attrs["mode"] == "cubic" and op.attrs["padding_mode"] == "border":
        # the kernel clamps the sampled point, then each tap; onnxruntime's taps differ near the border
        raise Unsupported("onnxruntime's cubic GridSample with border padding samples other taps")
    return [b.node("GridSample", x, mode=op.attrs["mode"], padding_mode=op.attrs["padding_mode"],
                   align_corners=int(bool(op.attrs.get("align_corners"))))]


EXPORTS: dict[str, Export] = {
    "resize_bilinear": _resize_bilinear,
    "resize": _resize,
    "grid_sample": _grid_sample,
}
