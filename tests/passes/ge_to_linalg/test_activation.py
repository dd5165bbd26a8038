"""Activation lowerings (parameters as constants) against the reference kernels, through IREE on
the host CPU, in one graph."""
from __future__ import annotations

import numpy as np

from dfir.core import data_type as dt
from dfir.frontend.ge.graph import Graph
from ge_lowering import assert_lowering_matches


def test_activations_match_the_reference():
    g = Graph("activations")
    x = g.data(0, [-1, 6], dt.DT_FLOAT, name="x")
    slope = g.data(1, [6], dt.DT_FLOAT, name="slope")
    n = g.data(2, [-1, 3], dt.DT_INT32, name="n")
    u = g.data(3, [3], dt.DT_UINT8, name="u")
    g.set_outputs([g.leaky_relu(x, 0.1), g.elu(x, 0.5), g.celu(x, 2.0), g.selu(x), g.selu(x, 2.0, 3.0),
                   g.thresholded_relu(x, 0.5), g.hard_sigmoid(x), g.hard_sigmoid(x, 0.5, 0.6), g.hard_swish(x),
                   g.shrink(x), g.shrink(x, 1.5, 1.0), g.softplus(x), g.softsign(x), g.mish(x),
                   g.prelu(x, slope), g.prelu(x, g.const(np.float32(0.25))),
                   g.prelu(n, g.const(np.int32([1, 2, 3]))), g.prelu(u, u)])
    x_values = np.float32([[-90.0, -4.0, -1.0, -0.5, 0.0, 0.25], [0.5, 0.75, 1.0, 2.0, 3.5, 90.0]])
    assert_lowering_matches(g, [x_values, np.linspace(0, 1, 6, dtype=np.float32),
                                np.int32([[-3, 0, 4], [5, -6, -1]]), np.uint8([0, 7, 255])], rtol=1e-5, atol=1e-6)
