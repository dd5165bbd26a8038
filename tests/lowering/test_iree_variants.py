"""`lowering.iree_executable`'s variants: flag sets for IREE's CPU code generation, recorded in the
executable and its target, part of the memo key; each one's code checked against the reference
kernels on a small CNN (convolution, depthwise convolution, pooling, concat, classifier)."""
from __future__ import annotations

import iree.runtime
import numpy as np
import pytest

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.frontend.ge.graph import Graph
from dfir.lowering import iree_executable
from dfir.lowering.codegen import codegen_module_text, parameter_values
from dfir.lowering.iree_executable import (AUTO_CPU_VARIANTS, CPU_VARIANTS, DEFAULT_VARIANT, compile_executable,
                                           compile_flags, variants_of)
from dfir.runtime.ge.iree_device import parameters_module
from codegen_graphs import DOUBLE_F32, compiler_calls, double_graph, with_codegen  # noqa: F401
from ge_lowering import codegen_text, converted, reference_outputs


def test_variants_are_data_and_default_adds_no_flags():
    assert CPU_VARIANTS[DEFAULT_VARIANT] == () and set(AUTO_CPU_VARIANTS) <= set(CPU_VARIANTS)
    assert DEFAULT_VARIANT in AUTO_CPU_VARIANTS  # one robust variant among those auto tries
    assert variants_of("iree-cpu") == tuple(CPU_VARIANTS) and variants_of("iree-cuda") == (DEFAULT_VARIANT,)
    for name, extra in CPU_VARIANTS.items():
        assert compile_flags("iree-cpu", name) == compile_flags("iree-cpu") + extra


def test_an_unknown_variant_is_an_error_and_cuda_has_only_default():
    with pytest.raises(GeError) as caught:
        compile_flags("iree-cuda", "tiled")
    assert caught.value.error_message == "backend iree-cuda has no IREE variant 'tiled'; expected one of ['default']"
    with pytest.raises(GeError) as caught:
        compile_executable("", "iree-cpu", variant="fast")
    assert caught.value.error_message.startswith("backend iree-cpu has no IREE variant 'fast'; expected one of "
                                                 "['default', ")


def test_the_variant_is_recorded_and_keys_the_memo(compiler_calls):
    text = codegen_module_text(with_codegen(double_graph().to_ir(), DOUBLE_F32))
    default = compile_executable(text, "iree-cpu", graph="double")
    tiled = compile_executable(text, "iree-cpu", graph="double", variant="tiled")
    assert len(compiler_calls) == 2 and compile_executable(text, "iree-cpu", graph="double", variant="tiled") is tiled
    assert (default.variant, tiled.variant) == ("default", "tiled")
    assert tiled.target == f"{default.target} tiled" and tiled.flags == compile_flags("iree-cpu", "tiled")


def _small_cnn() -> Graph:
    """Convolution, depthwise convolution, both poolings, concat and a classifier."""
    rng = np.random.default_rng(0)
    g = Graph("cnn")

    def const(*shape):
        return g.const((rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32))
    x = g.data(0, [-1, 3, 16, 16], dt.DT_FLOAT, name="x")
    c = g.relu(g.conv2d(x, const(8, 3, 3, 3), const(8), pads=(1, 1, 1, 1)))
    d = g.relu(g.conv2d(c, const(8, 1, 3, 3), const(8), pads=(1, 1, 1, 1), groups=8))
    p = g.concat([g.max_pool(d, [2, 2], strides=[2, 2]), g.avg_pool(c, [2, 2], strides=[2, 2])], 1)
    q = g.conv2d(p, const(16, 16, 1, 1), strides=(2, 2))
    flat = g.reshape(q, [0, -1])
    g.set_outputs([g.gemm(flat, const(10, 16 * 4 * 4), const(10), trans_b=True)])
    return g


@pytest.mark.parametrize("variant", list(CPU_VARIANTS))
def test_each_cpu_variant_computes_what_the_reference_does(variant):
    g = _small_cnn()
    module = converted(g)
    (graph_op,) = module.ops
    vmfb = compile_executable(codegen_text(module), "iree-cpu", graph="cnn", variant=variant).vmfb
    config = iree.runtime.Config("local-sync")
    context = iree.runtime.SystemContext(vm_modules=[parameters_module(config, parameter_values(graph_op)),
                                                     iree.runtime.VmModule.copy_buffer(config.vm_instance, vmfb)],
                                         config=config)
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
    got = np.array(context.modules.module.main(x).to_host())
    np.testing.assert_allclose(got, reference_outputs(g, [x])[0], rtol=1e-4, atol=1e-5)
