"""Normalizations and softmax."""
from __future__ import annotations

import numpy as np

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attribute, attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter, only_first_output


def _batch_norm(imp, node):
    attrs = attributes_of(node)
    if attrs.get("training_mode", 0):
        raise imp.node_error(node, "training_mode 1 is not supported (inference only)")
    only_first_output(imp, node)
    x, scale, offset, mean, variance = (imp.tensor(node, i) for i in range(5))
    return [imp.g.batch_norm(x, scale, offset, mean, variance, epsilon=attrs.get("epsilon", 1e-5),
                             name=imp.name(node))]


def _layer_norm(imp, node):
    """One `layer_norm` op; with the Mean or InvStdDev output asked for, ONNX's function body instead."""
    attrs = attributes_of(node)
    axis, epsilon = attrs.get("axis", -1), attrs.get("epsilon", 1e-5)
    x, scale, bias = (imp.tensor(node, i) for i in range(3))
    if not any(node.output[1:]):
        return [imp.g.layer_norm(x, scale, bias, axis=axis, epsilon=epsilon, name=imp.name(node))]
    stashed, axes = _stashed(imp, node, x, axis)
    g = imp.g
    mean = g.reduce_mean(stashed, axes, keep_dims=True, name=imp.name(node, "/mean"))
    centered = g.sub(stashed, mean, name=imp.name(node, "/centered"))
    variance = g.reduce_mean(g.mul(centered, centered, name=imp.name(node, "/squares")), axes, keep_dims=True,
                             name=imp.name(node, "/variance"))
    inv_std_dev = g.reciprocal(_sqrt_plus(imp, node, variance, epsilon), name=imp.name(node, "/inv_std_dev"))
    y = g.mul(_unstashed(imp, node, g.mul(centered, inv_std_dev, name=imp.name(node, "/normalized")), x),
              scale, name=imp.name(node, "/scaled"))
    return [g.add(y, bias, name=imp.name(node)) if bias is not None else y, mean, inv_std_dev]


def _rms_norm(imp, node):
    """ONNX's function body: `x / sqrt(mean(x²) + epsilon) * scale`, the mean over the axes from `axis` on."""
    attrs = attributes_of(node)
    x, scale = imp.tensor(node, 0), imp.tensor(node, 1)
    stashed, axes = _stashed(imp, node, x, attrs.get("axis", -1))
    g = imp.g
    mean_square = g.reduce_mean(g.mul(stashed, stashed, name=imp.name(node, "/squares")), axes, keep_dims=True,
                                name=imp.name(node, "/mean_square"))
    rms = _sqrt_plus(imp, node, mean_square, attrs.get("epsilon", 1e-5))
    normalized = g.div(stashed, rms, name=imp.name(node, "/normalized"))
    return [g.mul(_unstashed(imp, node, normalized, x), scale, name=imp.name(node))]


def _lp_normalization(imp, node):
    """`x / norm` along `axis`, the norm `reduce_l1` (p 1) or `reduce_l2` (p 2); 0 where the norm is 0."""
    attrs = attributes_of(node)
    x, p = imp.tensor(node, 0), attrs.get("p", 2)
    if p not in (1, 2):
        raise imp.node_error(node, f"p must be 1 or 2, got {p}")
    axis = attrs.get("axis", -1)
    if not -x.type.rank <= axis < x.type.rank:
        raise imp.node_error(node, f"axis {axis} is out of range for rank {x.type.rank}")
    g = imp.g
    norm = getattr(g, f"reduce_l{p}")(x, [axis % x.type.rank], keep_dims=True, name=imp.name(node, "/norm"))
    zero, one = (g.const(np.array(v, dt.to_numpy(x.dtype)), name=imp.name(node, f"/{what}"))
                 for v, what in ((0, "zero"), (1, "one")))
    zero_norm = g.equal(norm, zero, name=imp.name(node, "/zero_norm"))
    divisor = g.select(zero_norm, one, norm, name=imp.name(node, "/divisor"))  # no 0 / 0 computed
    return [g.select(zero_norm, zero, g.div(x, divisor, name=imp.name(node, "/normalized")), name=imp.name(node))]


def _stashed(imp, node, x, axis: int):
    """`x` cast to the node's `stash_type` (the type its statistics are computed in) and the axes
    from `axis` on."""
    rank = x.type.rank
    if not -rank <= axis < rank:
        raise imp.node_error(node, f"axis {axis} is out of range for rank {rank}")
    stash = imp.dtype_of(attribute(node, "stash_type", 1), "the stash_type")
    stashed = x if stash == x.dtype else imp.g.cast(x, stash, name=imp.name(node, "/stashed"))
    return stashed, list(range(axis % rank, rank))


def _unstashed(imp, node, value, x):
    return value if value.dtype == x.dtype else imp.g.cast(value, x.dtype, name=imp.name(node, "/unstashed"))


def _sqrt_plus(imp, node, value, epsilon: float):
    """`sqrt(value + epsilon)`, epsilon in `value`'s type."""
    g = imp.g
    shifted = g.add(value, g.const(np.array(epsilon, dt.to_numpy(value.dtype)), name=imp.name(node, "/epsilon")),
                    name=imp.name(node, "/plus_epsilon"))
    return g.sqrt(shifted, name=imp.name(node, "/root"))


def _softmax(imp, node):
    return [imp.g.softmax(imp.tensor(node, 0), axis=attribute(node, "axis", -1), name=imp.name(node))]


def _log_softmax(imp, node):
    return [imp.g.log_softmax(imp.tensor(node, 0), axis=attribute(node, "axis", -1), name=imp.name(node))]


def _instance_norm(imp, node):
    x, scale, bias = (imp.tensor(node, i) for i in range(3))
    return [imp.g.instance_norm(x, scale, bias, epsilon=attribute(node, "epsilon", 1e-5), name=imp.name(node))]


def _lrn(imp, node):
    attrs = attributes_of(node)
    return [imp.g.lrn(imp.tensor(node, 0), attrs["size"], alpha=attrs.get("alpha", 1e-4), beta=attrs.get("beta", 0.75),
                      bias=attrs.get("bias", 1.0), name=imp.name(node))]


def _mean_variance_norm(imp, node):
    """ONNX's function: `(x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9)` over `axes` (default 0, 2, 3)."""
    x = imp.tensor(node, 0)
    axes = list(attribute(node, "axes", [0, 2, 3]))
    g = imp.g
    mean = g.reduce_mean(x, axes, keep_dims=True, name=imp.name(node, "/mean"))
    squares = g.reduce_mean(g.mul(x, x, name=imp.name(node, "/squares")), axes, keep_dims=True,
                            name=imp.name(node, "/mean_squares"))
    squared_mean = g.mul(mean, mean, name=imp.name(node, "/mean_squared"))
    variance = g.sub(squares, squared_mean, name=imp.name(node, "/variance"))
    epsilon = g.const(np.array(1e-9, dt.to_numpy(x.dtype)), name=imp.name(node, "/epsilon"))
    deviation = g.add(g.sqrt(variance, name=imp.name(node, "/std")), epsilon, name=imp.name(node, "/std_eps"))
    return [g.div(g.sub(x, mean, name=imp.name(node, "/centered")), deviation, name=imp.name(node))]


def _group_norm(imp, node):
    """The channels split into `num_groups` and each group normalized (a layer norm of unit scale
    over [N, G, C / G * spatial]), then `* scale[c] + bias[c]`."""
    x, scale, bias = (imp.tensor(node, i) for i in range(3))
    attrs = attributes_of(node)
    groups = attrs["num_groups"]
    if -1 in x.shape[1:] or x.shape[1] % groups:
        raise imp.node_error(node, f"channels and spatial dimensions must be fixed, with channels a multiple of "
                                   f"num_groups {groups}; got shape {x.shape}")
    g, dtype = imp.g, dt.to_numpy(x.dtype)
    grouped = g.reshape(x, [0, groups, -1], name=imp.name(node, "/groups"))
    ones = g.const(np.ones(grouped.shape[-1], dtype), name=imp.name(node, "/unit_scale"))
    normalized = g.layer_norm(grouped, ones, axis=-1, epsilon=attrs.get("epsilon", 1e-5),
                              name=imp.name(node, "/norm"))
    per_channel = [-1] + [1] * (x.type.rank - 2)
    y = g.mul(g.reshape(normalized, [0, *x.shape[1:]], name=imp.name(node, "/ungroup")),
              g.reshape(scale, per_channel, name=imp.name(node, "/scale")), name=imp.name(node, "/scaled"))
    return [g.add(y, g.reshape(bias, per_channel, name=imp.name(node, "/bias")), name=imp.name(node))]


CONVERTERS: dict[str, Converter] = {
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm, "Softmax": _softmax,
    "LogSoftmax": _log_softmax, "InstanceNormalization": _instance_norm, "LRN": _lrn,
    "MeanVarianceNormalization": _mean_variance_norm, "GroupNormalization": _group_norm,
    "RMSNormalization": _rms_norm, "LpNormalization": _lp_normalization,
}
