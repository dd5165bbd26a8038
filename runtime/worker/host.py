"""The Python host: turns an execution plan's nodes into the funcs the scheduler runs.

A `py_udf` node becomes one `FuncSpec` per entry point of its `UdfPayload` (the function, or the
methods of one class instance built here, once per node); a `ge_graph` node becomes one func that
runs the graph with `GeGraphRunner` (the reference kernels), `OrtGraphRunner` (its ONNX model on
onnxruntime) or, for a graph compiled by IREE, `IreeGraphRunner` on the node instance's device; a `py_project` / `cpp_project` node (a UDF project) gets its
funcs from `dfir.runtime.worker.udf_project`. Each func converts input messages to the values the user
code expects, calls it, and turns what it returns (or raises) into output messages of the same
transaction — see `UdfCall` and `GeGraphCall` for the exact rules.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Collection, Iterable, Iterator, NamedTuple, Sequence

from dfir.core import udf_payload as udf
from dfir.core.backends import ONNXRUNTIME, REFERENCE
from dfir.core.errors import ABORT_MARK, DfAbortException, DfException, GeError
from dfir.core.messages import Kind, Message, MessageError, TransactionMeta, udf_argument
from dfir.frontend.flow_func import running
from dfir.frontend.flow_func.queue import FlowMsgQueue
from dfir.frontend.flow_func.status import FLOW_FUNC_FAILED
from dfir.frontend.flow_func.wrappers import user_frames
from dfir.om.plan import (ClosureRef, CppProject, DataRef, Executable, GeGraph, GraphPoint, Node, Plan, PyProject,
                          PyUdf, Ref, Unit, device_id)
from dfir.runtime.funcs import FuncSpec, InputStream, NodeSpec, OutputSet, Source
from dfir.runtime.ge.graph_runner import GeGraphRunner
from dfir.runtime.ge.iree_runner import IreeGraphRunner
from dfir.runtime.ge.ort_runner import OrtGraphRunner
from dfir.runtime.worker.batching import BatchPoint, batch_funcs, with_batch_nodes
from dfir.runtime.worker.udf_project import ExceptionBoard, ProjectEnv, project_funcs

RunnerFactory = Callable[[GeGraph, Any], Any]  # (ge_graphs entry, weights) -> object with .run(arrays)
CompiledGraph = tuple[Executable, "bytes | memoryview"]  # an `executables` entry and its partition


def load_ge_runner(entry: GeGraph, weights: memoryview | None, executables: Sequence[CompiledGraph] = (),
                   device: str = "-1") -> Any:
    """The runner of one `ge_graphs` entry, by its `backend`: the reference kernels, its ONNX
    model on onnxruntime, or its IREE executable on logical device `device`
    (`executables[entry.executable]`)."""
    if entry.backend == REFERENCE:
        return GeGraphRunner(entry, weights)
    meta, code = _checked_index(f"GE graph '{entry.name}': executable", entry.executable, executables,
                                "GE executables")
    if entry.backend == ONNXRUNTIME:
        return OrtGraphRunner(entry, code, weights)
    return IreeGraphRunner(entry, code, meta.sha256, device, weights, threads=entry.threads)


InstanceRef = Unit
"""What a worker builds: one instance of a plan node (`node`, `instance`, `device`), a `units`
entry of the plan (with its batch nodes: `batching.with_batch_nodes`)."""


def build_nodes(plan: Plan | dict, udf_payloads: Sequence[bytes | memoryview], weights: memoryview | None,
                runner_factory: RunnerFactory | None = None,
                so_bins: Sequence[bytes | memoryview] = (),
                only: Collection[int | InstanceRef] | None = None, flow_closures=None,
                executables: Sequence[bytes | memoryview] = ()) -> list[NodeSpec]:
    """One `NodeSpec` per node of `plan` (a `Plan`, or its JSON, validated), in plan order.

    `so_bins` are the model's SO_BINS partitions (C++ UDF libraries) and `executables` its
    GE_EXECUTABLE partitions, in order. GE graphs (a node's, or a UDF's invoked closures) run
    on `runner_factory`'s runners, by default `load_ge_runner`'s on the unit's device. With
    `only`, just those are built (a device worker builds its own), in the order given: a node
    index builds the node's instance 0, a `Unit` (of `plan.units`) that unit. A UDF project's
    `MetaParams` tell each instance its unit's device, instance id and its node's count of
    units. `flow_closures` (a `flow_closures.FlowClosurePorts`; a worker's) runs the
    sub-FlowGraphs UDFs invoke; without it, a plan with flow closures cannot be built. A plan's
    batched inputs get their batch nodes first (`batching.with_batch_nodes`: indexes in `only`
    count those).
    """
    plan = with_batch_nodes(Plan.of(plan))
    payloads = _PickledPayloads(udf_payloads)
    compiled = list(zip(plan.executables, executables))
    board = ExceptionBoard(catching=plan.exception_catch)
    units = plan.units
    first = {unit.node: unit for unit in units if unit.instance == 0}
    last = {unit.node: unit for unit in units}  # units list a node's instances in order
    selection = [first[n] for n in range(len(plan.nodes))] if only is None else [
        unit if isinstance(unit, Unit) else first[unit] for unit in only]
    running.register(_placement(unit, last[unit.node].instance + 1) for unit in selection
                     if isinstance(plan.nodes[unit.node].pp, (PyUdf, PyProject)))
    nodes = []
    for unit in selection:
        factory = runner_factory or partial(load_ge_runner, executables=compiled, device=unit.device)
        projects = ProjectEnv(plan, udf_payloads, so_bins, weights, factory, board, flow_closures)
        nodes.append(_build_node(plan, unit, last[unit.node].instance + 1, payloads, weights, factory, projects))
    return nodes


class ModelParts(NamedTuple):
    """What a model's workers are built from: its plan and the partitions that plan refers to."""

    plan: Plan
    udf_payloads: Sequence[bytes | memoryview]
    weights: memoryview | None
    so_bins: Sequence[bytes | memoryview] = ()
    executables: Sequence[bytes | memoryview] = ()

    def build(self, only: Collection[int | InstanceRef], flow_closures) -> list[NodeSpec]:
        """`build_nodes` of these parts (a worker's `NodeBuilder`)."""
        return build_nodes(self.plan, self.udf_payloads, self.weights, so_bins=self.so_bins, only=only,
                           flow_closures=flow_closures, executables=self.executables)


def plan_sources(refs: Sequence[Ref]) -> tuple[Source, ...]:
    """Plan refs as scheduler `Source`s."""
    return tuple(_source(ref) for ref in refs)


def _source(ref: Ref) -> Source:
    if isinstance(ref, DataRef):
        return Source(None, ref.data)
    if isinstance(ref, ClosureRef):
        return Source(None, ref.input, ref.closure)
    return Source(ref.node, ref.port)


class _PickledPayloads(Sequence):
    """The model's UDF payloads as `UdfPayload`s, each unpickled when a py_udf node first needs it
    (a UDF project's payload is packed sources, read by runtime/worker/udf_project.py instead)."""

    def __init__(self, blobs: Sequence[bytes | memoryview]):
        self._blobs = blobs
        self._loaded: dict[int, udf.UdfPayload] = {}

    def __len__(self) -> int:
        return len(self._blobs)

    def __getitem__(self, index: int) -> udf.UdfPayload:
        if index not in self._loaded:
            self._loaded[index] = _load_payload(index, self._blobs[index])
        return self._loaded[index]


def _load_payload(index: int, data: bytes | memoryview) -> udf.UdfPayload:
    try:
        return udf.loads(data)
    except Exception as exc:  # noqa: BLE001 - unpickling runs user imports and can raise anything
        raise GeError(f"UDF payload {index} cannot be loaded: {type(exc).__name__}: {exc}") from exc


def _build_node(plan: Plan, unit: Unit, instance_num: int, payloads: Sequence[udf.UdfPayload],
                weights: memoryview | None, runner_factory: RunnerFactory, projects: ProjectEnv) -> NodeSpec:
    """Unit `unit` (of `instance_num` its node runs) of `plan`."""
    path, node = f"plan.nodes[{unit.node}]", plan.nodes[unit.node]
    pp = node.pp
    if isinstance(pp, PyUdf):
        funcs = _udf_funcs(f"{path}.pp", node, pp, payloads, _placement(unit, instance_num))
    elif isinstance(pp, GraphPoint):
        funcs = _ge_funcs(plan.ge_graphs[pp.graph], node, weights, runner_factory)
    elif isinstance(pp, BatchPoint):
        funcs = batch_funcs(node, pp)
    else:
        assert isinstance(pp, (PyProject, CppProject))
        funcs = project_funcs(projects, f"{path}.pp", node, pp, unit, instance_num)
    return NodeSpec(node.name, plan_sources(node.inputs), node.output_num, funcs)


def _checked_index(path: str, index: int, items: Sequence, what: str) -> Any:
    if not 0 <= index < len(items):
        raise GeError(f"{path}: {index} is out of range [0, {len(items)}), the model's {what}")
    return items[index]


# -- Python UDFs ----------------------------------------------------------------------------------

def _placement(unit: Unit, instance_num: int) -> running.Placement:
    return running.Placement(device_id(unit.device), unit.instance, instance_num)


def _udf_funcs(path: str, node: Node, pp: PyUdf, payloads: Sequence[udf.UdfPayload],
               placement: running.Placement) -> tuple[FuncSpec, ...]:
    payload = _checked_index(f"{path}.udf", pp.udf, payloads, "UDF payloads")
    target, placement = running.build_placed(payload.target, placement, lambda: _instantiate(node.name, payload))
    specs = []
    for func in pp.funcs:
        name, outputs = func.name, func.outputs
        num_returns = payload.num_returns.get(name, len(outputs))
        if num_returns != len(outputs):
            raise GeError(f"node '{node.name}' func '{name}' has num_returns {num_returns} but "
                          f"the plan maps {len(outputs)} outputs to it")
        call = UdfCall(node.name, name, running.placed(_entry_point(node.name, payload, target, name), placement),
                       outputs, func.stream_input, payload.is_generator(name),
                       payload.choice_output.get(name))
        specs.append(FuncSpec(name, func.inputs, outputs, func.stream_input, call))
    return tuple(specs)


def _instantiate(node_name: str, payload: udf.UdfPayload) -> Any:
    """The function itself, or the node's instance of the class (built once, here)."""
    if payload.kind == "function":
        return payload.target
    if payload.kind != "class":
        raise GeError(f"node '{node_name}' has a UDF payload of kind '{payload.kind}'; "
                      f"expected 'function' or 'class'")
    try:
        return payload.target(*payload.args, **payload.kwargs)
    except Exception as exc:  # noqa: BLE001 - a user constructor can raise anything
        raise GeError(f"node '{node_name}': constructing {payload.target.__name__} raised "
                      f"{type(exc).__name__}: {exc}") from exc


def _entry_point(node_name: str, payload: udf.UdfPayload, target: Any, name: str) -> Callable:
    if payload.kind == "function":
        return target
    method = getattr(target, name, None)
    if not callable(method):
        raise GeError(f"node '{node_name}' maps func '{name}', but class "
                      f"{type(target).__name__} has no method of that name")
    return method


class _BadResult(Exception):
    """A UDF's return value does not fit its outputs; the message says how."""


@dataclass
class UdfCall:
    """One `@pyflow` function or `@method`, called the way GE's dataflow package calls it.

    Arguments: per input message what GE gives (`Message.udf_value`: a tensor as a `Tensor`, an
    array a UDF returned as that array, the object, or None for an empty message); or, with
    `stream_input`, one `FlowMsgQueue` per input, whose `get` gives the same. Results: one value
    per output (a tuple of exactly `len(outputs)` when there are several), each turned into a
    message by `Message.from_result` (an array as a tensor `as_array`, None as an empty message);
    an output whose `choice_output(value)` is False is not emitted. A generator emits one output
    set per `yield`. An exception (but a MemoryError, which stops the worker process), or a
    result that does not fit, emits error messages on every output instead (`failure`: a
    `DfException`'s `error_code`, else `FLOW_FUNC_FAILED`; a `DfAbortException`'s also stops the
    model once fetched); an upstream error read from a queue is forwarded.
    Outputs carry the transaction of the inputs: the one with the highest id among the messages
    the call read (for a stream-input call, read so far).
    """

    node: str
    func: str
    fn: Callable
    outputs: tuple[int, ...]
    stream_input: bool
    is_generator: bool
    choice_output: Callable[[Any], bool] | None

    def __post_init__(self) -> None:
        # Per-call decisions made once: a plain func's call needs no generator, and a single
        # output without choice_output needs no splitting or filtering.
        self._eager = not self.stream_input and not self.is_generator
        self._single_output = len(self.outputs) == 1 and self.choice_output is None

    @property
    def plain_single(self) -> bool:
        """Whether every call emits exactly one message on one output: `call_set` applies."""
        return self._eager and self._single_output

    def __call__(self, inputs: list) -> Iterable[OutputSet]:
        return self._call_eagerly(inputs) if self._eager else self._call_lazily(inputs)

    def call_one(self, message: Message) -> Message:
        """`call_set` of a single-input func: its output message for input `message`."""
        try:
            return Message.from_result(message.meta, self.fn(udf_argument(message)))
        except MemoryError:
            raise  # as in _call_lazily
        except Exception as exc:  # noqa: BLE001 - as in _call_lazily
            return self.failure(message.meta, exc)

    def call_set(self, messages: Sequence[Message]) -> Message:
        """The one output message of a `plain_single` func called on one message per input, none
        of them an error message: what `self(list(messages))` emits, without building output sets."""
        meta = messages[0].meta if len(messages) == 1 else _latest_meta(messages)
        try:
            return Message.from_result(meta, self.fn(*[udf_argument(message) for message in messages]))
        except MemoryError:
            raise  # as in _call_lazily
        except Exception as exc:  # noqa: BLE001 - as in _call_lazily
            return self.failure(meta, exc)

    def _call_eagerly(self, inputs: list[Message]) -> list[OutputSet]:
        """A plain, non-generator func: its one output set, built before returning."""
        try:
            result = self.fn(*[message.udf_value() for message in inputs])
            return [self._output_set(_latest_meta(inputs), result)]
        except MessageError as exc:
            return [[(port, exc.message) for port in self.outputs]]
        except _BadResult as exc:
            return [self._failure(_latest_meta(inputs), str(exc))]
        except MemoryError:
            raise  # as in _call_lazily
        except Exception as exc:  # noqa: BLE001 - as in _call_lazily
            return [self._on_outputs(self.failure(_latest_meta(inputs), exc))]

    def _call_lazily(self, inputs: list) -> Iterator[OutputSet]:
        """A generator or stream-input func: one output set per result, as they come."""
        if self.stream_input:
            read: list[Message] = []  # what this call has taken from its queues so far
            args = [FlowMsgQueue(_ReadLog(stream, read)) for stream in inputs]
        else:
            read, args = inputs, [message.udf_value() for message in inputs]
        try:
            results = self.fn(*args)
            for result in (results if self.is_generator else (results,)):
                yield self._output_set(_latest_meta(read), result)
        except MessageError as exc:
            yield [(port, exc.message) for port in self.outputs]
        except _BadResult as exc:
            yield self._failure(_latest_meta(read), str(exc))
        except MemoryError:
            raise  # the process may be broken: its worker stops and the driver fails the model
        except Exception as exc:  # noqa: BLE001 - any user exception fails this transaction only
            yield self._on_outputs(self.failure(_latest_meta(read), exc))

    def _output_set(self, meta: TransactionMeta, result: Any) -> OutputSet:
        if self._single_output:
            return [(self.outputs[0], Message.from_result(meta, result))]
        values = self._split(result)
        return [(port, Message.from_result(meta, value)) for port, value in zip(self.outputs, values)
                if self.choice_output is None or self.choice_output(value)]

    def _split(self, result: Any) -> tuple:
        count = len(self.outputs)
        if count == 1:
            return (result,)
        if not isinstance(result, tuple):
            raise _BadResult(f"UDF {self.node}.{self.func} returned {type(result).__name__} but "
                             f"num_returns is {count}; expected a tuple of {count} values")
        if len(result) != count:
            raise _BadResult(f"UDF {self.node}.{self.func} returned {len(result)} values but "
                             f"num_returns is {count}")
        return result

    def raised_text(self, exc: Exception) -> str:
        """The failure text: the exception, then the UDF's lines it passed through."""
        if isinstance(exc, DfException):  # GE's spelling of it: DfException:<error_code>:<message>
            raised = f"{type(exc).__name__}:{exc.error_code}:{exc.message}"
            if isinstance(exc, DfAbortException):
                return f"{ABORT_MARK}UDF {self.node}.{self.func}, which raised {raised}{user_frames(exc)}"
        else:
            raised = f"{type(exc).__name__}: {exc}"
        return f"UDF {self.node}.{self.func} raised {raised}{user_frames(exc)}"

    def failure(self, meta: TransactionMeta, exc: Exception) -> Message:
        """The error message of a call that raised `exc`: its return code is a `DfException`'s
        `error_code` (a `DfAbortException` is one), else FLOW_FUNC_FAILED."""
        return Message.failure(meta, _failure_code(exc), self.raised_text(exc))

    def _failure(self, meta: TransactionMeta, text: str) -> OutputSet:
        return self._on_outputs(Message.failure(meta, FLOW_FUNC_FAILED, text))

    def _on_outputs(self, failure: Message) -> OutputSet:
        return [(port, failure) for port in self.outputs]


def _failure_code(exc: Exception) -> int:
    """The return code a UDF exception fails its transaction with: a DfException's error_code as
    a signed 32-bit code (what a message carries; GE's FAILED, 0xFFFFFFFF, is -1), else (and for
    a code of 0 or no int) FLOW_FUNC_FAILED."""
    code = getattr(exc, "error_code", None) if isinstance(exc, DfException) else None
    if isinstance(code, bool) or not isinstance(code, int) or code == 0:
        return FLOW_FUNC_FAILED
    return (code + 2**31) % 2**32 - 2**31


class _ReadLog:
    """An `InputStream` that appends each message it hands out to `read`."""

    def __init__(self, stream: InputStream, read: list[Message]):
        self._stream = stream
        self._read = read

    def take(self, block: bool = True, timeout: float | None = None) -> Message:
        message = self._stream.take(block, timeout)
        self._read.append(message)
        return message

    def pending(self) -> int:
        return self._stream.pending()


def _latest_meta(messages: Sequence[Message]) -> TransactionMeta:
    """The transaction a call's outputs belong to: the latest (highest id) among its inputs (the
    first of those with that id)."""
    latest = messages[0].meta if messages else TransactionMeta()
    for message in messages:
        if message.meta.transaction_id > latest.transaction_id:
            latest = message.meta
    return latest


# -- GE graphs ------------------------------------------------------------------------------------

def _ge_funcs(entry: GeGraph, node: Node, weights: memoryview | None,
              runner_factory: RunnerFactory) -> tuple[FuncSpec, ...]:
    runner = runner_factory(entry, weights)
    outputs = tuple(range(node.output_num))
    call = GeGraphCall(node.name, entry.name, runner, outputs)
    return (FuncSpec(entry.name, tuple(range(node.input_num)), outputs, False, call),)


@dataclass
class GeGraphCall:
    """A GE graph node: tensors in, `runner.run(arrays)`, one tensor per node output.

    A transaction whose inputs are all empty (an EOS marker) passes through as empty outputs. A
    torch tensor (what an `@npu_model` UDF gives) is taken as its array. Any other non-tensor
    input, a runner failure or a wrong number of results fails the transaction
    (`FLOW_FUNC_FAILED`, naming the node and graph).
    """

    node: str
    graph: str
    runner: Any
    outputs: tuple[int, ...]

    def __call__(self, inputs: list[Message]) -> list[OutputSet]:
        """The one output set of the transaction, in a list: a list (not a generator) is what
        the `OutputsStep` puts natively (a generator's sets go through Python's `_emit`, 7 us a
        message more on a one-node MLP; benchmarks/ge_node_overhead.py)."""
        meta = inputs[0].meta
        if all(message.kind is Kind.EMPTY for message in inputs):
            return [[(port, Message.empty(meta)) for port in self.outputs]]
        try:
            results = self._run(inputs)
        except MemoryError:
            raise  # as in UdfCall
        except Exception as exc:  # noqa: BLE001 - kernels raise GeError, numpy raises its own
            failure = Message.failure(meta, FLOW_FUNC_FAILED, f"GE graph node '{self.node}' "
                                      f"(graph '{self.graph}') failed: {type(exc).__name__}: {exc}")
            return [[(port, failure) for port in self.outputs]]
        return [[(port, Message.tensor(meta, array)) for port, array in zip(self.outputs, results)]]

    def _run(self, inputs: list[Message]) -> list:
        arrays = []
        for j, message in enumerate(inputs):
            if message.kind is Kind.TENSOR:
                arrays.append(message.payload)
            elif message.kind is Kind.OBJECT and _is_torch_tensor(message.payload):  # an @npu_model UDF's
                arrays.append(message.payload.detach().cpu().numpy())
            else:
                raise GeError(f"input {j} is a {message.kind.value} message; a GE graph takes tensors")
        results = list(self.runner.run(arrays))
        if len(results) != len(self.outputs):
            raise GeError(f"the graph returned {len(results)} tensors but the node has "
                          f"{len(self.outputs)} outputs")
        return results


def _is_torch_tensor(value: Any) -> bool:
    """Whether `value` is a torch tensor (without importing torch where no UDF did)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)
