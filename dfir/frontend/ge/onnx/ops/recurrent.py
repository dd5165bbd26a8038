"""Recurrent layers: ONNX RNN, GRU and LSTM, unrolled over their static sequence length.

Each direction projects the whole input at once (one matmul per gate, `X W^T + Wb`), then walks
the time steps (from the end for `reverse`): every step adds the recurrent projection of the
previous state (`H R^T + Rb`), applies the gates' activations and computes the next state, as the
ONNX equations say. An absent initial state is zero, so the first step leaves out its terms
instead of multiplying zeros (the batch may be dynamic). Outputs: Y (every step's H, stacked
[seq, directions, batch, hidden]), Y_h and Y_c (the last state of each direction), transposed to
batch first with `layout` 1.

Refused with the node named: a dynamic sequence length, `sequence_lens` not known at import or
shorter than the sequence, `clip`, LSTM `input_forget`, and activations dfir has no op for.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

import numpy as np
import onnx

from dfir.core import data_type as dt
from dfir.frontend.ge.onnx.attributes import attributes_of
from dfir.frontend.ge.onnx.ops.converter import Converter

if TYPE_CHECKING:
    from dfir.frontend.ge.graph import Graph, Value
    from dfir.frontend.ge.onnx.importer import Importer

Activation = Callable[["Graph", "Value", list, str], "Value"]
"""(graph, x, the activation's parameters, name) -> the activated value."""
BoundActivation = Callable[["Graph", "Value", str], "Value"]
"""An activation with its parameters chosen: (graph, x, name) -> the activated value."""

_ACTIVATIONS: dict[str, tuple[tuple[float, ...], Activation]] = {
    "relu": ((), lambda g, x, params, name: g.relu(x, name=name)),
    "tanh": ((), lambda g, x, params, name: g.tanh(x, name=name)),
    "sigmoid": ((), lambda g, x, params, name: g.sigmoid(x, name=name)),
    "softsign": ((), lambda g, x, params, name: g.softsign(x, name=name)),
    "softplus": ((), lambda g, x, params, name: g.softplus(x, name=name)),
    "leakyrelu": ((0.01,), lambda g, x, params, name: g.leaky_relu(x, *params, name=name)),
    "thresholdedrelu": ((1.0,), lambda g, x, params, name: g.thresholded_relu(x, *params, name=name)),
    "elu": ((1.0,), lambda g, x, params, name: g.elu(x, *params, name=name)),
    "hardsigmoid": ((0.2, 0.5), lambda g, x, params, name: g.hard_sigmoid(x, *params, name=name)),
}
"""The activations a recurrent layer may name (lower case), with their parameters' defaults."""


class _Cell(NamedTuple):
    gates: int  # how many gates W, R and B stack
    activations: tuple[str, ...]  # the defaults, one direction's worth
    states: int  # 1 (H) or 2 (H and C)


_CELLS = {"RNN": _Cell(1, ("Tanh",), 1), "GRU": _Cell(3, ("Sigmoid", "Tanh"), 1),
          "LSTM": _Cell(4, ("Sigmoid", "Tanh", "Tanh"), 2)}


class _Step:
    """What one direction's time steps share: the graph, the names, the recurrent weights and
    biases per gate, the peepholes and the activations."""

    def __init__(self, imp: Importer, node: onnx.NodeProto, prefix: str, recurrent: list[Value],
                 biases: list[Value | None], peepholes: list[Value | None], activations: list[BoundActivation]):
        self.imp, self.node, self.g, self.prefix = imp, node, imp.g, prefix
        self.recurrent, self.biases, self.peepholes, self.activations = recurrent, biases, peepholes, activations
        self.count = 0

    def name(self, what: str) -> str:
        self.count += 1
        return self.imp.name(self.node, f"{self.prefix}/{what}{self.count}")

    def sum(self, *terms: Value | None) -> Value:
        """The terms that are not None (a zero state's) added up."""
        present = [t for t in terms if t is not None]
        total = present[0]
        for term in present[1:]:
            total = self.g.add(total, term, name=self.name("add"))
        return total

    def product(self, x: Value | None, y: Value | None) -> Value | None:
        return None if x is None or y is None else self.g.mul(x, y, name=self.name("mul"))

    def projected(self, gate: int, h: Value | None) -> Value | None:
        """`h R^T + Rb` for one gate (None, or just Rb, when `h` is zero)."""
        product = None if h is None else self.g.matmul(h, self.recurrent[gate], name=self.name("recur"))
        present = [t for t in (product, self.biases[gate]) if t is not None]
        return self.sum(*present) if present else None

    def activate(self, which: int, x: Value) -> Value:
        return self.activations[which](self.g, x, self.name("act"))

    def one_minus(self, x: Value) -> Value:
        one = self.g.const(np.array(1, dt.to_numpy(x.dtype)), name=self.name("one"))
        return self.g.sub(one, x, name=self.name("complement"))


def _rnn_step(step: _Step, x: list[Value], h: Value | None, c: Value | None, attrs: dict):
    return step.activate(0, step.sum(x[0], step.projected(0, h))), None


def _gru_step(step: _Step, x: list[Value], h: Value | None, c: Value | None, attrs: dict):
    """Gates z, r, h: `h~ = g(x_h + (r * H) Rh^T + Rbh)`, or `g(x_h + r * (H Rh^T + Rbh))` with
    `linear_before_reset`; `H' = (1 - z) * h~ + z * H`."""
    z = step.activate(0, step.sum(x[0], step.projected(0, h)))
    r = step.activate(0, step.sum(x[1], step.projected(1, h)))
    if attrs.get("linear_before_reset", 0):
        candidate = step.sum(x[2], step.product(r, step.projected(2, h)))
    else:
        candidate = step.sum(x[2], step.projected(2, step.product(r, h)))
    kept = step.product(step.one_minus(z), step.activate(1, candidate))
    return step.sum(kept, step.product(z, h)), None


def _lstm_step(step: _Step, x: list[Value], h: Value | None, c: Value | None, attrs: dict):
    """Gates i, o, f, c with peepholes [Pi, Po, Pf]: `C' = f * C + i * g(x_c + H Rc^T)`,
    `H' = o * h(C')`, where o's peephole reads C'."""
    pi, po, pf = step.peepholes
    i = step.activate(0, step.sum(x[0], step.projected(0, h), step.product(pi, c)))
    f = step.activate(0, step.sum(x[2], step.projected(2, h), step.product(pf, c)))
    candidate = step.activate(1, step.sum(x[3], step.projected(3, h)))
    c_next = step.sum(step.product(f, c), step.product(i, candidate))
    o = step.activate(0, step.sum(x[1], step.projected(1, h), step.product(po, c_next)))
    return step.product(o, step.activate(2, c_next)), c_next


_STEPS = {"RNN": _rnn_step, "GRU": _gru_step, "LSTM": _lstm_step}


def _bound(build: Activation, params: list, g: Graph, x: Value, name: str) -> Value:
    return build(g, x, params, name)


def _activations(imp: Importer, node: onnx.NodeProto, attrs: dict, cell: _Cell,
                 directions: int) -> list[list[BoundActivation]]:
    """Each direction's activations: the `activations` attribute (or the defaults), with their
    parameters taken in order from `activation_alpha` and `activation_beta`; where a list runs
    short, the activation op's default, as the ONNX spec says (onnxruntime takes 0 there)."""
    names = [n.decode() if isinstance(n, bytes) else n for n in attrs.get("activations", cell.activations * directions)]
    if len(names) != len(cell.activations) * directions:
        raise imp.node_error(node, f"activations must name {len(cell.activations) * directions} functions "
                                   f"({len(cell.activations)} per direction), got {names}")
    supplies = (list(attrs.get("activation_alpha", [])), list(attrs.get("activation_beta", [])))
    chosen = []
    for name in names:
        if name.lower() not in _ACTIVATIONS:
            raise imp.node_error(node, f"activation '{name}' is not supported, expected one of "
                                       f"{', '.join(sorted(_ACTIVATIONS))} (any case)")
        defaults, build = _ACTIVATIONS[name.lower()]
        # The k-th parameter (alpha, then beta) comes from the k-th list while it lasts.
        params = [supplies[k].pop(0) if supplies[k] else default for k, default in enumerate(defaults)]
        chosen.append(functools.partial(_bound, build, params))
    per = len(cell.activations)
    return [chosen[d * per:(d + 1) * per] for d in range(directions)]


def _check_supported(imp: Importer, node: onnx.NodeProto, attrs: dict, x: Value) -> None:
    if x.shape[0] < 1:
        raise imp.node_error(node, f"the sequence length must be fixed to unroll the steps, got X of shape "
                                   f"{x.shape}{' (batch first)' if attrs.get('layout', 0) else ''}")
    for unsupported in ("clip", "input_forget"):
        if attrs.get(unsupported):
            raise imp.node_error(node, f"{unsupported} {attrs[unsupported]} is not supported")
    lengths = imp.static_ints(node, 4, "sequence_lens")
    if lengths is not None and any(n != x.shape[0] for n in lengths):
        raise imp.node_error(node, f"sequence_lens {lengths} must all be the sequence length {x.shape[0]}")


def _direction_slice(imp: Importer, node: onnx.NodeProto, value: Value | None, d: int, axis: int,
                     what: str) -> Value | None:
    """Direction `d` of a per-direction input (its `axis` dropped)."""
    if value is None:
        return None
    g = imp.g
    part = g.slice(value, [d], [d + 1], [axis], name=imp.name(node, f"/{what}{d}"))
    return g.squeeze(part, [axis], name=imp.name(node, f"/{what}{d}_squeezed"))


def _gate_pieces(imp: Importer, node: onnx.NodeProto, value: Value | None, gates: int, hidden: int,
                 what: str) -> list[Value | None]:
    """`value` cut along dimension 0 into `gates` pieces of `hidden` (Nones when absent)."""
    if value is None:
        return [None] * gates
    return imp.g.split(value, [hidden] * gates, axis=0, name=imp.name(node, f"/{what}_gates"))


def _run_direction(imp: Importer, node: onnx.NodeProto, attrs: dict, cell: _Cell, x: Value, d: int, reverse: bool,
                   activations: list[BoundActivation], initial: Sequence[Value | None]):
    """One direction over all steps: every step's H (in time order) and the last H and C."""
    g, hidden, gates = imp.g, attrs.get("hidden_size", imp.tensor(node, 2).shape[-1]), cell.gates

    def per_gate(i: int, what: str, count: int = gates) -> list[Value | None]:
        """Direction d of input `i`, cut into one piece per gate."""
        return _gate_pieces(imp, node, _direction_slice(imp, node, imp.tensor(node, i), d, 0, what), count, hidden,
                            f"{what}{d}")

    biases = per_gate(3, "B", 2 * gates)  # Wb's gates, then Rb's
    weights_t = [[g.transpose(piece, [1, 0], name=imp.name(node, f"/{what}{d}_T{k}"))
                  for k, piece in enumerate(per_gate(i, what))] for i, what in ((1, "W"), (2, "R"))]
    inputs = [g.matmul(x, w_t, name=imp.name(node, f"/XW{d}_{k}")) for k, w_t in enumerate(weights_t[0])]
    inputs = [v if bias is None else g.add(v, bias, name=imp.name(node, f"/XWb{d}_{k}"))
              for k, (v, bias) in enumerate(zip(inputs, biases[:gates]))]
    step = _Step(imp, node, f"/{'reverse' if reverse else 'forward'}{d}", weights_t[1], biases[gates:],
                 per_gate(7, "P", 3), activations)
    steps = x.shape[0]
    per_step = [g.split(v, [1] * steps, axis=0, name=imp.name(node, f"/XW{d}_{k}_steps")) if steps > 1 else [v]
                for k, v in enumerate(inputs)]
    h, c = initial
    outputs: list[Value | None] = [None] * steps
    for t in (reversed(range(steps)) if reverse else range(steps)):
        x_t = [g.squeeze(pieces[t], [0], name=step.name(f"x{t}_")) for pieces in per_step]
        h, c = _STEPS[node.op_type](step, x_t, h, c, attrs)
        outputs[t] = h
    return outputs, h, c


def _stacked(imp: Importer, node: onnx.NodeProto, values: list[Value], axis: int, what: str) -> Value:
    """The values, each with a new dimension `axis`, joined along it."""
    g = imp.g
    parts = [g.unsqueeze(v, [axis], name=imp.name(node, f"/{what}{i}")) for i, v in enumerate(values)]
    return parts[0] if len(parts) == 1 else g.concat(parts, axis, name=imp.name(node, f"/{what}"))


def _recurrent(imp, node):
    cell, attrs = _CELLS[node.op_type], attributes_of(node)
    g, batch_first = imp.g, bool(attrs.get("layout", 0))
    x = imp.tensor(node, 0)
    if batch_first:
        x = g.transpose(x, [1, 0, 2], name=imp.name(node, "/X_time_first"))
    _check_supported(imp, node, attrs, x)
    direction = attrs.get("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise imp.node_error(node, f"direction '{direction}' is not one of forward, reverse, bidirectional")
    reverses = [False, True] if direction == "bidirectional" else [direction == "reverse"]
    activations = _activations(imp, node, attrs, cell, len(reverses))
    state_axis = 1 if batch_first else 0
    results = []
    for d, reverse in enumerate(reverses):
        initial = [_direction_slice(imp, node, imp.tensor(node, i), d, state_axis, what)
                   for i, what in ((5, "initial_h"), (6, "initial_c"))]
        results.append(_run_direction(imp, node, attrs, cell, x, d, reverse, activations[d], initial))
    outputs: list[Value | None] = [None] * (1 + cell.states)
    wanted = [i < len(node.output) and bool(node.output[i]) for i in range(1 + cell.states)]
    if wanted[0]:
        per_direction = [_stacked(imp, node, steps, 0, f"Y{d}_") for d, (steps, _, _) in enumerate(results)]
        y = _stacked(imp, node, per_direction, 1, "Y_directions")
        outputs[0] = g.transpose(y, [2, 0, 1, 3], name=imp.name(node, "/Y_batch_first")) if batch_first else y
    for k in range(1, 1 + cell.states):
        if wanted[k]:
            last = _stacked(imp, node, [result[k] for result in results], 0, "Y_h" if k == 1 else "Y_c")
            outputs[k] = g.transpose(last, [1, 0, 2], name=imp.name(node, f"/state{k}_batch_first")) \
                if batch_first else last
    return outputs


CONVERTERS: dict[str, Converter] = {"RNN": _recurrent, "GRU": _recurrent, "LSTM": _recurrent}
