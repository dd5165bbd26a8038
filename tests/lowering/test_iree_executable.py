"""`lowering.codegen` and `lowering.iree_executable`: a ge.graph's codegen module, printed for IREE
and compiled for the CPU and (cross-compiled, no GPU needed) CUDA."""
from __future__ import annotations

import pytest

from xdsl.ir import Block, Region

from dfir.core.errors import GeError
from dfir.dialects import ge
from dfir.lowering import iree_executable
from dfir.lowering.codegen import codegen_module_text
from dfir.lowering.iree_executable import CUDA_TARGET, compile_executable, compile_flags, custom_form
from codegen_graphs import (DOUBLE_F32, MATMUL_F64, compiler_calls, double_graph,  # noqa: F401
                            with_codegen)

VMFB_MAGIC = b"PK\x03\x04"  # a vmfb is a zip archive around the module's flatbuffer


def test_a_graph_without_codegen_has_no_module_text():
    assert codegen_module_text(double_graph().to_ir()) is None


def test_the_module_text_is_the_main_function_alone_in_generic_form():
    text = codegen_module_text(with_codegen(double_graph().to_ir(), DOUBLE_F32))
    assert text.startswith('"builtin.module"() ({\n  "func.func"() <{sym_name = "main"')
    assert '"linalg.generic"' in text and "ge." not in text


def test_a_codegen_region_without_one_main_function_is_an_error():
    graph = with_codegen(double_graph().to_ir(), DOUBLE_F32.replace("@main", "@other"), name="g")
    with pytest.raises(GeError) as caught:
        codegen_module_text(graph)
    assert caught.value.error_message == ("ge.graph @g: its codegen region must hold exactly one func.func "
                                          "@main, found func.func @other")
    empty = ge.GraphOp("e", double_graph().to_ir().body.clone())
    empty.add_region(Region(Block()))
    with pytest.raises(GeError) as caught:
        codegen_module_text(empty)
    assert caught.value.error_message.endswith("found nothing")


def test_the_cpu_flags_target_the_host_and_keep_f64_and_i64():
    assert compile_flags("iree-cpu") == (
        "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
        "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false",
        "--iree-input-demote-i64-to-i32=false")
    assert compile_flags("iree-cuda")[:2] == ("--iree-hal-target-device=cuda", f"--iree-cuda-target={CUDA_TARGET}")
    with pytest.raises(GeError) as caught:
        compile_flags("reference")
    assert caught.value.error_message == ("backend 'reference' is not compiled by IREE; expected one of "
                                          "['iree-cpu', 'iree-cuda']")


def test_compiles_are_memoized_and_byte_identical(compiler_calls):
    text = codegen_module_text(with_codegen(double_graph().to_ir(), DOUBLE_F32))
    first = compile_executable(text, "iree-cpu", graph="double")
    assert compile_executable(text, "iree-cpu", graph="double") is first
    assert len(compiler_calls) == 1
    iree_executable.forget_compiled()
    again = compile_executable(text, "iree-cpu", graph="double")
    assert len(compiler_calls) == 2 and again.vmfb == first.vmfb     # the .om stays deterministic
    assert (first.backend, first.target, first.flags) == ("iree-cpu", again.target, compile_flags("iree-cpu"))
    assert first.target.startswith("llvm-cpu host ") and first.compile_seconds > 0
    assert first.vmfb[:4] == VMFB_MAGIC and len(first.sha256) == 64


def test_cuda_cross_compiles_without_a_gpu(compiler_calls):
    text = codegen_module_text(with_codegen(double_graph().to_ir(), MATMUL_F64, backend="iree-cuda"))
    compiled = compile_executable(text, "iree-cuda", graph="mm")
    assert compiled.target == "cuda sm_80" and compiled.vmfb[:4] == VMFB_MAGIC
    assert compile_executable(text, "iree-cuda", graph="mm").vmfb == compiled.vmfb


def test_a_compile_failure_names_the_graph_and_quotes_iree(compiler_calls):
    bad = DOUBLE_F32.replace("func.return %y : tensor<?xf32>", 'func.return %a : tensor<?xf32>')
    text = codegen_module_text(with_codegen(double_graph().to_ir(), bad)).replace('"arith.addf"', '"arith.nosuch"')
    with pytest.raises(GeError) as caught:
        compile_executable(text, "iree-cpu", graph="double")
    assert caught.value.error_message.startswith("ge.graph @double: IREE could not compile it for iree-cpu: "
                                                 "<stdin>:")
    assert "'arith.nosuch'" in caught.value.error_message


GENERIC_CONV = """"builtin.module"() ({
  "func.func"() <{function_type = (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>, %init: tensor<1x1x2x2xf32>):
    %y = "linalg.conv_2d_nchw_fchw"(%x, %w, %init) <{dilations = dense<1> : vector<2xi64>, operandSegmentSizes = array<i32: 2, 1>, strides = dense<1> : vector<2xi64>}> ({
    ^bb0(%a: f32, %b: f32, %c: f32):
      %m = "arith.mulf"(%a, %b) : (f32, f32) -> f32
      %s = "arith.addf"(%c, %m) : (f32, f32) -> f32
      "linalg.yield"(%s) : (f32) -> ()
    }) : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
    "func.return"(%y) : (tensor<1x1x2x2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""


def test_the_compiler_is_given_the_custom_form_of_named_ops():
    custom = custom_form(GENERIC_CONV)
    assert "linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} " \
           "ins(%arg0, %arg1 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>)" in custom
    assert "linalg.yield" not in custom  # the named op builds its own region


def test_text_iree_cannot_parse_reaches_the_compiler_as_it_is():
    assert custom_form("not mlir") == "not mlir"
