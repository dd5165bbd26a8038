"""Typed init params in the IR: the `init_params` property of `df.func_pp`, builtin attributes only.

    init_params = {count = 3 : i64, scale = 5.000000e-01 : f64, on = true, name = "add",
                   out_type = #df.dtype<DT_INT32>, dims = [[1 : i64, 2 : i64], []]}

An int is an i64 `IntegerAttr`, a float an f64 `FloatAttr`, a bool an i1 (`true`/`false`), a str
a `StringAttr`, a DType `#df.dtype<DT_*>`, a list an `ArrayAttr`. Decoding gives back the
`InitParam` (type tag and value) that `dfir.core.udf_params` describes.
"""
from __future__ import annotations

from xdsl.dialects.builtin import (ArrayAttr, BoolAttr, DictionaryAttr, FloatAttr, IntegerAttr,
                                   IntegerType, StringAttr, f64, i64)
from xdsl.ir import Attribute

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.udf_params import InitParam
from dfir.dialects.df_attrs import DTypeAttr


def params_attr(params: dict[str, InitParam]) -> DictionaryAttr:
    """The `init_params` property for `params` (sorted by name)."""
    return DictionaryAttr({name: _attr(params[name].value) for name in sorted(params)})


def params_of(attr: DictionaryAttr) -> dict[str, InitParam]:
    """The params an `init_params` property holds; ValueError naming a param that has no type."""
    return {name: _decode(name, value) for name, value in attr.data.items()}


def _attr(value) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f64)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, dt.DType):
        return DTypeAttr(value.name)
    if isinstance(value, list):
        return ArrayAttr([_attr(item) for item in value])
    raise GeError(f"init param value {value!r} has no IR form")


def _decode(name: str, attr: Attribute) -> InitParam:
    if isinstance(attr, ArrayAttr):
        return _decode_list(name, list(attr.data))
    tag, value = _scalar(attr)
    if tag is None:
        raise ValueError(f"init param '{name}' is {attr}, which is no init param value (an "
                         f"integer, float, bool, string, #df.dtype<DT_*> or a list)")
    return InitParam(tag, value)


def _decode_list(name: str, items: list[Attribute]) -> InitParam:
    if not items:
        return InitParam("list_empty", [])
    if all(isinstance(item, ArrayAttr) for item in items):
        rows = [_decode_list(name, list(item.data)) for item in items]
        if all(row.tag in ("list_int", "list_empty") for row in rows):
            return InitParam("list_list_int", [row.value for row in rows])
    else:
        decoded = [_scalar(item) for item in items]
        tags = {tag for tag, _ in decoded}
        if len(tags) == 1 and None not in tags:
            return InitParam(f"list_{tags.pop()}", [value for _, value in decoded])
    raise ValueError(f"init param '{name}' list {ArrayAttr(items)} must hold values of one type "
                     f"(or lists of integers)")


def _scalar(attr: Attribute) -> tuple[str | None, object]:
    if isinstance(attr, IntegerAttr) and isinstance(attr.type, IntegerType):
        if attr.type.width.data == 1:
            return "bool", bool(attr.value.data)
        return "int", attr.value.data
    if isinstance(attr, FloatAttr):
        return "float", float(attr.value.data)
    if isinstance(attr, StringAttr):
        return "str", attr.data
    if isinstance(attr, DTypeAttr):
        try:
            return "dtype", dt.from_name(attr.dtype_name.data)
        except GeError:
            return None, None
    return None, None
