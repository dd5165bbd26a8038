"""`RuntimeModel`: one loaded execution plan, fed and fetched like GE's `FlowGraph`.

Each feed is a transaction: its id comes from the `FlowInfo` when that gives one, else from a
counter starting at 1; its `FlowInfo` fields travel with every message it causes and come back
from `fetch_data`. Results come back in feed order through single-instance pipelines. A failed
transaction fetches as `([], flow_info, ret)` with `ret` its error code (a `RetCode`, whose
`.message` says what failed) while other transactions complete normally; one a UDF aborted
(`DfAbortException`) also stops the model when fetched. Feeds and fetches that cannot be served
return GE's codes (docs/udf.md, "Errors").
"""
from __future__ import annotations

import contextlib
import logging
import os
from typing import Any, Callable, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.flow_info import FlowInfo
from dfir.core.msg_types import msg_type_register
from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.core.tensor import Tensor
from dfir.om.plan import TRACE_OPTION, Input, Plan
from dfir.runtime import _native
from dfir.runtime._native import DriverPort
from dfir.runtime.channels import READY, TIMEOUT
from dfir.runtime.driver.input_check import FedInputChecks
from dfir.runtime.driver.process_scheduler import PortResults, ProcessScheduler, SchedulerFailed, plan_wiring
from dfir.runtime.driver.servers import check_local, plan_servers
from dfir.runtime.driver.stall import describe_stall
from dfir.runtime.driver.trace_file import write_trace
from dfir.runtime.driver.trace_stats import channel_stats, node_stats
from dfir.runtime.driver.tracing import TRACE_ENV
from dfir.runtime.driver.status import (ABORT_MARK, DATATYPE_INVALID, FEED_TIMEOUT, FETCH_TIMEOUT, PARAM_INVALID, SHAPE_INVALID,
                                        SUCCESS, RetCode)
from dfir.runtime.funcs import SchedulerClosed
from dfir.runtime.ge.iree_device import share_one_malloc_arena
from dfir.runtime.worker import host
from dfir.runtime.worker.batching import with_batch_nodes

share_one_malloc_arena()  # before any model's threads and workers exist (see its docstring)
# The native codec reads the user message types from the registry's own dicts (dfir.core.msg_types).
_native.set_user_types(msg_type_register.codec_types, msg_type_register.codec_loaders)

_SUCCEEDED = RetCode(SUCCESS)
_log = logging.getLogger("dfir.runtime")


class RuntimeModel:
    """A running plan (docs/execution-plan.md: a `Plan`, or its JSON, validated) with its UDF
    payloads, GE weights, C++ UDF libraries (`so_bins`) and IREE executables (`executables`).

    Worker processes, one per logical device (runtime/driver/process_scheduler.py), start here;
    `close()` (or leaving a `with` block, garbage collection or interpreter exit) stops them.
    Every call after `close()` raises GeError. `channel_depth` (default: the plan's, which the
    option `dfir.runtime.channel_depth` sets) bounds each channel; see `feed_data`.
    """

    def __init__(self, plan: Plan | dict, udf_payloads: Sequence[bytes | memoryview],
                 weights: memoryview | None, name: str, *, channel_depth: int | None = None,
                 so_bins: Sequence[bytes | memoryview] = (), executables: Sequence[bytes | memoryview] = (),
                 resource_config: bytes | memoryview | None = None):
        plan = with_batch_nodes(Plan.of(plan))
        self.name = name
        self._inputs = plan.inputs
        self._input_names = [spec.name for spec in self._inputs]
        self._name_positions = {name: k for k, name in enumerate(self._input_names)}
        self._num_outputs = len(plan.outputs)
        self._all_outputs = list(range(self._num_outputs))
        self._graph_checks = FedInputChecks(plan)
        parts = host.ModelParts(plan, udf_payloads, weights, so_bins, executables)
        self._scheduler = _scheduler(name, parts, channel_depth or plan.channel_depth, resource_config)
        self._port = self._scheduler.driver_port(_input_rules(self._inputs, self._graph_checks),
                                                 self._name_positions, _PORT_RESULTS)
        if self._scheduler.tracer is not None:
            self._port.trace(self._scheduler.tracer.log)  # a slice per feed and fetch it serves

    @property
    def input_names(self) -> list[str]:
        """The graph inputs in feed order (a list `feed` gives values in this order)."""
        return list(self._input_names)

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    # -- tensors --------------------------------------------------------------------------------

    def feed_data(self, feed: dict | Sequence, flow_info: FlowInfo | None = None, timeout: int = -1,
                  partial_inputs: bool = False) -> RetCode:
        """Feed one transaction of tensors (arrays, `Tensor`s, lists or numbers).

        `feed` maps inputs (by name, position, or an object with `.name` such as a FlowData) to
        values, or lists one value per input. An empty feed with the EOS flag sends an EOS marker
        (an empty message) to every input. Values are converted to the input's schema dtype when
        the plan gives one. Returns SUCCESS, or FEED_TIMEOUT when no room frees up within
        `timeout` ms (-1: wait forever); a feed that cannot be served returns GE's code for it
        (PARAM_INVALID, SHAPE_INVALID, DATATYPE_INVALID: `_refusal`), the reason logged and kept
        on the RetCode, as GE's feed_data does.

        In flight: every channel holds at most `channel_depth` messages (the option
        `dfir.runtime.channel_depth`, default 128), so a pipeline whose longest path from a
        feed to the fetch crosses k channels holds about k x depth unfetched results (plus one
        per node at work). A feed beyond that waits for a fetch: keep at most the depth in
        flight before fetching, or fetch from another thread, or raise the depth.
        """
        verdict = self._port.feed(feed, flow_info, timeout, partial_inputs)  # the port judges and puts
        if verdict == READY:  # the common case, without another call
            return _SUCCEEDED
        if type(verdict) is int:
            return self._fed(verdict, timeout)
        refusal, detail = verdict
        if refusal == DriverPort.CONVERT:
            return self._feed_converted(detail, flow_info, timeout)
        if refusal == DriverPort.EOS_MARKER:
            meta = self._new_transaction(flow_info)
            return self._submit("feed_data", timeout, self._scheduler.submit,
                                [Message.empty(meta)] * len(self._inputs))
        return self._refusal("feed_data", feed, refusal, detail, timeout)

    def _feed_converted(self, fed: dict[int, Any], flow_info: FlowInfo | None, timeout: int) -> RetCode:
        """`feed_data` of the values the port asked to have converted ({position: value})."""
        self._check_open("feed_data")
        converted = {}
        for k, value in fed.items():
            converted[k] = self._as_array(self._inputs[k], value)
            if type(converted[k]) is RetCode:
                return converted[k]
        verdict = self._port.feed(converted, flow_info, timeout, True)
        if type(verdict) is int:
            return self._fed(verdict, timeout)
        refusal, detail = verdict
        if refusal == DriverPort.NOT_A_TENSOR:  # say what the user fed, not its array
            detail = (detail[0], fed[detail[0]])
        return self._refusal("feed_data", converted, refusal, detail, timeout)

    def _fed(self, status: int, timeout: int) -> RetCode:
        """A feed's RetCode from the port's wait status."""
        if status == READY:
            return _SUCCEEDED
        if status == TIMEOUT:
            return self._feed_timeout(timeout)
        raise self._unusable("feed_data")

    def fetch_data(self, indexes: Sequence[int] | None = None,
                   timeout: int = -1) -> tuple[list[Tensor], FlowInfo, RetCode]:
        """The next result of the outputs in `indexes` (default: all), waiting up to `timeout` ms.

        Returns `(tensors, flow_info, ret)`: on success one `Tensor` per output, except that
        empty messages (EOS markers, outputs a UDF returned None for) are left out; for a failed
        transaction `([], its flow_info, its error code)`; on timeout `([], FlowInfo(),
        FETCH_TIMEOUT)`. An output holding a Python object gives PARAM_INVALID (use `fetch`).
        """
        messages = self._port.fetch(indexes, timeout)  # one native call
        if type(messages) is tuple:
            if len(messages) == 3:  # plain tensors, built natively
                return messages
            refused = self._fetch_refused("fetch_data", messages, timeout)
            if type(refused) is RetCode:
                return [], FlowInfo(), refused
            chosen, messages = refused
        else:
            chosen = self._all_outputs if indexes is None else list(indexes)
        if not messages:
            return [], FlowInfo(), self._fetch_timeout(timeout, chosen)
        for message in messages:
            if message.ret_code != 0:
                return [], message.meta.to_flow_info(), self._failed("fetch_data", message)
        info = messages[0].meta.to_flow_info()
        try:
            tensors = [Tensor(m.payload) if m.kind is Kind.TENSOR else _as_tensor(i, m)
                       for i, m in zip(chosen, messages) if m.kind is not Kind.EMPTY]
        except GeError as exc:
            return [], info, self._refused("fetch_data", PARAM_INVALID, exc.error_message)
        return tensors, info, _SUCCEEDED

    # -- Python objects -------------------------------------------------------------------------

    def feed(self, feed: dict | Sequence, timeout: int = -1, partial_inputs: bool = False) -> RetCode:
        """Feed one transaction of Python objects: a `Tensor` travels as a tensor, None as an
        empty message, anything else as the object itself. Keys and returns as `feed_data`."""
        self._check_open("feed")
        fed = self._port.ordered(feed, partial_inputs)
        if type(fed) is tuple:
            return self._refusal("feed", feed, *fed, timeout)
        if not _valid_timeout(timeout):
            return self._refused("feed", PARAM_INVALID, _timeout_problem(timeout))
        meta = self._new_transaction(None)
        messages = [Message.from_object(meta, fed[k]) if k in fed else None for k in range(len(self._inputs))]
        return self._submit("feed", timeout, self._scheduler.submit, messages)

    def fetch(self, indexes: Sequence[int] | None = None, timeout: int = -1) -> tuple[list, RetCode]:
        """The next result as Python values, as GE's fetch gives them: a `Tensor` per tensor, but
        the array itself for an array a UDF returned (`Message.as_array`); the object per object
        message; None per empty message. `([], ret)` for a failed transaction or a timeout."""
        messages = self._port.fetch(indexes, timeout, True)
        if type(messages) is tuple:
            if len(messages) == 3:  # plain tensors, built natively
                return messages[0], messages[2]
            refused = self._fetch_refused("fetch", messages, timeout)
            if type(refused) is RetCode:
                return [], refused
            chosen, messages = refused
        else:
            chosen = self._all_outputs if indexes is None else list(indexes)
        if not messages:
            return [], self._fetch_timeout(timeout, chosen)
        failed = next((m for m in messages if m.is_error), None)
        if failed is not None:
            return [], self._failed("fetch", failed)
        try:
            values = [_as_tensor(i, m) if m.kind is Kind.TENSOR and not m.as_array else m.payload
                      for i, m in zip(chosen, messages)]
        except GeError as exc:
            return [], self._refused("fetch", PARAM_INVALID, exc.error_message)
        return values, RetCode(SUCCESS)

    def _feed_timeout(self, timeout: int) -> RetCode:
        return RetCode(FEED_TIMEOUT, self._stalled(f"no room in the input channels within {timeout} ms", timeout, ()))

    def _fetch_timeout(self, timeout: int, outputs: Sequence[int]) -> RetCode:
        return RetCode(FETCH_TIMEOUT, self._stalled(f"no result within {timeout} ms", timeout, outputs))

    def _stalled(self, what: str, timeout: int, outputs: Sequence[int]) -> str:
        """`what` timed out, and what holds the model up (runtime/driver/stall.py); a call that
        waited not at all (a poll) gets `what` alone."""
        if timeout == 0:
            return what
        return f"{what}: {describe_stall(self._scheduler.stall_snapshot(outputs))}"

    def dropped_messages(self) -> dict[str, int]:
        """How many messages each OVERWRITE input channel dropped so far (a node's
        `_flow_attr_enqueue_policy` "OVERWRITE": a full channel drops its oldest message), by
        what it feeds: {"node 'n' input j": count}. Closing the model logs the non-zero counts."""
        return self._scheduler.dropped_messages()

    def stats(self) -> dict[str, Any]:
        """What the running model went through so far: `workers`, per worker process of this
        machine in device order, its `device`, `pid`, `restarts` (dead workers of its device it
        replaced, `dfir.runtime.recover`) and `deaths` (why the last few ended); and
        `dropped_messages` (`dropped_messages()`). A traced model adds `nodes`, per node instance
        its `calls`, `p50_us`, `p99_us`, `max_us` and `histogram_us`, and the same of its calls'
        `waits` for their inputs (runtime/driver/trace_stats.py), and `peak_depths`, per node
        input channel the deepest it was seen."""
        stats = {"workers": self._scheduler.worker_stats(), "dropped_messages": self.dropped_messages()}
        tracer = self._scheduler.tracer
        if tracer is not None:
            trace = tracer.collect()
            stats.update(nodes=node_stats(trace), peak_depths=channel_stats(trace))
        return stats

    # -- tracing --------------------------------------------------------------------------------

    def trace(self, path: str | os.PathLike) -> str:
        """Write what the model recorded so far (option `dfir.runtime.trace` or DFIR_TRACE) to
        `path`, one Chrome trace / Perfetto JSON file (docs/tracing.md); returns the path. A model
        that is not traced raises GeError."""
        tracer = self._scheduler.tracer
        if tracer is None:
            raise GeError(f"model '{self.name}' is not traced: set the option {TRACE_OPTION} to on or a sampling "
                          f"rate, or the environment variable {TRACE_ENV}, before it loads", "trace")
        write_trace(path, [tracer.collect()])
        return os.fspath(path)

    # -- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the workers, even those whose UDF waits on a queue. Idempotent."""
        self._scheduler.close()

    def __enter__(self) -> RuntimeModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __del__(self) -> None:
        scheduler = getattr(self, "_scheduler", None)  # absent when __init__ failed
        if scheduler is not None:
            scheduler.close(wait=False)

    # -- helpers --------------------------------------------------------------------------------

    def _error(self, api: str, message: str) -> GeError:
        return GeError(message, api_name=api, context={"model": self.name})

    def _check_open(self, api: str) -> None:
        if self._scheduler.closed:
            raise self._error(api, "the model is closed")

    def _transaction_id(self, flow_info: FlowInfo | None) -> int:
        given = flow_info.transaction_id if flow_info is not None else 0
        return given or self._port.next_transaction_id()

    def _new_transaction(self, flow_info: FlowInfo | None) -> TransactionMeta:
        return TransactionMeta.from_flow_info(flow_info, self._transaction_id(flow_info))

    def _submit(self, api: str, timeout: int, submit: Callable[..., bool], *inputs: Any) -> RetCode:
        """`submit(*inputs, timeout)` as a feed's RetCode."""
        if not _valid_timeout(timeout):
            return self._refused(api, PARAM_INVALID, _timeout_problem(timeout))
        tracer = self._scheduler.tracer
        begin_ns = tracer.log.now() if tracer is not None else 0
        meter = _native.ByteMeter() if tracer is not None else contextlib.nullcontext()
        try:
            with meter:
                submitted = submit(*inputs, timeout)
        except SchedulerFailed as failure:
            raise self._error(api, f"the model failed: {failure.error_message}; close it and load it "
                                   f"again") from None
        except SchedulerClosed:
            raise self._error(api, "the model is closed") from None
        if not submitted:
            return self._feed_timeout(timeout)
        if tracer is not None:
            fed = next((message for message in inputs[0] if message is not None), None)
            tracer.driver_slice("feed", 0 if fed is None else fed.meta.transaction_id, begin_ns,
                                bytes_out=meter.bytes_out)
        return _SUCCEEDED

    def _fetch_refused(self, api: str, refused: tuple[int, Any],
                       timeout: Any) -> tuple[list[int], list[Message]] | RetCode:
        """What a fetch the driver port did not take gets: the return code of a bad fetch
        (PARAM_INVALID, as GE returns it, the reason logged); or, for a fetch of outputs paired
        by transaction or from a closed model, the scheduler's fetch, which pairs them or returns
        what the outputs and the ledger still hold (the outputs fetched and their messages)."""
        refusal, detail = refused
        self._check_open(api)
        if refusal == DriverPort.TIMEOUT_VALUE:
            return self._refused(api, PARAM_INVALID, _timeout_problem(timeout))
        if refusal == DriverPort.INDEX_RANGE:
            return self._refused(api, PARAM_INVALID, f"output index {detail!r} is out of range; the model has "
                                                     f"{self._num_outputs} outputs")
        if refusal == DriverPort.INDEXES:
            return self._refused(api, PARAM_INVALID, f"indexes {detail} must name distinct outputs, at least one")
        return detail, self._fetch_from(api, detail, timeout)

    def _fetch_from(self, api: str, chosen: list[int], timeout: int) -> list[Message]:
        try:
            return self._scheduler.fetch(chosen, timeout)
        except SchedulerClosed:
            raise self._error(api, "the model is closed") from None

    def _unusable(self, api: str) -> GeError:
        """Why a feed found the region closed: the model failed, or was closed."""
        failure = self._scheduler.failure
        if failure is not None:
            return self._error(api, f"the model failed: {failure}; close it and load it again")
        return self._error(api, "the model is closed")

    def _refused(self, api: str, code: int, reason: str) -> RetCode:
        """GE's return code `code` for a call refused for `reason`, which is logged (as GE logs
        it) and kept as the RetCode's message."""
        _log.error("%s failed; model=%s; %s", api, self.name, reason)
        return RetCode(code, reason)

    def _failed(self, api: str, message: Message) -> RetCode:
        """The RetCode of a fetched error message; an aborting UDF's (`DfAbortException`) also
        stops the model here, if its worker has not stopped it already."""
        if message.error.startswith(ABORT_MARK):
            self._scheduler.fail(message.error)
        return RetCode(message.ret_code, message.error)

    def _refusal(self, api: str, feed: Any, refusal: int, detail: Any, timeout: Any) -> RetCode:
        """GE's return code for a feed the driver port refused (`DriverPort`'s refusals and their
        detail), its reason logged: PARAM_INVALID, or SHAPE_INVALID / DATATYPE_INVALID for a
        tensor of the wrong shape / type."""
        self._check_open(api)
        names = self._input_names
        if refusal == DriverPort.TIMEOUT_VALUE:
            return self._refused(api, PARAM_INVALID, _timeout_problem(timeout))
        if refusal == DriverPort.FLOW_INFO:
            return self._refused(api, PARAM_INVALID, f"flow_info must be a FlowInfo, got {type(detail).__name__}")
        messages = {
            DriverPort.NOT_A_FEED: lambda: f"feed must be a dict or a list, got {type(feed).__name__}",
            DriverPort.EMPTY: lambda: "feed is empty; only feed_data with DATA_FLOW_FLAG_EOS set in flow_info may "
                                      "feed nothing",
            DriverPort.COUNT: lambda: f"feed lists {detail} values but the model has {len(names)} inputs {names}",
            DriverPort.INDEX_RANGE: lambda: f"input index {detail} is out of range; the model has {len(names)} "
                                            f"inputs {names}",
            DriverPort.UNKNOWN_KEY: lambda: f"feed names input {_key_name(detail)!r}, but the model's inputs are "
                                            f"{names}",
            DriverPort.TWICE: lambda: f"input '{names[detail]}' is fed twice",
            DriverPort.MISSING: lambda: f"feed is missing input '{names[detail]}'; expected inputs {names}",
            DriverPort.NOT_A_TENSOR: lambda: f"input '{names[detail[0]]}' got a {type(detail[1]).__name__}, not a "
                                             f"tensor; feed() carries Python objects",
            DriverPort.SHAPE: lambda: f"input '{names[detail[0]]}' expects shape "
                                      f"{list(self._inputs[detail[0]].shape)}, got {list(detail[1].shape)}",
            DriverPort.GRAPH_INPUT: lambda: f"input '{names[detail[0]]}' {self._graph_checks.problem(*detail)}",
        }
        return self._refused(api, self._refusal_code(refusal, detail), messages[refusal]())

    def _refusal_code(self, refusal: int, detail: Any) -> int:
        """GE's code for a refused feed: a tensor of the wrong shape is SHAPE_INVALID, a value of
        the wrong type DATATYPE_INVALID, anything else PARAM_INVALID."""
        if refusal == DriverPort.SHAPE:
            return SHAPE_INVALID
        if refusal == DriverPort.NOT_A_TENSOR:
            return DATATYPE_INVALID
        if refusal == DriverPort.GRAPH_INPUT:
            position, array = detail
            takes_dtype = any(np.dtype(dt.to_numpy(dt.from_name(rule.dtype))) == array.dtype and
                              rule.problem(array.dtype, array.shape) is not None
                              for rule in self._graph_checks.rules[position])
            return SHAPE_INVALID if takes_dtype else DATATYPE_INVALID
        return PARAM_INVALID

    def _as_array(self, spec: Input, value: Any) -> np.ndarray | RetCode:
        """`value` as an array of the input's schema dtype (the port judges the result), or
        DATATYPE_INVALID when it cannot be one."""
        data = value.numpy() if isinstance(value, Tensor) else value
        dtype = None if spec.dtype is None else dt.to_numpy(dt.from_name(spec.dtype))
        try:
            return np.asarray(data, dtype=dtype)
        except (TypeError, ValueError) as exc:
            return self._refused("feed_data", DATATYPE_INVALID, f"input '{spec.name}' cannot be a {spec.dtype} "
                                                                f"tensor: {exc}")


def _input_rules(inputs: Sequence[Input], graph_checks: FedInputChecks) -> list[tuple]:
    """Per input, what the driver port lets through as it is: the dtype (None: any but object), the
    shape (None: any; -1 any size) and the rules of the GE graphs it feeds: [(dtype, [(lo, hi)])]."""
    return [(None if spec.dtype is None else _numpy_dtype(spec.dtype), spec.shape,
             [(_numpy_dtype(rule.dtype), list(rule.ranges)) for rule in rules])
            for spec, rules in zip(inputs, graph_checks.rules)]


def _numpy_dtype(name: str) -> np.dtype:
    return np.dtype(dt.to_numpy(dt.from_name(name)))


def _key_name(key: Any) -> str:
    """How a feed's dict key that names no input is spelled in the error."""
    name = key if isinstance(key, str) else getattr(key, "name", None)
    return name if isinstance(name, str) else repr(key)




def _plain_result(fields: tuple, arrays: list[np.ndarray]) -> tuple[list[Tensor], FlowInfo, RetCode]:
    """`fetch_data`'s result for a set of plain tensors: the transaction's (transaction_id,
    start_time, end_time, flow_flags, user_data) and one array per output."""
    transaction_id, start_time, end_time, flow_flags, user_data = fields
    info = FlowInfo.of_fields(start_time, end_time, flow_flags, transaction_id, user_data)
    try:
        return [Tensor.of_array(array) for array in arrays], info, _SUCCEEDED
    except GeError as exc:
        return [], info, RetCode(PARAM_INVALID, exc.error_message)


# What the driver port builds a fetch's result with (ProcessScheduler.driver_port).
_PORT_RESULTS = PortResults(Tensor.of_array, FlowInfo, _plain_result, _SUCCEEDED)


def _as_tensor(position: int, message: Message) -> Tensor:
    if message.kind is Kind.OBJECT:
        raise GeError(f"output {position} holds a Python object ({type(message.payload).__name__}), "
                      f"not a tensor; fetch() returns objects")
    return Tensor(message.payload)


def _scheduler(name: str, parts: host.ModelParts, depth: int,
               resource_config: bytes | memoryview | None) -> ProcessScheduler:
    """The scheduler of the plan's cluster (`plan.cluster`): every worker a local process, each
    of them on a server that is this machine; or the servers' workers on Ray."""
    wiring = plan_wiring(parts.plan, name, depth)
    names = wiring.device.node_names
    servers = plan_servers(wiring.devices, [[names[n] for n in wiring.nodes_of(w)] for w in range(len(wiring.devices))],
                           resource_config)
    if parts.plan.cluster.kind == "ray" and servers:
        try:
            from dfir.runtime.driver.ray_cluster import RayScheduler  # lazy: Ray is optional (dfir[ray]) and slow to import
        except ImportError as error:
            raise GeError(f"the option dfir.runtime.cluster=ray needs Ray ({error}): pip install 'dfir[ray]'",
                          "dfir.load", {"option": "dfir.runtime.cluster"}) from None
        return RayScheduler(name, parts, depth, servers)
    if parts.plan.cluster.kind == "local":
        check_local(servers)
    return ProcessScheduler(name, parts.plan, parts.build, depth, wiring=wiring)


def _valid_timeout(timeout: Any) -> bool:
    return type(timeout) is not bool and isinstance(timeout, int) and timeout >= -1  # as the driver port judges it


def _timeout_problem(timeout: Any) -> str:
    return f"timeout must be -1 (wait forever) or a number of milliseconds >= 0, got {timeout!r}"
