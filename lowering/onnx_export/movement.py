"""Data movement exports (runtime/ge/kernels/movement.py); shapes, axes and pads become embedded
int64 constants, as ONNX takes them as inputs."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export
from dfir.om.plan import GeOp

_INT64_MAX = 2 ** 63 - 1


def _split(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """ONNX Split takes known sizes; a -1 size (the rest) makes each piece a Slice instead, those
    after the -1 counted from the end."""
    sizes, axis = list(op.attrs["sizes"]), op.attrs["axis"]
    if len(sizes) == 1:
        return [b.node("Identity", x)]
    if -1 not in sizes:
        return b.node("Split", [x[0], b.ints(sizes)], outputs=len(sizes), axis=axis)
    rest = sizes.index(-1)
    bounds = [sum(sizes[:i]) if i <= rest else -sum(sizes[i:]) for i in range(len(sizes))]
    ends = [*bounds[1:rest + 1], *(-sum(sizes[i + 1:]) or _INT64_MAX for i in range(rest, len(sizes)))]
    return [b.node("Slice", [x[0], b.ints([start]), b.ints([end]), b.ints([axis])])
            for start, end in zip(bounds, ends)]


def _slice(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    bounds = (b.ints(list(op.attrs[name])) for name in ("starts", "ends", "axes", "steps"))
    return [b.node("Slice", [x[0], *bounds])]


def _scatter_elements(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("ScatterElements", x, axis=op.attrs["axis"], reduction=op.attrs["reduction"])]


def _pad(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    """Negative pads crop first (a Slice), as the kernel does, then Pad adds the positive ones."""
    pads, value = list(op.attrs["pads"]), x[0]
    rank = len(pads) // 2
    if min(pads, default=0) < 0:
        starts, ends = [max(0, -p) for p in pads[:rank]], [min(0, p) or _INT64_MAX for p in pads[rank:]]
        value = b.node("Slice", [value, b.ints(starts), b.ints(ends), b.ints(list(range(rank)))])
    fill = b.scalar(op.attrs["value"], b.dtypes[value]) if op.attrs["mode"] == "constant" else ""
    return [b.node("Pad", [value, b.ints([max(0, p) for p in pads]), fill], mode=op.attrs["mode"])]


def _with_ints(onnx_op: str, name: str) -> Export:
    """The ONNX op taking the GE attribute `name` as its second input."""
    return lambda b, op, x: [b.node(onnx_op, [x[0], b.ints(list(op.attrs[name]))])]


def _attribute(onnx_op: str, name: str) -> Export:
    """The ONNX op with the same attribute `name` as the GE op."""
    return lambda b, op, x: [b.node(onnx_op, x, **{name: op.attrs[name]})]


def _trilu(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("Trilu", [x[0], b.ints(op.attrs["k"])], upper=int(bool(op.attrs.get("upper"))))]


EXPORTS: dict[str, Export] = {
    "reshape": _with_ints("Reshape", "shape"),
    "transpose": lambda b, op, x: [b.node("Transpose", x, perm=list(op.attrs["perm"]))],
    "concat": _attribute("Concat", "axis"),
    "split": _split,
    "slice": _slice,
    "gather": _attribute("Gather", "axis"),
    "scatter_elements": _scatter_elements,
    "squeeze": _with_ints("Squeeze", "axes"),
    "unsqueeze": _with_ints("Unsqueeze", "axes"),
    "pad": _pad,
    "flatten": _attribute("Flatten", "axis"),
    "shape": lambda b, op, x: [b.node("Shape", x)],
    "expand": _with_ints("Expand", "shape"),
    "tile": _with_ints("Tile", "repeats"),
    "trilu": _trilu,
}
