"""Reduction, arg-reduction, top-k and running-sum exports (runtime/ge/kernels/reduction.py)."""
from __future__ import annotations

from dfir.lowering.onnx_export.builder import Builder, Export, Unsupported
from dfir.om.plan import GeOp

_REDUCTIONS = {"reduce_sum": "ReduceSum", "reduce_mean": "ReduceMean", "reduce_max": "ReduceMax",
               "reduce_min": "ReduceMin", "reduce_prod": "ReduceProd", "reduce_l1": "ReduceL1",
               "reduce_l2": "ReduceL2", "reduce_sum_square": "ReduceSumSquare", "reduce_log_sum": "ReduceLogSum",
               "reduce_log_sum_exp": "ReduceLogSumExp"}

_OVER_NO_AXES = {"reduce_l1": "Abs", "reduce_l2": "Abs", "reduce_log_sum": "Log"}
"""Over no axes a reduction is elementwise: these are not the identity (ONNX's noop_with_empty_axes)."""


def _reduction(kind: str, onnx_op: str) -> Export:
    def export(b: Builder, op: GeOp, x: list[str]) -> list[str]:
        axes = list(op.attrs["axes"])
        if not axes and kind in _OVER_NO_AXES:
            return [b.node(_OVER_NO_AXES[kind], x)]
        if not axes and kind == "reduce_sum_square":
            return [b.node("Mul", [x[0], x[0]])]
        return [b.node(onnx_op, [x[0], b.ints(axes)], keepdims=int(bool(op.attrs.get("keep_dims"))),
                       noop_with_empty_axes=1)]
    return export


def _arg_reduction(onnx_op: str) -> Export:
    def export(b: Builder, op: GeOp, x: list[str]) -> list[str]:
        return [b.node(onnx_op, x, axis=op.attrs["axis"], keepdims=int(bool(op.attrs.get("keep_dims"))),
                       select_last_index=int(bool(op.attrs.get("select_last_index"))))]
    return export


def _top_k(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return b.node("TopK", [x[0], b.ints([op.attrs["k"]])], outputs=2, dtypes=[b.dtypes[x[0]], "DT_INT64"],
                  axis=op.attrs["axis"], largest=int(bool(op.attrs.get("largest"))), sorted=1)


def _cum_sum(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    return [b.node("CumSum", [x[0], b.ints(op.attrs["axis"])], exclusive=int(bool(op.attrs.get("exclusive"))),
                   reverse=int(bool(op.attrs.get("reverse"))))]


def _cum_prod(b: Builder, op: GeOp, x: list[str]) -> list[str]:
    raise Unsupported("ONNX has no running product")


EXPORTS: dict[str, Export] = {
    **{kind: _reduction(kind, onnx_op) for kind, onnx_op in _REDUCTIONS.items()},
    "arg_max": _arg_reduction("ArgMax"),
    "arg_min": _arg_reduction("ArgMin"),
    "top_k": _top_k,
    "cum_sum": _cum_sum,
    "cum_prod": _cum_prod,
}
