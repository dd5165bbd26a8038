"""ONNX Attention (opset 23) as graph ops: heads split out of 3-D inputs, the past keys and values
joined in front, key and value heads repeated for grouped queries, `softmax(q k^T * scale + bias)
v` with the bias from the mask, `is_causal`, the windows and `nonpad_kv_seqlen` (the valid keys of
each batch), an optional softcap, and the heads merged back.
Outputs: Y, present_key, present_value and the qk_matmul_output of its `qk_matmul_output_mode`.

As ONNX's reference, the scale multiplies q and k by its square root each; a boolean mask is
`log(mask)` (0 where True, -inf where False); a mask shorter than the keys is padded with -inf;
a row with no key left is all zeros."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import onnx

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Value
    from dfir.frontend.ge.onnx.importer import Importer


class _Parts:
    """The graph ops of one node, named after it."""

    def __init__(self, imp: Importer, node: onnx.NodeProto):
        self.imp, self.node, self.g = imp, node, imp.g

    def name(self, part: str) -> str:
        return self.imp.name(self.node, "/" + part)

    def scalar(self, value: float, like: Value, part: str) -> Value:
        return self.g.const(np.array(value, dt.to_numpy(like.dtype)), name=self.name(part))

    def error(self, message: str):
        return self.imp.node_error(self.node, message)


def _attention(imp, node):
    attrs = attributes_of(node)
    p = _Parts(imp, node)
    q, k, v, mask, past_key, past_value, nonpad = (imp.tensor(node, i) for i in range(7))
    if nonpad is not None and past_key is not None:
        raise p.error("nonpad_kv_seqlen cannot be combined with past_key and past_value")
    three_d = q.type.rank == 3
    if three_d:
        q = _heads(p, q, attrs.get("q_num_heads"), "q")
        k = _heads(p, k, attrs.get("kv_num_heads"), "k")
        v = _heads(p, v, attrs.get("kv_num_heads"), "v")
    if (past_key is None) != (past_value is None):
        raise p.error("past_key and past_value must be given together")
    past = 0
    if past_key is not None:
        past = past_key.shape[2]
        k = p.g.concat([past_key, k], 2, name=p.name("present_key"))
        v = p.g.concat([past_value, v], 2, name=p.name("present_value"))
    present_key, present_value = k, v
    k, v = _repeated_heads(p, q, k, "k"), _repeated_heads(p, q, v, "v")
    scale = attrs.get("scale", 1 / np.sqrt(q.shape[3]) if q.shape[3] != -1 else None)
    if scale is None:
        raise p.error(f"the default scale needs a fixed head size, got query shape {q.shape}")
    root = p.scalar(np.sqrt(scale), q, "scale")
    keys_t = p.g.transpose(p.g.mul(k, root, name=p.name("k_scaled")), [0, 1, 3, 2], name=p.name("k_t"))
    scores = p.g.matmul(p.g.mul(q, root, name=p.name("q_scaled")), keys_t, name=p.name("qk"))
    if attrs.get("softcap", 0.0) > 0:
        cap = p.scalar(attrs["softcap"], q, "softcap")
        scores = p.g.mul(p.g.tanh(p.g.div(scores, cap, name=p.name("capped")), name=p.name("tanh")), cap,
                         name=p.name("softcapped"))
    qk_outputs = {0: scores, 1: scores}
    window = (attrs.get("left_window_size", -1), attrs.get("right_window_size", -1))
    bias = _bias(p, q, k, mask, past, bool(attrs.get("is_causal", 0)), window, nonpad)
    if bias is not None:
        scores = p.g.add(scores, bias, name=p.name("qk_bias"))
    qk_outputs[2] = scores
    probabilities = _softmax(p, scores, bias, attrs.get("softmax_precision"))
    qk_outputs[3] = probabilities
    y = p.g.matmul(probabilities, v, name=p.name("y_heads" if three_d else "y"))
    if three_d:
        merged = p.g.transpose(y, [0, 2, 1, 3], name=p.name("y_merge"))
        y = p.g.reshape(merged, [0, 0, -1], name=p.name("y"))
    mode = attrs.get("qk_matmul_output_mode", 0)
    if mode not in qk_outputs:
        raise p.error(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    return [y, present_key, present_value, qk_outputs[mode]]


def _heads(p: _Parts, x: Value, heads: int | None, what: str) -> Value:
    """[batch, sequence, heads * size] -> [batch, heads, sequence, size]."""
    if heads is None:
        raise p.error(f"a 3-D {what} needs the {'q_num_heads' if what == 'q' else 'kv_num_heads'} attribute")
    hidden = x.shape[2]
    if hidden == -1 or hidden % heads:
        raise p.error(f"the hidden size of {what} {x.shape} is not a fixed multiple of {heads} heads")
    split = p.g.reshape(x, [0, 0, heads, hidden // heads], name=p.name(f"{what}_split"))
    return p.g.transpose(split, [0, 2, 1, 3], name=p.name(f"{what}_heads"))


def _repeated_heads(p: _Parts, q: Value, x: Value, which: str) -> Value:
    """Key or value heads repeated, each `q heads / kv heads` times in a row, for grouped queries."""
    q_heads, kv_heads = q.shape[1], x.shape[1]
    if q_heads == kv_heads:
        return x
    if -1 in (q_heads, kv_heads) or q_heads % kv_heads:
        raise p.error(f"query heads {q_heads} are not a fixed multiple of key/value heads {kv_heads}")
    spread = p.g.unsqueeze(x, [2], name=p.name(f"{which}_group"))
    tiled = p.g.tile(spread, [1, 1, q_heads // kv_heads, 1, 1], name=p.name(f"{which}_repeat"))
    return p.g.reshape(tiled, [0, q_heads, -1, x.shape[3]], name=p.name(f"{which}_grouped"))


def _bias(p: _Parts, q: Value, k: Value, mask: Value | None, past: int, causal: bool,
          window: tuple[int, int], nonpad: Value | None) -> Value | None:
    """The additive mask, padded with -inf to the keys, plus the causal and sliding-window ones
    (query i, at position i + past, sees key j when j <= i + past, and when i + past - j is at most
    the left window and j - i - past at most the right one; -1: unbounded), plus, with
    `nonpad_kv_seqlen`, the padding one; None without any. With `nonpad_kv_seqlen` (the valid keys
    of each batch: a static cache) the queries of batch b sit at positions from
    `nonpad[b] - queries` on and keys from `nonpad[b]` on are padding."""
    bias = None
    if mask is not None:
        bias = mask
        if mask.dtype == dt.DT_BOOL:
            bias = p.g.log(p.g.cast(mask, q.dtype, name=p.name("mask_float")), name=p.name("mask_bias"))
        keys, given = k.shape[2], mask.shape[-1]
        if -1 in (keys, given):
            raise p.error(f"the mask {mask.shape} and the keys {k.shape} need fixed lengths")
        if given < keys:
            pads = [0] * (2 * mask.type.rank)
            pads[2 * mask.type.rank - 1] = keys - given
            bias = p.g.pad(bias, pads, value=-np.inf, name=p.name("mask_padded"))
    left, right = window
    positional = None
    if causal or left >= 0 or right >= 0:
        queries, keys = q.shape[2], k.shape[2]
        if -1 in (queries, keys):
            raise p.error(f"is_causal and windows need fixed sequence lengths, got query {q.shape} and key {k.shape}")
        behind = np.arange(queries)[:, None] + past - np.arange(keys)[None, :]
        bounds = [(bound, sign) for bound, sign in ((0 if causal else -1, -1), (left, 1), (right, -1)) if bound >= 0]
        if nonpad is None:
            allowed = np.ones_like(behind, dtype=bool)
            for bound, sign in bounds:
                allowed &= sign * behind <= bound
            positional = p.g.const(np.where(allowed, 0, -np.inf).astype(dt.to_numpy(q.dtype)),
                                   name=p.name("positions"))
        else:
            positional = _positions_behind_valid_keys(p, q, nonpad, behind - queries, bounds)
    for part in (positional, _padding(p, q, k, nonpad) if nonpad is not None else None):
        if part is not None:
            bias = part if bias is None else p.g.add(bias, part, name=p.name("bias"))
    return bias


def _positions_behind_valid_keys(p: _Parts, q: Value, nonpad: Value, behind: np.ndarray,
                                 bounds: list[tuple[int, int]]) -> Value:
    """The causal and window bias [batch, 1, queries, keys] where batch b's query i is at position
    `i + nonpad[b] - queries`: `behind + nonpad[b]` (`behind[i, j] = i - queries - j`) is how far
    key j lies behind it, and each (bound, sign) allows `sign * distance <= bound`."""
    per_batch = p.g.reshape(nonpad, [-1, 1, 1], name=p.name("nonpad_per_batch"))
    distance = p.g.add(p.g.const(behind.astype(np.int64), name=p.name("behind")), per_batch, name=p.name("distance"))
    allowed = None
    for number, (bound, sign) in enumerate(bounds):
        limit = p.g.const(np.array(sign * bound, np.int64), name=p.name(f"bound{number}"))
        ok = (p.g.greater_equal if sign < 0 else p.g.less_equal)(distance, limit, name=p.name(f"within{number}"))
        allowed = ok if allowed is None else p.g.logical_and(allowed, ok, name=p.name(f"allowed{number}"))
    bias = _where_allowed(p, allowed, q, "positions")
    return p.g.unsqueeze(bias, [1], name=p.name("positions_per_head"))


def _padding(p: _Parts, q: Value, k: Value, nonpad: Value) -> Value:
    """0 for the first `nonpad[b]` keys of batch b, -inf for the rest: [batch, 1, 1, keys]."""
    keys = k.shape[2]
    if keys == -1:
        raise p.error(f"nonpad_kv_seqlen needs a fixed key length, got key {k.shape}")
    positions = p.g.const(np.arange(keys, dtype=np.int64)[None, :], name=p.name("key_positions"))
    valid = p.g.less(positions, p.g.reshape(nonpad, [-1, 1], name=p.name("nonpad_column")), name=p.name("valid_keys"))
    bias = _where_allowed(p, valid, q, "padding")
    return p.g.reshape(bias, [0, 1, 1, keys], name=p.name("padding_per_head"))


def _where_allowed(p: _Parts, allowed: Value, q: Value, part: str) -> Value:
    return p.g.select(allowed, p.scalar(0.0, q, f"{part}_open"), p.scalar(-np.inf, q, f"{part}_closed"),
                      name=p.name(part))


def _softmax(p: _Parts, scores: Value, bias: Value | None, precision: int | None) -> Value:
    """Softmax over the keys, in `softmax_precision` when given. With a bias a row may have no key
    left (all -inf): the maximum it subtracts is kept finite and the sum at least the smallest
    normal number, so such a row is 0 and the others are exactly softmax."""
    wanted = scores.dtype if precision is None else p.imp.dtype_of(precision, "softmax_precision")
    x = scores if wanted == scores.dtype else p.g.cast(scores, wanted, name=p.name("softmax_in"))
    if bias is None:
        probabilities = p.g.softmax(x, -1, name=p.name("softmax"))
    else:
        info = np.finfo(dt.to_numpy(wanted))
        peak = p.g.maximum(p.g.reduce_max(x, [-1], keep_dims=True, name=p.name("peak")),
                           p.scalar(info.min, x, "lowest"), name=p.name("finite_peak"))
        exps = p.g.exp(p.g.sub(x, peak, name=p.name("shifted")), name=p.name("exps"))
        total = p.g.maximum(p.g.reduce_sum(exps, [-1], keep_dims=True, name=p.name("total")),
                            p.scalar(info.tiny, x, "tiny"), name=p.name("positive_total"))
        probabilities = p.g.div(exps, total, name=p.name("softmax"))
    if wanted != scores.dtype:
        probabilities = p.g.cast(probabilities, scores.dtype, name=p.name("softmax_out"))
    return probabilities


CONVERTERS: dict[str, Converter] = {"Attention": _attention}
