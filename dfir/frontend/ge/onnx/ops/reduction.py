"""Reductions over axes, arg-reductions and top-k."""
from __future__ import annotations

from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter


def _reduce(method: str) -> Converter:
    """Axes from the input (opset 18+) or the attribute; none: all of them, or with
    `noop_with_empty_axes` none at all (the op then applies its element function only, as ONNX)."""
    def convert(imp, node):
        x = imp.tensor(node, 0)
        attrs = attributes_of(node)
        axes = imp.static_ints(node, 1, "axes") if len(node.input) > 1 else attrs.get("axes")
        if not axes:
            axes = [] if attrs.get("noop_with_empty_axes", 0) else list(range(x.type.rank))
        return [getattr(imp.g, method)(x, list(axes), keep_dims=bool(attrs.get("keepdims", 1)), name=imp.name(node))]
    return convert


def _arg_reduce(method: str) -> Converter:
    def convert(imp, node):
        attrs = attributes_of(node)
        keep, last = bool(attrs.get("keepdims", 1)), bool(attrs.get("select_last_index", 0))
        return [getattr(imp.g, method)(imp.tensor(node, 0), attrs.get("axis", 0), keep_dims=keep,
                                       select_last_index=last, name=imp.name(node))]
    return convert


def _top_k(imp, node):
    attrs = attributes_of(node)
    (k,) = imp.static_ints(node, 1, "k")
    return imp.g.top_k(imp.tensor(node, 0), k, attrs.get("axis", -1), largest=bool(attrs.get("largest", 1)),
                       sorted=bool(attrs.get("sorted", 1)), name=imp.name(node))


def _cumulative(method: str) -> Converter:
    """CumSum / CumProd. An axis known only at run time (a graph input) picks, with a `gather`,
    among the running results along every axis: negative axes count from the end, and one out of
    range fails the run as the gather refuses it."""
    def convert(imp, node):
        x, attrs = imp.tensor(node, 0), attributes_of(node)
        flags = {"exclusive": bool(attrs.get("exclusive", 0)), "reverse": bool(attrs.get("reverse", 0))}

        def along(axis: int, suffix: str = ""):
            return getattr(imp.g, method)(x, axis, **flags, name=imp.name(node, suffix))

        if node.input[1] in imp.known:
            (axis,) = imp.static_ints(node, 1, "axis")
            return [along(axis)]
        return [_pick_axis(imp, node, [along(a, f"/axis{a}") for a in range(x.type.rank)])]
    return convert


def _pick_axis(imp, node, per_axis):
    """The entry of `per_axis` that node input 1, a one-element tensor, names."""
    axis = imp.tensor(node, 1)
    if axis.shape not in ([], [1]):
        raise imp.node_error(node, f"axis must hold one value, got shape {axis.shape}")
    g = imp.g
    stacked = g.concat([g.unsqueeze(v, [0], name=imp.name(node, f"/stack{a}")) for a, v in enumerate(per_axis)], 0,
                       name=imp.name(node, "/stacked"))
    return g.gather(stacked, g.reshape(axis, [], name=imp.name(node, "/axis")), 0, name=imp.name(node))


CONVERTERS: dict[str, Converter] = {
    "ReduceSum": _reduce("reduce_sum"), "ReduceMean": _reduce("reduce_mean"), "ReduceMax": _reduce("reduce_max"),
    "ReduceProd": _reduce("reduce_prod"), "ReduceMin": _reduce("reduce_min"), "ReduceL1": _reduce("reduce_l1"),
    "ReduceL2": _reduce("reduce_l2"), "ReduceSumSquare": _reduce("reduce_sum_square"),
    "ReduceLogSum": _reduce("reduce_log_sum"), "ReduceLogSumExp": _reduce("reduce_log_sum_exp"),
    "ArgMax": _arg_reduce("arg_max"), "ArgMin": _arg_reduce("arg_min"), "TopK": _top_k,
    "CumSum": _cumulative("cum_sum"), "CumProd": _cumulative("cum_prod"),
}
