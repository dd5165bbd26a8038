"""`MetaParams`: what `init_flow_func(self, meta_params)` learns about its node and init params.

Each `get_attr_*` getter returns `(ret, value)`: `(FLOW_FUNC_SUCCESS, value)`, or
`(FLOW_FUNC_ERR_ATTR_NOT_EXITS, default)` when no init param has that name, or
`(FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, default)` when it has another type (an int is no float, a bool
no int; an empty list fits every list getter). The defaults are GE's: -1 for an int, False, 0.0,
"" and [] for the others. The dtype getters return numpy types (`np.int32`) as GE's do, and
`(FLOW_FUNC_ERR_ATTR_NOT_EXITS, None)` / `(FLOW_FUNC_ERR_ATTR_NOT_EXITS, [])` for either failure.
Types are those of `dfir.core.udf_params`. `PyMetaParams` is GE's name of the class.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.udf_params import InitParam
from dfir.frontend.flow_func.status import (FLOW_FUNC_ERR_ATTR_NOT_EXITS, FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH,
                                   FLOW_FUNC_SUCCESS)


@dataclass(frozen=True)
class NodeFacts:
    """Where a UDF instance runs: its name, ports, work folder, device and instance."""

    name: str
    input_num: int
    output_num: int
    work_path: str = ""
    device_id: int = -1
    instance_id: int = 0
    instance_num: int = 1
    params: dict[str, InitParam] = field(default_factory=dict)


class MetaParams:
    """The seeds' `MetaParams`, built by the runtime for each UDF instance."""

    def __init__(self, facts: NodeFacts):
        self._facts = facts

    def get_name(self) -> str:
        """The process point's name."""
        return self._facts.name

    def get_input_num(self) -> int:
        return self._facts.input_num

    def get_output_num(self) -> int:
        return self._facts.output_num

    def get_work_path(self) -> str:
        """The UDF's folder: a Python project's unpacked sources, a C++ library's own folder."""
        return self._facts.work_path

    def get_running_device_id(self) -> int:
        """The logical device's device id; -1 on the host."""
        return self._facts.device_id

    def get_running_instance_id(self) -> int:
        return self._facts.instance_id

    def get_running_instance_num(self) -> int:
        return self._facts.instance_num

    def get_attr_int(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "int", -1)

    def get_attr_int_list(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "list_int", [])

    def get_attr_int_list_list(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "list_list_int", [])

    def get_attr_bool(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "bool", False)

    def get_attr_bool_list(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "list_bool", [])

    def get_attr_float(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "float", 0.0)

    def get_attr_float_list(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "list_float", [])

    def get_attr_str(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "str", "")

    def get_attr_str_list(self, name: str) -> tuple[int, Any]:
        return self._attr(name, "list_str", [])

    def get_attr_tensor_dtype(self, name: str) -> tuple[int, Any]:
        """`(FLOW_FUNC_SUCCESS, np.int32)` for a DT_INT32 param, as GE returns a numpy type."""
        ret, value = self._attr(name, "dtype", None)
        if ret != FLOW_FUNC_SUCCESS:
            return FLOW_FUNC_ERR_ATTR_NOT_EXITS, None
        return ret, _numpy_type(value)

    def get_attr_tensor_dtype_list(self, name: str) -> tuple[int, Any]:
        ret, value = self._attr(name, "list_dtype", [])
        if ret != FLOW_FUNC_SUCCESS:
            return FLOW_FUNC_ERR_ATTR_NOT_EXITS, []
        return ret, [_numpy_type(item) for item in value]

    def _attr(self, name: str, tag: str, default: Any) -> tuple[int, Any]:
        param = self._facts.params.get(name)
        if param is None:
            return FLOW_FUNC_ERR_ATTR_NOT_EXITS, default
        fits = param.tag == tag or (param.tag == "list_empty" and tag.startswith("list_"))
        if not fits:
            return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, default
        return FLOW_FUNC_SUCCESS, copy.deepcopy(param.value)  # the UDF may modify what it gets


PyMetaParams = MetaParams


def _numpy_type(dtype: dt.DType) -> type | None:
    """GE's numpy type of a DType (np.bytes_ for DT_STRING); None for one numpy lacks (DT_BF16)."""
    try:
        return dt.to_numpy(dtype).type
    except GeError:
        return None
