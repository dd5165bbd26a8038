"""`MetaRunContext`: what a proc call uses to allocate messages, emit outputs and run models.

The runtime builds one per proc call. Outputs are collected during the call and emitted when it
returns `FLOW_FUNC_SUCCESS`; a call that returns another code emits that code as its
transaction's error on every output of the func instead (what it set is dropped). An output
index is the node's, as in GE: one of the func's own outputs (`outputs_index` of its compile
config entry); a func with outputs_index [1] sets output 1.

Calls with bad arguments follow the seeds: `set_output`, `set_multi_outputs` and `run_flow_model`
return `FLOW_FUNC_ERR_PARAM_INVALID` (and note why, for the transaction's error message); the
`alloc_*` calls raise a GeError (a TypeError for a dtype, as GE's), which the wrappers turn into
`FLOW_FUNC_FAILED`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.flow_info import FlowInfo
from dfir.core.messages import Kind, TransactionMeta
from dfir.core.tensor import Tensor as UserTensor
from dfir.frontend.flow_func.balance import BalanceConfig, BalanceError
from dfir.frontend.flow_func.msg import FlowMsg, MsgType
from dfir.frontend.flow_func.scope import note_problem
from dfir.frontend.flow_func.status import FLOW_FUNC_ERR_PARAM_INVALID, FLOW_FUNC_SUCCESS
from dfir.frontend.flow_func.tensor import Tensor, aligned_zeros

MAX_ALIGN = 4096
MAX_USER_DATA_SIZE = 64  # GE's: the bytes of user data a transaction carries (`get_user_data`)
_TENSORS = (Tensor, UserTensor, np.ndarray)

# (key, arrays, timeout ms, the calling transaction) -> (ret, output arrays, why it failed)
ClosureInvoker = Callable[[str, list[np.ndarray], int, TransactionMeta], tuple[int, list[np.ndarray], str]]
# (shape, numpy dtype, align) -> a zero-filled array whose data start on an `align`-byte boundary
ZerosAllocator = Callable[[Sequence[int], np.dtype, int], np.ndarray]


class ExceptionBoard:
    """The exceptions UDFs raised (`raise_exception`), by transaction id; one per model.

    `raised` maps a transaction id to (code, user context id); reading it needs no lock (one
    dict read is atomic under the GIL), so a native caller reads it once per call."""

    def __init__(self, catching: bool = True):
        self._lock = threading.Lock()
        self.raised: dict[int, tuple[int, int]] = {}
        self.catching = catching  # the graph's set_exception_catch: without it, raising stops the model

    def raise_exception(self, transaction_id: int, code: int, user_context_id: int) -> None:
        with self._lock:
            self.raised[transaction_id] = (code, user_context_id)

    def get(self, transaction_id: int) -> tuple[int, int] | None:
        return self.raised.get(transaction_id)


@dataclass(slots=True)
class RunState:
    """One proc call as the runtime sets it up and reads it back afterwards."""

    func: str
    positions: dict[int, int]  # the node output index of each output of the func -> its position
    meta: TransactionMeta
    invoke: ClosureInvoker
    exceptions: ExceptionBoard
    # (position among the func's outputs, what the proc set): a FlowMsg from a Python proc, a
    # native message tuple from a C++ one (runtime/worker/udf_project.py turns each into a
    # runtime message)
    outputs: list[tuple[int, Any]] = field(default_factory=list)
    raised: tuple[int, int] | None = None
    zeros: ZerosAllocator = aligned_zeros  # what `alloc_*` fill (a runtime may give a native one)


class MetaRunContext:
    """The seeds' `MetaRunContext` (see the module docstring)."""

    __slots__ = ("_state",)

    def __init__(self, state: RunState):
        self._state = state

    # -- allocation -----------------------------------------------------------------------------

    def alloc_tensor_msg(self, shape: Sequence[int], dtype, align: int = 64) -> FlowMsg:
        """A zero-filled tensor message of the current transaction; fill `get_tensor().numpy()`.

        `dtype` is a DType (`DT_INT32`) or, as in GE, a numpy type (`np.int32`, `np.dtype("int32")`,
        what `Tensor.get_data_type()` returns); anything else is a TypeError."""
        _check_align("alloc_tensor_msg", align)
        if not _is_shape(shape):
            raise GeError(f"alloc_tensor_msg: shape must be a list of ints >= 0, got {shape!r}")
        numpy_dtype = _NUMERIC.get(dtype.dtype) if isinstance(dtype, dt.DType) else _numpy_dtype(dtype)
        if numpy_dtype is None:
            raise TypeError(f"alloc_tensor_msg: dtype must be a numeric DType such as DT_INT32 or a numpy "
                            f"type such as np.int32, got {dtype!r}")
        state = self._state
        return FlowMsg.of_array(state.zeros(shape, numpy_dtype, align), state.meta)

    def alloc_raw_data_msg(self, size: int, align: int = 64) -> FlowMsg:
        """A zero-filled raw data message of `size` bytes; fill `get_raw_data()`."""
        _check_align("alloc_raw_data_msg", align)
        if not _is_int(size) or size < 0:
            raise GeError(f"alloc_raw_data_msg: size must be an int >= 0, got {size!r}")
        return FlowMsg(Kind.RAW, self._state.zeros([size], np.dtype(np.uint8), align), self._state.meta)

    def alloc_empty_data_msg(self, msg_type: MsgType = MsgType.TENSOR_DATA) -> FlowMsg:
        """A message without data (e.g. to pass on an end-of-stream flag)."""
        return FlowMsg(Kind.EMPTY, None, self._state.meta, msg_type=msg_type)

    def to_flow_msg(self, tensor: Tensor | UserTensor | np.ndarray) -> FlowMsg:
        """A tensor message of the current transaction holding `tensor` (not copied)."""
        if not isinstance(tensor, _TENSORS):
            raise GeError(f"to_flow_msg: expected a Tensor or numpy array, got {type(tensor).__name__}")
        return FlowMsg(Kind.TENSOR, tensor, self._state.meta)

    # -- outputs --------------------------------------------------------------------------------

    def set_output(self, index: int, output, balance_config: BalanceConfig | None = None) -> int:
        """Emit `output` (a FlowMsg, Tensor or array) on the node's output `index`, one of this func's."""
        position = self._state.positions.get(index) if type(index) is int else None
        if balance_config is None and type(output) is FlowMsg and position is not None:  # the common case
            self._state.outputs.append((position, output))
            return FLOW_FUNC_SUCCESS
        return self._set("set_output", index, [output], balance_config)

    def set_multi_outputs(self, index: int, outputs: Sequence, balance_config: BalanceConfig) -> int:
        """Emit each of `outputs` on output `index`, routed by `balance_config`'s data positions."""
        if not isinstance(outputs, (list, tuple)) or not outputs:
            return _invalid(f"set_multi_outputs: expected a non-empty list of messages, got {outputs!r}")
        if balance_config is None:
            return _invalid("set_multi_outputs: a balance_config is required")
        return self._set("set_multi_outputs", index, list(outputs), balance_config)

    def _set(self, api: str, index: int, msgs: list, balance_config: BalanceConfig | None) -> int:
        positions = self._state.positions
        position = positions.get(index) if _is_int(index) else None
        if position is None:
            return _invalid(f"{api}: output index {index!r} is not an output of func '{self._state.func}'; its "
                            f"outputs are {list(positions)}")
        converted = []
        for msg in msgs:
            if isinstance(msg, _TENSORS):
                msg = self.to_flow_msg(msg)
            if not isinstance(msg, FlowMsg):
                return _invalid(f"{api}: expected a FlowMsg, Tensor or numpy array, got "
                                f"{type(msg).__name__}")
            converted.append(msg)
        if balance_config is not None:
            if not isinstance(balance_config, BalanceConfig):
                return _invalid(f"{api}: balance_config must be a BalanceConfig, got "
                                f"{type(balance_config).__name__}")
            try:
                labels = balance_config.labels(len(converted))
            except BalanceError as error:
                return _invalid(f"{api}: {error}")
            for msg, (data_label, route_label) in zip(converted, labels):
                msg.set_labels(data_label, route_label)
        self._state.outputs.extend((position, msg) for msg in converted)
        return FLOW_FUNC_SUCCESS

    # -- invoked models -------------------------------------------------------------------------

    def run_flow_model(self, model_key: str, input_msgs: Sequence[FlowMsg],
                       timeout: int) -> tuple[int, list[FlowMsg]]:
        """Run the model registered with `add_invoked_closure(model_key, ...)` on tensor messages.

        Returns `(FLOW_FUNC_SUCCESS, one tensor message per model output)`, or `(code, [])`:
        ERR_PARAM_INVALID for bad arguments or an unknown key, ERR_TIME_OUT_ERROR when the model
        took longer than `timeout` ms (-1: no limit), FAILED when the model failed.
        """
        if not _is_int(timeout) or timeout < -1:
            return _invalid(f"run_flow_model: timeout must be -1 or a number of milliseconds >= 0, "
                            f"got {timeout!r}"), []
        arrays = []
        for position, msg in enumerate(input_msgs):
            tensor = msg.get_tensor() if isinstance(msg, FlowMsg) else None
            if tensor is None:
                return _invalid(f"run_flow_model: input {position} must be a tensor FlowMsg, got "
                                f"{msg!r}"), []
            arrays.append(tensor.numpy())
        ret, outputs, problem = self._state.invoke(model_key, arrays, timeout, self._state.meta)
        if ret != FLOW_FUNC_SUCCESS:
            note_problem(f"run_flow_model('{model_key}'): {problem}")
            return ret, []
        return ret, [FlowMsg(Kind.TENSOR, array, self._state.meta) for array in outputs]

    # -- transaction metadata -------------------------------------------------------------------

    def get_user_data(self, size: int, offset: int = 0) -> bytearray:
        """`size` bytes at `offset` of the transaction's user data (FlowInfo.set_user_data)."""
        info = FlowInfo()
        if self._state.meta.user_data:
            info.set_user_data(self._state.meta.user_data)
        return info.get_user_data(size, offset)

    def raise_exception(self, exception_code: int, user_context_id: int) -> None:
        """Fail the current transaction with `exception_code`, and let `get_exception` of any UDF see it."""
        self._state.raised = (int(exception_code), int(user_context_id))
        self._state.exceptions.raise_exception(self._state.meta.transaction_id, *self._state.raised)

    def get_exception(self) -> tuple[bool, int, int]:
        """`(True, code, user_context_id)` when a UDF raised one for this transaction, else
        `(False, 0, 0)`."""
        raised = self._state.exceptions.get(self._state.meta.transaction_id)
        return (False, 0, 0) if raised is None else (True, *raised)


def _invalid(problem: str) -> int:
    note_problem(problem)
    return FLOW_FUNC_ERR_PARAM_INVALID


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_shape(shape) -> bool:
    """Whether `shape` is a list or tuple of ints >= 0 (bools are not ints here)."""
    if not isinstance(shape, (list, tuple)):
        return False
    for d in shape:  # a loop: a generator costs more than the check on the per-message path
        if not _is_int(d) or d < 0:
            return False
    return True


# The numpy dtype of each numeric DType that numpy has, by GE's type number (alloc_tensor_msg
# looks them up: an int key hashes faster than a DType).
_NUMERIC = {dtype.dtype: dt.to_numpy(dtype)
            for dtype in (dt.from_name(name) for name in dt.__all__ if name.startswith("DT_"))
            if dtype != dt.DT_STRING and dtype != dt.DT_BF16}


# The numpy types GE's alloc_tensor_msg takes besides a DType.
_NUMPY_TYPES = {np.dtype(t) for t in (np.float32, np.float16, np.int8, np.int16, np.uint16, np.uint8, np.int32,
                                      np.int64, np.uint32, np.uint64, np.bool_, np.float64)}


def _numpy_dtype(dtype) -> np.dtype | None:
    """The numpy dtype of a numpy type or dtype GE's alloc_tensor_msg takes; None for anything else
    (strings such as "int32" included, as in GE)."""
    if isinstance(dtype, np.dtype) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        numpy_dtype = np.dtype(dtype)
        return numpy_dtype if numpy_dtype in _NUMPY_TYPES else None
    return None


def _check_align(api: str, align: int) -> None:
    if align == 64 and type(align) is int:  # the default
        return
    if not _is_int(align) or not 0 < align <= MAX_ALIGN or align & (align - 1):
        raise GeError(f"{api}: align must be a power of two in [1, {MAX_ALIGN}], got {align!r}")
