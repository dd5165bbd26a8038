"""Image resampling: `ge.resize_bilinear`, `ge.resize` (ONNX Resize) and `ge.grid_sample`."""
from __future__ import annotations

from typing import Mapping, Sequence

from xdsl.dialects.builtin import DenseArrayBase, Float64Type, FloatAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Attribute
from xdsl.irdl import (AttrSizedOperandSegments, irdl_op_definition, operand_def, opt_operand_def, opt_prop_def,
                       prop_def, result_def, traits_def)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dfir.core.resize_sizes import ASPECT_POLICIES, resize_plan
from dfir.dialects.ge.base import ShapedOp
from dfir.dialects.ge_shapes import (check_count, check_min, format_shape, intersect_dims, known_operands,
                                     normalize_axes, prop_flag, prop_ints, require_float, require_image_format,
                                     require_index, require_rank, ValueRanges)
from dfir.dialects.ge_types import DimRange, GeTensorType

__all__ = ["GridSampleOp", "OPS", "ResizeBilinearOp", "ResizeOp"]


@irdl_op_definition
class ResizeBilinearOp(ShapedOp):
    """Bilinear resize of the two spatial dimensions of an NCHW input to [height, width] given
    either as the `size` property or as a rank-1 i32/i64 operand of 2 elements. Source
    coordinates follow `align_corners` (corner pixels aligned), `half_pixel_centers`, or neither
    (asymmetric). With a size operand the output size is that operand's known values, if any.

        %y = ge.resize_bilinear %x, %hw align_corners : (!ge.tensor<[1, 3, 1:1728, 1:1728], f32>, !ge.tensor<[2], i32>) -> !ge.tensor<[1, 3, -1, -1], f32>
        %z = ge.resize_bilinear %x size [224, 224] half_pixel_centers : (!ge.tensor<[1, 3, -1, -1], f32>) -> !ge.tensor<[1, 3, 224, 224], f32>
    """

    name = "ge.resize_bilinear"

    input = operand_def(GeTensorType)
    size_input = opt_operand_def(GeTensorType)
    size = opt_prop_def(DenseArrayBase.constr(i64))
    align_corners = opt_prop_def(UnitAttr)
    half_pixel_centers = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input (`,` $size_input^)? (`size` $size^)? (`align_corners` $align_corners^)? "
                       "(`half_pixel_centers` $half_pixel_centers^)? attr-dict `:` "
                       "functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, *size_input = operand_types
        require_float(cls.name, x, "input")
        require_rank(cls.name, x, 4)
        require_image_format(cls.name, x)
        if prop_flag(properties, "align_corners") and prop_flag(properties, "half_pixel_centers"):
            raise VerifyException(f"{cls.name}: align_corners and half_pixel_centers exclude each other")
        if bool(size_input) == ("size" in properties):
            raise VerifyException(f"{cls.name}: give the output size either as the size property or as "
                                  "a size operand (exactly one)")
        if size_input:
            return [x.with_dims([*x.dims[:2], *cls._sizes_from_operand(size_input[0], operand_values)])]
        size = prop_ints(properties, "size")
        check_count(cls.name, "size", size, 2)
        check_min(cls.name, "size", size, 1)
        return [x.with_dims([*x.dims[:2], *(DimRange.fixed(s) for s in size)])]

    @classmethod
    def _sizes_from_operand(cls, t: GeTensorType, operand_values) -> list[DimRange]:
        require_index(cls.name, t, "size operand")
        if t.rank != 1 or not t.dims[0].contains(2):
            raise VerifyException(f"{cls.name}: size operand must have shape [2], got {format_shape(t)}")
        known = known_operands(operand_values, 2)[1]
        if known is None or len(known) != 2:
            return [DimRange.unknown(), DimRange.unknown()]
        return [DimRange(max(v.lo, 0), v.hi) for v in known]


_RESIZE_MODES = ("nearest", "linear", "cubic")


_RESIZE_COORDINATES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                       "tf_crop_and_resize")


_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _check_choices(op_name: str, properties: Mapping[str, Attribute], choices: Mapping[str, Sequence[str]]) -> None:
    """Each of these string properties that is present has one of its allowed values."""
    for key, allowed in choices.items():
        if key in properties and properties[key].data not in allowed:
            raise VerifyException(f"{op_name}: {key} must be one of {', '.join(allowed)}, got '{properties[key].data}'")


@irdl_op_definition
class ResizeOp(ShapedOp):
    """ONNX Resize of the input's `axes`: `mode` nearest, linear or cubic interpolation at the
    source coordinates `coordinate_transformation_mode` gives (as ONNX). The output sizes of those
    axes are the `sizes` operand (one entry per axis, adjusted by `keep_aspect_ratio_policy`) or
    floor(size * scale) for the `scales` operand; with both, `sizes` gives the output sizes and
    `scales` the coordinate scales. `roi` ([starts..., ends...] per axis) is the crop of
    "tf_crop_and_resize", whose points outside the input are `extrapolation_value`. The options
    of one mode (`nearest_mode`, `cubic_coeff_a`, `antialias`) are refused with another.

        %y = ge.resize %x sizes %s axes [2, 3] mode "cubic" coordinates "half_pixel" cubic_coeff_a -0.5 exclude_outside : !ge.tensor<[1, 3, 4, 4], f32> sizes !ge.tensor<[2], i64> -> !ge.tensor<[1, 3, -1, -1], f32>
    """

    name = "ge.resize"

    input = operand_def(GeTensorType)
    roi = opt_operand_def(GeTensorType)
    scales = opt_operand_def(GeTensorType)
    sizes = opt_operand_def(GeTensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    mode = prop_def(StringAttr)
    coordinate_transformation_mode = prop_def(StringAttr)
    nearest_mode = opt_prop_def(StringAttr)
    cubic_coeff_a = opt_prop_def(FloatAttr[Float64Type])
    exclude_outside = opt_prop_def(UnitAttr)
    antialias = opt_prop_def(UnitAttr)
    extrapolation_value = opt_prop_def(FloatAttr[Float64Type])
    keep_aspect_ratio_policy = opt_prop_def(StringAttr)
    result = result_def(GeTensorType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    assembly_format = ("$input (`roi` $roi^)? (`scales` $scales^)? (`sizes` $sizes^)? `axes` $axes `mode` $mode "
                       "`coordinates` $coordinate_transformation_mode (`nearest_mode` $nearest_mode^)? "
                       "(`cubic_coeff_a` $cubic_coeff_a^)? (`exclude_outside` $exclude_outside^)? "
                       "(`antialias` $antialias^)? (`extrapolation_value` $extrapolation_value^)? "
                       "(`keep_aspect_ratio_policy` $keep_aspect_ratio_policy^)? attr-dict `:` type($input) "
                       "(`roi` type($roi)^)? (`scales` type($scales)^)? (`sizes` type($sizes)^)? `->` type($result)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        (x, roi, scales, sizes), positions = cls._operand_groups(operand_types, properties)
        require_float(cls.name, x, "input")
        axes = normalize_axes(cls.name, prop_ints(properties, "axes"), x)
        cls._check_options(properties, roi is not None)
        for what, t, count in (("roi", roi, 2 * len(axes)), ("scales", scales, len(axes)), ("sizes", sizes, len(axes))):
            if t is not None and (t.rank != 1 or not t.dims[0].contains(count)):
                raise VerifyException(f"{cls.name}: {what} must have shape [{count}] (axes {axes}), got "
                                      f"{format_shape(t)}")
        if roi is not None:
            require_float(cls.name, roi, "roi")
        if scales is not None:
            require_float(cls.name, scales, "scales")
        if sizes is not None:
            require_index(cls.name, sizes, "sizes")
        elif scales is None:
            raise VerifyException(f"{cls.name}: needs a scales or a sizes operand")
        if "keep_aspect_ratio_policy" in properties and (sizes is None or scales is not None):
            raise VerifyException(f"{cls.name}: keep_aspect_ratio_policy needs sizes and no scales")
        dims = list(x.dims)
        known = known_operands(operand_values, len(operand_types))[positions[3]] if sizes is not None else None
        for axis, dim in zip(axes, cls._resized_dims(x, axes, properties, known)):
            dims[axis] = dim
        return [x.with_dims(dims)]

    @staticmethod
    def _operand_groups(operand_types, properties) -> tuple[list[GeTensorType | None], list[int | None]]:
        """input, roi, scales and sizes (None where absent), and their positions in the operands, as
        the operand segment sizes tell (the builder passes them like the parser does)."""
        segments = prop_ints(properties, AttrSizedOperandSegments.attribute_name)
        positions, position = [], 0
        for count in segments:
            positions.append(position if count else None)
            position += count
        return [None if p is None else operand_types[p] for p in positions], positions

    @classmethod
    def _check_options(cls, properties, has_roi: bool) -> None:
        mode = properties["mode"].data
        transform = properties["coordinate_transformation_mode"].data
        _check_choices(cls.name, properties, {"mode": _RESIZE_MODES, "coordinate_transformation_mode": _RESIZE_COORDINATES,
                                              "nearest_mode": _NEAREST_MODES, "keep_aspect_ratio_policy": ASPECT_POLICIES})
        for key, needed in (("nearest_mode", mode == "nearest"), ("cubic_coeff_a", mode == "cubic"),
                            ("antialias", mode != "nearest"), ("extrapolation_value", transform == "tf_crop_and_resize")):
            if key in properties and not needed:
                raise VerifyException(f"{cls.name}: {key} does not apply to mode '{mode}' with coordinates "
                                      f"'{transform}'")
        if has_roi != (transform == "tf_crop_and_resize"):
            raise VerifyException(f"{cls.name}: a roi operand goes with coordinates 'tf_crop_and_resize' (and only "
                                  "with them)")

    @classmethod
    def _resized_dims(cls, x: GeTensorType, axes: list[int], properties,
                      known: ValueRanges | None) -> list[DimRange]:
        """The resized axes' sizes: the known sizes (as given, or under the aspect policy when every
        input size is fixed), else unknown."""
        if known is None or len(known) != len(axes):
            return [DimRange.unknown()] * len(axes)
        policy = properties.get("keep_aspect_ratio_policy")
        if policy is None or policy.data == "stretch":
            return [DimRange(max(v.lo, 0), v.hi) for v in known]
        in_sizes = [x.dims[a] for a in axes]
        if not all(d.is_fixed for d in (*known, *in_sizes)) or min(d.lo for d in in_sizes) < 1:
            return [DimRange.unknown()] * len(axes)
        out, _ = resize_plan([d.lo for d in in_sizes], [d.lo for d in known], policy=policy.data)
        return [DimRange.fixed(n) for n in out]


_GRID_SAMPLE_MODES = ("linear", "nearest", "cubic")


_GRID_PADDING_MODES = ("zeros", "border", "reflection")


@irdl_op_definition
class GridSampleOp(ShapedOp):
    """ONNX GridSample: the [N, C, D1, ..., Dk] input sampled at the points of the
    [N, H1, ..., Hm, k] `grid` (coordinates in [-1, 1], the last one along D1... reversed: x first),
    by `mode` linear, nearest or cubic interpolation; `padding_mode` says what points outside the
    input read (zeros, the border, or the input reflected), `align_corners` whether -1 and 1 are
    the centers of the corner pixels (else their outer edges). The result is [N, C, H1, ..., Hm].

        %y = ge.grid_sample %x, %grid mode "linear" padding "zeros" align_corners : (!ge.tensor<[1, 3, 4, 4], f32>, !ge.tensor<[1, 6, 6, 2], f32>) -> !ge.tensor<[1, 3, 6, 6], f32>
    """

    name = "ge.grid_sample"

    input = operand_def(GeTensorType)
    grid = operand_def(GeTensorType)
    mode = prop_def(StringAttr)
    padding_mode = prop_def(StringAttr)
    align_corners = opt_prop_def(UnitAttr)
    result = result_def(GeTensorType)

    traits = traits_def(Pure())

    assembly_format = ("$input `,` $grid `mode` $mode `padding` $padding_mode (`align_corners` $align_corners^)? "
                       "attr-dict `:` functional-type(operands, results)")

    @classmethod
    def infer_types(cls, operand_types, properties, operand_values=None):
        x, grid = operand_types
        require_float(cls.name, x, "input")
        require_float(cls.name, grid, "grid")
        _check_choices(cls.name, properties, {"mode": _GRID_SAMPLE_MODES, "padding_mode": _GRID_PADDING_MODES})
        if x.rank < 3 or grid.rank != x.rank:
            raise VerifyException(f"{cls.name}: input {format_shape(x)} and grid {format_shape(grid)} must have "
                                  "one rank, at least 3")
        batch = intersect_dims(cls.name, f"grid {format_shape(grid)} must have the batch of input "
                                         f"{format_shape(x)}", grid.dims[0], x.dims[0])
        intersect_dims(cls.name, f"grid {format_shape(grid)} must end in {x.rank - 2} coordinates",
                       grid.dims[-1], DimRange.fixed(x.rank - 2))
        return [x.with_dims([batch, x.dims[1], *grid.dims[1:-1]])]


OPS = (ResizeBilinearOp, ResizeOp, GridSampleOp)
"""The family's ops, in the order they were added."""
