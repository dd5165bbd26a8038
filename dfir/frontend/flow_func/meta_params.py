"""`MetaParams`: what `init_flow_func(self, meta_params)` learns about its node and init params.

Each `get_attr_*` getter returns `(ret, value)`: `(FLOW_FUNC_SUCCESS, value)`, or
`(FLOW_FUNC_ERR_ATTR_NOT_EXITS, None)` when no init param has that name, or
`(FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, None)` when it has another type (an int is no float, a bool
no int; an empty list fits every list getter). Types are those of `dfir.core.udf_params`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

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

    def get_attr_int(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "int")

    def get_attr_int_list(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "list_int")

    def get_attr_int_list_list(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "list_list_int")

    def get_attr_bool(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "bool")

    def get_attr_bool_list(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "list_bool")

    def get_attr_float(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "float")

    def get_attr_float_list(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "list_float")

    def get_attr_str(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "str")

    def get_attr_str_list(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "list_str")

    def get_attr_tensor_dtype(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "dtype")

    def get_attr_tensor_dtype_list(self, attr_name: str) -> tuple[int, Any]:
        return self._attr(attr_name, "list_dtype")

    def _attr(self, name: str, tag: str) -> tuple[int, Any]:
        param = self._facts.params.get(name)
        if param is None:
            return FLOW_FUNC_ERR_ATTR_NOT_EXITS, None
        fits = param.tag == tag or (param.tag == "list_empty" and tag.startswith("list_"))
        if not fits:
            return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, None
        return FLOW_FUNC_SUCCESS, copy.deepcopy(param.value)  # the UDF may modify what it gets
