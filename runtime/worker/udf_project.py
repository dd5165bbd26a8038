"""The runtime side of UDF projects: `py_project` and `cpp_project` plan nodes as scheduler funcs.

`project_funcs` builds one node's funcs from its plan entry (docs/execution-plan.md):

1. The init params and the node's facts become the UDF's `MetaParams`; the invoked closures
   become GE graph runners that `run_flow_model` reaches by key (`Closures`).
2. py_project: unpack the sources (`dfir.frontend.udf.sources`), build one object of `py_class` per node,
   run its `init_flow_func`, and bind each func to its method (`find_proc`), all in the unit's
   placement (`dfir.frontend.flow_func.running`: what `df.get_running_device_id()` answers).
   cpp_project: refuse a library built for a resource type this host cannot run, load it (once
   per process and content, `_native.load_udf_library`), bind the node's funcs natively and run
   the classes' `Init`. A failing init is a GeError naming the node: the model does not load.
3. Each func becomes a `ProjectCall` (a plain C++ func: its `_native.UdfCaller`): per
   transaction it builds a `MetaRunContext` state, calls the proc (a C++ proc with the GIL
   released, inputs and outputs crossing as buffers), and emits what the proc set if it returned
   FLOW_FUNC_SUCCESS; otherwise its return code, or an exception's FLOW_FUNC_FAILED, becomes the
   transaction's error on every output of the func, with a message naming the node, the func,
   the code and what went wrong (a `UdfCaller` hands such calls to `CppProjectCall.settle`).
"""
from __future__ import annotations

import platform
import queue
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import ABORT_MARK, GeError
from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.frontend.flow_func import running
from dfir.frontend.flow_func.logger import logger
from dfir.frontend.flow_func.meta_params import MetaParams, NodeFacts
from dfir.frontend.flow_func.msg import FlowMsg, is_user_msg_type, typed_object, typed_raw
from dfir.frontend.flow_func.queue import FlowMsgQueue
from dfir.frontend.flow_func.run_context import ExceptionBoard, MetaRunContext, RunState
from dfir.frontend.flow_func.scope import (CallScope, call_scope, current_scope, enter_scope, leave_scope,
                                           note_problem)
from dfir.frontend.flow_func.status import (FLOW_FUNC_ERR_PARAM_INVALID, FLOW_FUNC_ERR_TIME_OUT_ERROR,
                                   FLOW_FUNC_FAILED, FLOW_FUNC_STATUS_EXIT, FLOW_FUNC_SUCCESS, status_name)
from dfir.frontend.flow_func.wrappers import exception_text, find_proc, user_frames
from dfir.frontend.udf.config import host_resource_type
from dfir.frontend.udf.sources import content_folder, load_project_class
from dfir.om.plan import CppProject, Func, GeGraph, Node, Plan, PyProject, SoBin, Unit, device_id
from dfir.om.plan import DEFAULT_CHANNEL_DEPTH
from dfir.runtime import _native
from dfir.runtime.funcs import Cancelled, FuncSpec, OutputSet

RunnerFactory = Callable[[GeGraph, Any], Any]  # (ge_graphs entry, weights) -> object with .run(arrays)
_NO_TRANSACTION = TransactionMeta()  # a call's transaction until it has read an input


@dataclass(frozen=True)
class ProjectEnv:
    """What a model gives its project nodes: the plan's blobs, GE graph runners, the exception
    board every UDF of the model shares."""

    plan: Plan
    udf_payloads: Sequence[bytes | memoryview]
    so_bins: Sequence[bytes | memoryview]
    weights: memoryview | None
    runner_factory: RunnerFactory
    exceptions: ExceptionBoard
    flow_closures: Any = None  # a flow_closures.FlowClosurePorts, in a worker


def project_funcs(env: ProjectEnv, path: str, node: Node, pp: PyProject | CppProject, unit: Unit,
                  instance_num: int) -> tuple[FuncSpec, ...]:
    """The funcs of `unit` (instance `unit.instance` of `instance_num`, on `unit.device`) of
    `node`, plan node `unit.node`, a `py_project` / `cpp_project` node (see the module docstring)."""
    where = f"node '{node.name}'"
    closures = Closures.build(env, where, pp.closures, unit.node)
    facts = NodeFacts(node.name, node.input_num, node.output_num, device_id=device_id(unit.device),
                      instance_id=unit.instance, instance_num=instance_num, params=dict(pp.init_params))
    bind = _bind_python if isinstance(pp, PyProject) else _bind_cpp
    return bind(env, path, where, pp, facts, closures)


def _checked_index(path: str, index: int, items: Sequence, what: str) -> Any:
    if not 0 <= index < len(items):
        raise GeError(f"{path}: {index} is out of range [0, {len(items)}), the model's {what}")
    return items[index]


def _failure_text(node: str, func: str, ret: Any, scope: CallScope) -> str:
    return f"UDF {node}.{func} returned {status_name(ret)}{scope.explanation()}"


def _specs(pp: PyProject | CppProject, make_call: Callable[[Func], "ProjectCall"]) -> tuple[FuncSpec, ...]:
    return tuple(FuncSpec(func.name, func.inputs, func.outputs, func.stream_input, make_call(func))
                 for func in pp.funcs)


# -- invoked closures -----------------------------------------------------------------------------

class Closures:
    """The GE graphs and sub-FlowGraphs a node's UDF may run with `run_flow_model(key, ...)`, by
    key: a GE graph runs on the caller's thread, a sub-FlowGraph on its nodes
    (`dfir.runtime.worker.flow_closures`)."""

    def __init__(self, runners: dict[str, tuple[str, Any]], flows: Mapping[str, Any] | None = None):
        self._runners = runners  # key -> (graph name, runner)
        self._flows = dict(flows or {})  # key -> FlowClosureRunner

    @classmethod
    def build(cls, env: ProjectEnv, where: str, mapping: Mapping[str, int], node_index: int = -1) -> Closures:
        runners = {}
        for key, index in sorted(mapping.items()):
            entry = env.plan.ge_graphs[index]
            try:
                runners[key] = (entry.name, env.runner_factory(entry, env.weights))
            except GeError as error:
                raise GeError(f"{where}: invoked closure '{key}': {error.error_message}") from error
        flows = {}
        if any(c.node == node_index for c in env.plan.closures):
            if env.flow_closures is None:
                raise GeError(f"{where}: its invoked sub-FlowGraphs run only in a loaded model's workers")
            flows = env.flow_closures.runners(node_index)
        return cls(runners, flows)

    def invoke(self, key: str, arrays: list[np.ndarray], timeout_ms: int,
               meta: TransactionMeta | None = None) -> tuple[int, list, str]:
        """`(ret, output arrays, why it failed)` of running closure `key` on `arrays` for the
        transaction `meta`."""
        if key in self._flows:
            return self._flows[key].run(meta or TransactionMeta(), arrays, timeout_ms)
        if key not in self._runners:
            known = sorted([*self._runners, *self._flows])
            return FLOW_FUNC_ERR_PARAM_INVALID, [], (f"no invoked closure is registered as '{key}'; "
                                                     f"the process point has {known}")
        graph, runner = self._runners[key]
        start = time.monotonic()
        try:
            outputs = [np.asarray(array) for array in runner.run(arrays)]
        except Exception as error:  # noqa: BLE001 - kernels raise GeError, numpy its own
            return FLOW_FUNC_FAILED, [], f"GE graph '{graph}' failed: {exception_text(error)}"
        elapsed_ms = (time.monotonic() - start) * 1000
        if 0 <= timeout_ms < elapsed_ms:
            return FLOW_FUNC_ERR_TIME_OUT_ERROR, [], (f"GE graph '{graph}' took {elapsed_ms:.0f} ms, "
                                                      f"more than the timeout of {timeout_ms} ms")
        return FLOW_FUNC_SUCCESS, outputs, ""

    def invoke_native(self, key: str, tensors: list[tuple], timeout_ms: int,
                      meta: TransactionMeta | None = None) -> tuple[int, list, str]:
        """`invoke` for a C++ UDF: tensors in and out as `(dtype number, shape, buffer)`."""
        arrays = [_array(dtype, shape, data) for dtype, shape, data in tensors]
        ret, outputs, problem = self.invoke(key, arrays, timeout_ms, meta)
        return ret, [(dt.from_numpy(a.dtype).dtype, list(a.shape), np.ascontiguousarray(a))
                     for a in outputs], problem


# -- calls ----------------------------------------------------------------------------------------

@dataclass
class ProjectCall:
    """One func of a project node, called once per transaction (see the module docstring)."""

    node: str
    func: str
    outputs: tuple[int, ...]
    stream_input: bool
    exceptions: ExceptionBoard
    closures: Closures

    def __call__(self, inputs: list) -> Iterable[OutputSet]:
        state = self._state(_NO_TRANSACTION)
        scope = CallScope(self.node, self.func)
        return self._emit(self._in_scope(scope, self._run, state, inputs), state, scope)

    def __post_init__(self) -> None:
        self._positions = {port: k for k, port in enumerate(self.outputs)}  # GE's output indexes are the node's

    def _state(self, meta: TransactionMeta) -> RunState:
        return RunState(self.func, self._positions, meta, self.closures.invoke, self.exceptions,
                        zeros=_native.aligned_zeros)

    def _in_scope(self, scope: CallScope, run: Callable[..., Any], *args: Any) -> Any:
        """`run(*args)` (a proc call) in `scope`: its return code, or FLOW_FUNC_FAILED when it raised
        (noted in the scope)."""
        token = enter_scope(scope)
        try:
            return run(*args)
        except Exception as error:  # noqa: BLE001 - a proc's failure fails its transaction only
            scope.note(f"{self.func} raised {exception_text(error)}{user_frames(error)}")
            return FLOW_FUNC_FAILED
        finally:
            leave_scope(token)

    def _run(self, state: RunState, inputs: list) -> Any:
        raise NotImplementedError

    def _emit(self, ret: Any, state: RunState, scope: CallScope) -> list[OutputSet]:
        if state.raised is not None:
            code, context = state.raised
            if not self.exceptions.catching:
                return [self._fail(state.meta, code, f"{ABORT_MARK}UDF {self.node}.{self.func}, which raised "
                                                     f"exception {code} (user context id {context}) in a graph "
                                                     f"that does not catch exceptions: call "
                                                     f"FlowGraph.set_exception_catch(True)")]
            return [self._fail(state.meta, code, f"UDF {self.node}.{self.func} raised exception "
                                                 f"{code} (user context id {context})")]
        if ret != FLOW_FUNC_SUCCESS:
            code = ret if isinstance(ret, int) and not isinstance(ret, bool) and ret else FLOW_FUNC_FAILED
            return [self._fail(state.meta, code, _failure_text(self.node, self.func, ret, scope))]
        return [[(self.outputs[index], self._message(index, out, state.meta))]
                for index, out in state.outputs]

    def _message(self, index: int, out: Any, meta: TransactionMeta) -> Message:
        """The runtime message of an output the proc set (how it was set depends on the kind)."""
        raise NotImplementedError

    def _bad_ret_code(self, index: int, code: int) -> str:
        return f"UDF {self.node}.{self.func} set ret code {status_name(code)} on output {index}"

    def _fail(self, meta: TransactionMeta, code: int, text: str) -> OutputSet:
        failure = Message.failure(meta, code, text)
        return [(port, failure) for port in self.outputs]


def _latest_meta(messages: list[Message]) -> TransactionMeta:
    """The transaction a call's outputs belong to: the latest (highest id) among its inputs."""
    latest = _NO_TRANSACTION
    for message in messages:
        meta = message.meta
        if meta.transaction_id >= latest.transaction_id:
            latest = meta
    return latest


_from_message = FlowMsg.from_message


class _TrackedStream:
    """An input stream that makes the call's transaction the latest one read from it."""

    def __init__(self, stream, state: RunState):
        self._stream = stream
        self._state = state

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        message = self._stream.take(block, timeout)
        if message.meta.transaction_id >= self._state.meta.transaction_id:
            self._state.meta = message.meta
        return message

    def pending(self) -> int:
        return self._stream.pending()


# -- Python projects ------------------------------------------------------------------------------

@dataclass
class PythonProjectCall(ProjectCall):
    method: Callable = None

    def __call__(self, inputs: list) -> Iterable[OutputSet]:
        """A plain proc's call, with as few calls around the proc as it takes (it runs per message);
        a stream-input proc's, as `ProjectCall` makes it."""
        if self.stream_input:
            return super().__call__(inputs)
        state = self._state(_latest_meta(inputs))
        scope = CallScope(self.node, self.func)
        ret = self._in_scope(scope, self.method, MetaRunContext(state), [_from_message(m) for m in inputs])
        if ret == FLOW_FUNC_SUCCESS and state.raised is None:
            ports, output_sets = self.outputs, []
            for index, out in state.outputs:
                if out.get_ret_code():
                    break  # _emit fails it
                output_sets.append([(ports[index], out.to_message("", _native.new_message))])
            else:
                return output_sets
        return self._emit(ret, state, scope)

    def _run(self, state: RunState, inputs: list) -> Any:
        """A stream-input proc (plain ones run in `__call__`)."""
        args = [FlowMsgQueue(_TrackedStream(stream, state), convert=FlowMsg.from_message) for stream in inputs]
        return self.method(MetaRunContext(state), args)

    def _message(self, index: int, out: FlowMsg, meta: TransactionMeta) -> Message:
        code = out.get_ret_code()
        return out.to_message(self._bad_ret_code(index, code) if code else "")


def _bind_python(env: ProjectEnv, path: str, where: str, pp: PyProject, facts: NodeFacts,
                 closures: Closures) -> tuple[FuncSpec, ...]:
    payload = _checked_index(f"{path}.udf", pp.udf, env.udf_payloads, "UDF payloads")
    cls, folder = load_project_class(payload, pp.py_module, pp.py_class, where)
    facts = replace(facts, work_path=str(folder))
    placement = running.Placement(facts.device_id, facts.instance_id, facts.instance_num)
    with running.in_placement(placement):
        try:
            target = cls()
        except Exception as error:  # noqa: BLE001 - a user constructor can raise anything
            raise GeError(f"{where}: constructing {cls.__name__} raised {exception_text(error)}") from error
        _init_python(where, cls, target, facts)

    def call(func: Func) -> ProjectCall:
        attribute = pp.methods.get(func.name) or find_proc(cls, func.name)
        if attribute is None:
            raise GeError(f"{where}: class {cls.__name__} has no method for func '{func.name}'")
        return PythonProjectCall(facts.name, func.name, func.outputs, func.stream_input, env.exceptions,
                                 closures, running.placed(getattr(target, attribute), placement))
    return _specs(pp, call)


def _init_python(where: str, cls: type, target: Any, facts: NodeFacts) -> None:
    init = getattr(target, "init_flow_func", None)
    if init is None:
        return
    scope = CallScope(facts.name, "init_flow_func", facts.instance_id)
    with call_scope(scope):
        try:
            ret = init(MetaParams(facts))
        except Exception as error:  # noqa: BLE001 - an unwrapped init can raise anything
            ret = FLOW_FUNC_FAILED
            scope.note(f"init_flow_func raised {exception_text(error)}")
    if ret != FLOW_FUNC_SUCCESS:
        raise GeError(f"{where}: {cls.__name__}.init_flow_func returned {status_name(ret)}"
                      f"{scope.explanation()}")


# -- C++ projects ---------------------------------------------------------------------------------

_NUMPY_OF_CODE = {getattr(dt, name).dtype: dt.to_numpy(getattr(dt, name)) for name in dt.__all__
                  if name.startswith("DT_") and name not in ("DT_STRING", "DT_BF16")}
_CODE_OF_NUMPY = {numpy_dtype: code for code, numpy_dtype in _NUMPY_OF_CODE.items()}
_TENSOR, _RAW, _EMPTY = 0, 1, 2  # the native tuple's `payload` (runtime/bindings/udf_bindings.cc)
_LOADED: dict[str, Any] = {}  # sha256 -> _native.UdfLibrary
_LOAD_LOCK = threading.Lock()


def _type_numbers() -> dict[int, int]:
    """GE's data type number of each numpy type number that names one of its types (on Linux,
    numpy's `long` and `long long` are both int64)."""
    codes = {}
    for char in np.typecodes["All"]:
        dtype = np.dtype(char)
        for code, numpy_dtype in _NUMPY_OF_CODE.items():
            if dtype == numpy_dtype and dtype.isnative:
                codes[dtype.num] = code
    return codes


_native.configure_udf_messages(Message, TransactionMeta, Kind.TENSOR, Kind.RAW, Kind.EMPTY,
                               {code: np.dtype(numpy_dtype) for code, numpy_dtype in _NUMPY_OF_CODE.items()},
                               tuple(list(Kind).index(kind)
                                     for kind in (Kind.TENSOR, Kind.RAW, Kind.EMPTY, Kind.OBJECT)),
                               _type_numbers(), typed_object, typed_raw)


def _array(dtype: int, shape: Sequence[int], data: Any) -> np.ndarray:
    return np.frombuffer(data, dtype=_NUMPY_OF_CODE[dtype]).reshape(shape)


@dataclass
class CppProjectCall(ProjectCall):
    """A func of a C++ project node: a stream-input proc runs here; a plain one natively
    (`_native.UdfCaller`, which hands a call that did not succeed cleanly to `settle`)."""

    instance: Any = None  # a _native.UdfInstance

    def native_caller(self) -> Any:
        """The `_native.UdfCaller` of a plain func: its `FuncSpec.run`, and what workers fire."""
        return _native.UdfCaller(self.instance, self.func, list(self.outputs), self.exceptions.raised,
                                 self.closures.invoke_native, self.settle)

    def settle(self, result: tuple | None, error: Exception | None = None) -> list[OutputSet]:
        """The output sets of a plain proc call that did not succeed cleanly: `result` as a native
        call returns it, or None with the `error` that kept the proc from running."""
        scope = CallScope(self.node, self.func)
        if result is None:
            scope.note(f"{self.func} raised {exception_text(error)}{user_frames(error)}")
            return self._emit(FLOW_FUNC_FAILED, self._state(_NO_TRANSACTION), scope)
        state = self._state(result[4])  # the latest input's transaction
        with call_scope(scope):
            ret = self._settle(state, state.meta, result)
        return self._emit(ret, state, scope)

    def _run(self, state: RunState, inputs: list) -> Any:
        """A stream-input proc (only those run through `ProjectCall.__call__`)."""
        return self._run_stream(state, inputs)

    def _run_stream(self, state: RunState, streams: list) -> Any:
        """A stream-input proc: its FlowMsgQueues take from `streams` (one per input) through `take`;
        the call belongs to the latest transaction it read (`_TrackedStream`)."""
        tracked = [_TrackedStream(stream, state) for stream in streams]
        closed = []

        def take(j: int, timeout_ms: int) -> tuple:
            try:
                message = tracked[j].take(True, None if timeout_ms < 0 else timeout_ms / 1000)
            except queue.Empty:
                return FLOW_FUNC_ERR_TIME_OUT_ERROR, None
            except Cancelled:
                closed.append(True)
                return FLOW_FUNC_STATUS_EXIT, None
            try:
                return FLOW_FUNC_SUCCESS, _native_message(j, message)
            except GeError as error:
                note_problem(f"FlowMsgQueue {j}: {error.error_message}")
                return FLOW_FUNC_FAILED, None

        meta = state.meta
        result = self.instance.proc_stream(
            self.func, list(self.outputs), len(streams), DEFAULT_CHANNEL_DEPTH, take, lambda j: tracked[j].pending(),
            (meta.transaction_id, meta.start_time, meta.end_time, meta.flow_flags), meta.user_data, None,
            lambda key, tensors, timeout: self.closures.invoke_native(key, tensors, timeout, state.meta))
        if closed:
            raise Cancelled
        return self._settle(state, state.meta, result)

    def _settle(self, state: RunState, meta: TransactionMeta, result: tuple) -> Any:
        """Record what a native call returned (problems, an exception, outputs, the last error it
        logged) in the current scope; its return code."""
        ret, outputs, problems, raised, _, last_error = result
        for problem in problems:
            note_problem(problem)
        if last_error:
            current_scope().last_error = last_error
        if raised is not None:
            state.raised = raised
            self.exceptions.raise_exception(meta.transaction_id, *raised)
        state.outputs.extend(outputs)
        return ret

    def _message(self, index: int, out: Message | tuple, meta: TransactionMeta) -> Message:
        """An output the proc set (a Message; a stream-input proc's: a native tuple) as the runtime
        message it emits: an output with a return code becomes the transaction's failure."""
        if type(out) is tuple:
            out = _tuple_message(out, meta)
        if out.ret_code:
            return Message.failure(out.meta, out.ret_code, self._bad_ret_code(index, out.ret_code))
        return out


def _tuple_message(out: tuple, meta: TransactionMeta) -> Message:
    """A native output tuple as a runtime message (its return code kept); its data stay where the
    library wrote them."""
    payload, msg_type, dtype, shape, data, ret_code, tid, start, end, flags, route, label = out
    if (tid, start, end, flags) != (meta.transaction_id, meta.start_time, meta.end_time, meta.flow_flags):
        meta = TransactionMeta(tid, start, end, flags, meta.user_data)
    if payload == _TENSOR:
        kind, array = Kind.TENSOR, _array(dtype, shape, data)
    elif payload == _RAW and is_user_msg_type(msg_type):
        kind, array = Kind.OBJECT, typed_object(msg_type, data)
    elif payload == _RAW:
        kind, array = Kind.RAW, np.frombuffer(data, dtype=np.uint8)
    else:
        kind, array = Kind.EMPTY, None
    return Message(meta, kind, array, ret_code, route_label=route, data_label=label)


def _native_message(position: int, message: Message) -> tuple:
    """A runtime message as the native tuple of a stream-input call (runtime/bindings/
    udf_bindings.cc), not copied."""
    kind, meta, data, dtype, msg_type = message.kind, message.meta, None, -1, 0
    typed = typed_raw(message.payload) if kind is Kind.OBJECT else None
    if typed is not None:
        msg_type, data = typed
        payload, data = _RAW, np.frombuffer(bytearray(data), dtype=np.uint8)
    elif kind is Kind.TENSOR or kind is Kind.RAW:
        data = message.payload if message.payload.flags.c_contiguous else np.ascontiguousarray(message.payload)
        if kind is Kind.TENSOR and data.dtype not in _CODE_OF_NUMPY:
            raise GeError(f"input {position} is a {data.dtype} tensor, which a C++ UDF cannot take")
        dtype = _CODE_OF_NUMPY.get(data.dtype, -1)
        payload = _TENSOR if kind is Kind.TENSOR else _RAW
        msg_type = 1 if kind is Kind.RAW else 0
    elif kind is Kind.EMPTY:
        payload = _EMPTY
    else:
        raise GeError(f"input {position} is a {kind.value} message; a C++ UDF takes tensors, raw data "
                      f"and empty messages")
    return (payload, msg_type, dtype, data.shape if kind is Kind.TENSOR else None,
            data, message.ret_code, meta.transaction_id, meta.start_time, meta.end_time,
            meta.flow_flags, message.route_label, message.data_label)


def _bind_cpp(env: ProjectEnv, path: str, where: str, pp: CppProject, facts: NodeFacts,
              closures: Closures) -> tuple[FuncSpec, ...]:
    so = env.plan.so_bins[pp.so]
    data = _checked_index(f"{path}.so", pp.so, env.so_bins, "SO_BINS partitions")
    _check_resource_type(where, so)
    library, folder = _library(so, data)
    facts = replace(facts, work_path=folder)
    params = [(name, param.tag, _native_value(param.value)) for name, param in sorted(facts.params.items())]
    node_facts = {"name": facts.name, "input_num": facts.input_num, "output_num": facts.output_num,
                  "work_path": facts.work_path, "device_id": facts.device_id,
                  "instance_id": facts.instance_id, "instance_num": facts.instance_num}
    instance = _native.UdfInstance(library, node_facts, params, [func.name for func in pp.funcs])
    scope = CallScope(facts.name, "Init", facts.instance_id)
    with call_scope(scope):
        ret, problem = instance.init()
    if ret != FLOW_FUNC_SUCCESS:
        if problem:
            scope.note(problem)
        raise GeError(f"{where}: Init of C++ UDF library {so.name} returned {status_name(ret)}"
                      f"{scope.explanation()}")

    def call(func: Func) -> Any:
        project_call = CppProjectCall(facts.name, func.name, func.outputs, func.stream_input, env.exceptions,
                                      closures, instance)
        return project_call if func.stream_input else project_call.native_caller()
    return _specs(pp, call)


def _check_resource_type(where: str, so: SoBin) -> None:
    host = host_resource_type()
    if so.resource_type != host:
        raise GeError(f"{where}: C++ UDF library {so.name} is built for resource type "
                      f"{so.resource_type}, which cannot run on this host ({platform.machine()}, "
                      f"resource type {host or 'unknown'})")


def _library(so: SoBin, data: bytes | memoryview) -> tuple[Any, str]:
    """The loaded library of a `so_bins` entry (loaded once per process and content) and its work
    folder (one per content, `dfir.frontend.udf.sources.content_folder`)."""
    with _LOAD_LOCK:
        if so.sha256 not in _LOADED:
            _LOADED[so.sha256] = _native.load_udf_library(data, so.name)
            _native.set_udf_log_handler(_log_native_record)
        library = _LOADED[so.sha256]
    return library, str(content_folder(f"{so.sha256}.work"))


def _native_value(value: Any) -> Any:
    if isinstance(value, dt.DType):
        return value.dtype
    if isinstance(value, list):
        return [_native_value(item) for item in value]
    return value


_NATIVE_LOG = {0: logger.debug, 1: logger.info, 2: logger.warn, 3: logger.error, 4: logger.event}


def _log_native_record(level: int, node: str, func: str, instance: int, text: str) -> None:
    """A C++ UDF's log record, logged like a Python UDF's (`dfir.frontend.flow_func.logger`), in the scope
    of the call that made it (so its last error explains a failure)."""
    emit = _NATIVE_LOG.get(level, logger.info)
    scope = current_scope()
    if scope is not None and (scope.node, scope.func) == (node, func):
        emit("%s", text)
        return
    with call_scope(CallScope(node, func, instance)):
        emit("%s", text)
