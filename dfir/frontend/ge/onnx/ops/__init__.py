"""The op mapping: ONNX op type -> how a node of it becomes graph ops, one module per op family.
Shape and Constant have no converter: they are always folded (see `dfir.frontend.ge.onnx.folding`)."""
from __future__ import annotations

from dfir.frontend.ge.onnx.ops import (
    activation,
    attention,
    contraction,
    control,
    elementwise,
    generation,
    indexing,
    logic,
    movement,
    normalization,
    quantization,
    recurrent,
    reduction,
    resize,
    window,
)
from dfir.frontend.ge.onnx.ops.converter import Converter

FAMILIES = (elementwise, contraction, window, normalization, movement, reduction, resize, logic, activation, attention,
            generation, control, quantization, indexing, recurrent)

CONVERTERS: dict[str, Converter] = {op: convert for family in FAMILIES for op, convert in family.CONVERTERS.items()}
"""ONNX op type -> its converter (its outputs' values, in order)."""
