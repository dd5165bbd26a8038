"""The ONNX export of GE graphs (`dfir.lowering.onnx_export`) run on onnxruntime against the
reference kernels: every case of the IREE lowering tests (tests/passes/ge_to_linalg/) again, the
ops and forms those do not cover, the NoExport messages, and small ONNX models imported, exported
and run again."""
from __future__ import annotations

import importlib.util
import inspect
import itertools
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from dfir.lowering.onnx_export import NoExport
from onnx_export_helpers import assert_export_matches

_LOWERING_TESTS = Path(__file__).resolve().parents[1] / "passes" / "ge_to_linalg"
_FAMILIES = ["elementwise", "activation", "logic", "contraction", "window", "movement", "reduction", "resize"]
_IREE_ONLY = ("lowered_outputs(", "converted(", "codegen_text(")


def _lowering_module(family: str):
    spec = importlib.util.spec_from_file_location(f"onnx_export_cases_{family}", _LOWERING_TESTS / f"test_{family}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parameter_sets(test) -> list[dict]:
    """The keyword arguments of each case of a (parametrized) test function."""
    axes = []
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize":
            names, values = mark.args[0], mark.args[1]
            names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
            axes.append([dict(zip(names, v if len(names) > 1 else [v])) for v in values])
    return [{k: v for part in combination for k, v in part.items()} for combination in itertools.product(*axes)]


def _lowering_cases() -> list:
    """Every case of the lowering tests that compares with `assert_lowering_matches` alone."""
    cases = []
    for family in _FAMILIES:
        module = _lowering_module(family)
        for name, test in vars(module).items():
            if name.startswith("test_") and callable(test):
                source = inspect.getsource(test)
                if "assert_lowering_matches" in source and not any(s in source for s in _IREE_ONLY):
                    cases += [_case(test, kwargs, f"{family}.{name}[{i}]")
                              for i, kwargs in enumerate(_parameter_sets(test))]
    return cases


def _case(test, kwargs: dict, case: str):
    marks = [pytest.mark.xfail(raises=_DIFFERS[case][0], reason=_DIFFERS[case][1], strict=True)] \
        if case in _DIFFERS else []
    return pytest.param(test, kwargs, _NO_EXPORT.get(case), id=case, marks=marks)


_NO_EXPORT = {
    "logic.test_integer_comparisons_bitwise_and_shifts_match[0]":
        "ge.bit_shift 'bit_shift_2': ONNX BitShift takes unsigned integers, not DT_INT32",
    "contraction.test_integer_gemm_truncates_alpha_and_beta[0]":
        "ge.gemm 'gemm_0': onnxruntime has no Gemm kernel for DT_INT32",
    "window.test_conv2d_matches_with_groups_strides_dilations_and_pads[1]":
        "ge.conv2d 'conv2d_0': onnxruntime has no Conv kernel for DT_DOUBLE",
    "window.test_conv2d_matches_with_groups_strides_dilations_and_pads[5]":
        "ge.conv2d 'conv2d_0': onnxruntime has no Conv kernel for DT_INT32",
    "window.test_conv2d_matches_with_groups_strides_dilations_and_pads[6]":
        "ge.conv2d 'conv2d_0': onnxruntime has no Conv kernel for DT_INT32",
    "window.test_integer_max_pool_pads_with_the_lowest_integer[0]":
        "ge.max_pool 'max_pool_0': onnxruntime has no MaxPool kernel for DT_INT32",
    "reduction.test_reductions_over_negative_axes_keep_dims[6]":
        "ge.reduce_sum 'reduce_sum_0': onnxruntime has no ReduceSum kernel for DT_UINT8",
    "reduction.test_reductions_over_negative_axes_keep_dims[7]":
        "ge.reduce_mean 'reduce_mean_0': onnxruntime has no ReduceMean kernel for DT_UINT8",
    "reduction.test_more_reductions_in_one_graph[2]":
        "ge.reduce_prod 'reduce_prod_0': onnxruntime has no ReduceProd kernel for DT_UINT8",
    "reduction.test_log_softmax_instance_norm_and_lrn[0]": "ge.lrn 'lrn_1': onnxruntime's LRN takes an odd size, not 2",
    **dict.fromkeys([f"reduction.test_running_sums_and_products_every_direction[{i}]" for i in (1, 3, 5)],
                    "ge.cum_prod 'cum_prod_0': ONNX has no running product"),
    "reduction.test_running_sums_and_products_every_direction[4]":
        "ge.cum_sum 'cum_sum_0': onnxruntime has no CumSum kernel for DT_UINT8",
    **dict.fromkeys([f"resize.test_resize_to_fixed_sizes[{i}]" for i in range(5, 10)],
                    "ge.resize 'resize_0': onnxruntime's cubic Resize takes a 2-D input or the last two axes of a "
                    "4-D one, not axes [1, 2] of a 3-D input"),
    "resize.test_grid_sample[5]":
        "ge.grid_sample 'grid_sample_0': onnxruntime's cubic GridSample with border padding samples other taps",
}
"""Lowering cases (by id) whose graph has an op with no export: its NoExport message."""

_DIFFERS = {
    "elementwise.test_integer_math_and_remainders_match_the_reference[0]":
        (ort.capi.onnxruntime_pybind11_state.Fail, "onnxruntime refuses an integer Mod by a constant 0"),
    **dict.fromkeys([f"window.test_max_pool_pads_with_the_lowest_finite_value[{i}]" for i in range(4)],
                    (AssertionError, "a window over -inf inputs and padding: onnxruntime gives -inf, the kernel "
                                     "the lowest finite value")),
    "movement.test_pad[7]": (ort.capi.onnxruntime_pybind11_state.InvalidArgument,
                             "onnxruntime refuses to reflect pads wider than the input"),
    "reduction.test_reduce_max_propagates_nan[0]": (AssertionError, "onnxruntime's ReduceMax skips NaN"),
    "reduction.test_arg_max_finds_the_first_nan[0]": (AssertionError, "onnxruntime's ArgMax skips NaN"),
    "resize.test_resize_by_scales_fed_at_run_time[1]":
        (AssertionError, "nearest_mode floor of a point computed in float32 (onnxruntime) or float64 (kernel)"),
}
"""Lowering cases (by id) that onnxruntime computes otherwise than the kernels (at run time): the
error that shows it, and why."""


@pytest.mark.parametrize("test, kwargs, no_export", _lowering_cases())
def test_lowering_cases_export(test, kwargs, no_export, monkeypatch):
    monkeypatch.setitem(test.__globals__, "assert_lowering_matches", assert_export_matches)
    if no_export is None:
        test(**kwargs)
    else:
        with pytest.raises(NoExport) as error:
            test(**kwargs)
        assert str(error.value) == no_export


