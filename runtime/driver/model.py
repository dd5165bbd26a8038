"""`RuntimeModel`: one loaded execution plan, fed and fetched like GE's `FlowGraph`.

Each feed is a transaction: its id comes from the `FlowInfo` when that gives one, else from a
counter starting at 1; its `FlowInfo` fields travel with every message it causes and come back
from `fetch_data`. Results come back in feed order through single-instance pipelines. A failed
transaction fetches as `([], flow_info, ret)` with `ret` its error code (a `RetCode`, whose
`.message` says what failed) while other transactions complete normally.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from dfir.core import data_type as dt
from dfir.core.errors import GeError
from dfir.core.flow_info import FlowFlag, FlowInfo
from dfir.core.messages import Kind, Message, TransactionMeta, transaction_fields
from dfir.core.tensor import Tensor
from dfir.om.plan import Input, Plan
from dfir.runtime.channels import READY, TIMEOUT
from dfir.runtime.driver.input_check import FedInputChecks
from dfir.runtime.driver.process_scheduler import PortResults, ProcessScheduler, SchedulerFailed, plan_wiring
from dfir.runtime.driver.servers import check_local, plan_servers
from dfir.runtime.driver.status import FEED_TIMEOUT, FETCH_TIMEOUT, PARAM_INVALID, SUCCESS, RetCode
from dfir.runtime.funcs import SchedulerClosed
from dfir.runtime.ge.iree_device import share_one_malloc_arena
from dfir.runtime.worker import host
from dfir.runtime.worker.batching import with_batch_nodes

share_one_malloc_arena()  # before any model's threads and workers exist (see its docstring)

_MISSING = object()
_SUCCEEDED = RetCode(SUCCESS)
_OBJECT = np.dtype(object)


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
        self._ready_checks = _ready_checks(self._inputs)
        self._graph_checks = FedInputChecks(plan)
        parts = host.ModelParts(plan, udf_payloads, weights, so_bins, executables)
        self._scheduler = _scheduler(name, parts, channel_depth or plan.channel_depth, resource_config)
        self._port = self._scheduler.driver_port(self._ready_checks, self._name_positions,
                                                 not self._graph_checks.needed, _PORT_RESULTS)

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
        `timeout` ms (-1: wait forever).

        In flight: every channel holds at most `channel_depth` messages (the option
        `dfir.runtime.channel_depth`, default 128), so a pipeline whose longest path from a
        feed to the fetch crosses k channels holds about k x depth unfetched results (plus one
        per node at work). A feed beyond that waits for a fetch: keep at most the depth in
        flight before fetching, or fetch from another thread, or raise the depth.
        """
        status = self._port.feed(feed, flow_info, timeout, partial_inputs)  # ready arrays: one native call
        if status == READY:
            return _SUCCEEDED
        if status == TIMEOUT:
            return _feed_timeout(timeout)
        return self._feed_data(feed, flow_info, timeout, partial_inputs)  # declined, or closed: say why

    def _feed_data(self, feed: dict | Sequence, flow_info: FlowInfo | None, timeout: int,
                   partial_inputs: bool) -> RetCode:
        """`feed_data` for what the driver port declines."""
        self._check_open("feed_data")
        arrays = self._ready_arrays(feed)
        if arrays is not None and (flow_info is None or isinstance(flow_info, FlowInfo)):
            self._check_graph_inputs(arrays)
            fields = transaction_fields(flow_info, self._transaction_id(flow_info))
            return self._submit("feed_data", timeout, self._scheduler.submit_arrays, arrays, fields)
        if flow_info is not None and not isinstance(flow_info, FlowInfo):
            raise self._error("feed_data", f"flow_info must be a FlowInfo, got "
                                           f"{type(flow_info).__name__}")
        eos = flow_info is not None and flow_info.flow_flags & FlowFlag.DATA_FLOW_FLAG_EOS
        if not feed and eos:
            meta = self._new_transaction(flow_info)
            return self._submit("feed_data", timeout, self._scheduler.submit,
                                [Message.empty(meta)] * len(self._inputs))
        values = self._values_by_position("feed_data", feed, partial_inputs)
        arrays = [value if value is _MISSING else self._as_array(spec, value)
                  for spec, value in zip(self._inputs, values)]
        self._check_graph_inputs(arrays)
        meta = self._new_transaction(flow_info)
        messages = [None if array is _MISSING else Message.tensor(meta, array) for array in arrays]
        return self._submit("feed_data", timeout, self._scheduler.submit, messages)

    def fetch_data(self, indexes: Sequence[int] | None = None,
                   timeout: int = -1) -> tuple[list[Tensor], FlowInfo, RetCode]:
        """The next result of the outputs in `indexes` (default: all), waiting up to `timeout` ms.

        Returns `(tensors, flow_info, ret)`: on success one `Tensor` per output, except that
        empty messages (EOS markers, outputs a UDF returned None for) are left out; for a failed
        transaction `([], its flow_info, its error code)`; on timeout `([], FlowInfo(),
        FETCH_TIMEOUT)`. An output holding a Python object gives PARAM_INVALID (use `fetch`).
        """
        messages = self._port.fetch(indexes, timeout)  # plain tensors of all outputs: one native call
        if type(messages) is tuple:
            return messages
        if messages is None:  # declined
            chosen, messages = self._fetch("fetch_data", indexes, timeout, self._scheduler.fetch_tensors)
            if type(messages) is tuple:  # plain tensors, without Message objects
                return _plain_result(*messages)
        else:
            chosen = self._all_outputs
        if not messages:
            return [], FlowInfo(), RetCode(FETCH_TIMEOUT, f"no result within {timeout} ms")
        for message in messages:
            if message.ret_code != 0:
                return [], message.meta.to_flow_info(), RetCode(message.ret_code, message.error)
        info = messages[0].meta.to_flow_info()
        try:
            tensors = [Tensor(m.payload) if m.kind is Kind.TENSOR else _as_tensor(i, m)
                       for i, m in zip(chosen, messages) if m.kind is not Kind.EMPTY]
        except GeError as exc:
            return [], info, RetCode(PARAM_INVALID, exc.error_message)
        return tensors, info, _SUCCEEDED

    # -- Python objects -------------------------------------------------------------------------

    def feed(self, feed: dict | Sequence, timeout: int = -1, partial_inputs: bool = False) -> RetCode:
        """Feed one transaction of Python objects: a `Tensor` travels as a tensor, None as an
        empty message, anything else as the object itself. Keys and returns as `feed_data`."""
        self._check_open("feed")
        values = self._values_by_position("feed", feed, partial_inputs)
        meta = self._new_transaction(None)
        messages = [None if value is _MISSING else Message.from_object(meta, value) for value in values]
        return self._submit("feed", timeout, self._scheduler.submit, messages)

    def fetch(self, indexes: Sequence[int] | None = None, timeout: int = -1) -> tuple[list, RetCode]:
        """The next result as Python values: a `Tensor` per tensor, the object per object message,
        None per empty message. `([], ret)` for a failed transaction or a timeout."""
        chosen, messages = self._fetch("fetch", indexes, timeout)
        if not messages:
            return [], RetCode(FETCH_TIMEOUT, f"no result within {timeout} ms")
        failed = next((m for m in messages if m.is_error), None)
        if failed is not None:
            return [], RetCode(failed.ret_code, failed.error)
        try:
            values = [_as_tensor(i, m) if m.kind is Kind.TENSOR else m.payload
                      for i, m in zip(chosen, messages)]
        except GeError as exc:
            return [], RetCode(PARAM_INVALID, exc.error_message)
        return values, RetCode(SUCCESS)

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
        """`submit(*inputs, timeout)` (a scheduler's submit or submit_arrays) as a feed's RetCode."""
        _check_timeout(timeout)
        try:
            submitted = submit(*inputs, timeout)
        except SchedulerFailed as failure:
            raise self._error(api, f"the model failed: {failure.error_message}; close it and load it "
                                   f"again") from None
        except SchedulerClosed:
            raise self._error(api, "the model is closed") from None
        return _SUCCEEDED if submitted else _feed_timeout(timeout)

    def _fetch(self, api: str, indexes: Sequence[int] | None, timeout: int,
               fetch: Callable[[list[int], int], Any] | None = None) -> tuple[list[int], Any]:
        """The output indexes fetched and what `fetch` (default: the scheduler's `fetch`, one
        message per output, none on timeout) returned for them."""
        self._check_open(api)
        _check_timeout(timeout)
        if indexes is None and self._all_outputs:
            return self._all_outputs, self._fetch_from(api, self._all_outputs, timeout, fetch)
        chosen = self._all_outputs if indexes is None else list(indexes)
        for index in chosen:
            if not 0 <= index < self._num_outputs:
                raise self._error(api, f"output index {index} is out of range; the model has "
                                       f"{self._num_outputs} outputs")
        if not chosen or len(set(chosen)) != len(chosen):
            raise self._error(api, f"indexes {chosen} must name distinct outputs, at least one")
        return chosen, self._fetch_from(api, chosen, timeout, fetch)

    def _fetch_from(self, api: str, chosen: list[int], timeout: int,
                    fetch: Callable[[list[int], int], Any] | None) -> Any:
        try:
            return (fetch or self._scheduler.fetch)(chosen, timeout)
        except SchedulerClosed:
            raise self._error(api, "the model is closed") from None

    def _ready_arrays(self, feed: Any) -> list[np.ndarray] | None:
        """The fed arrays in feed order when `feed` gives every input a numpy array that is
        already of the input's dtype and shape (what `_as_array` would return unchanged): a list
        in feed order, or a dict keyed as `_position` reads keys. Else None: the general path
        then converts the values or says what is wrong."""
        checks = self._ready_checks
        kind = type(feed)
        if kind is not list and kind is not tuple and kind is not dict or not checks or len(feed) != len(checks):
            return None
        if kind is dict and (feed := self._ordered(feed)) is None:
            return None
        for value, (dtype, shape) in zip(feed, checks):
            if type(value) is not np.ndarray or (value.dtype == _OBJECT if dtype is None else value.dtype != dtype) or (
                    shape is not None and value.shape != shape and not _shape_fits(shape, value.shape)):
                return None
        return feed if kind is dict else list(feed)

    def _ordered(self, feed: dict) -> list[Any] | None:
        """The values of a dict feed that names each input once (by name, position or an object
        with a `.name`), in feed order; None when a key names no input or one input twice."""
        ordered = [_MISSING] * len(self._inputs)
        positions = self._name_positions
        for key, value in feed.items():
            if type(key) is int:
                position = key if 0 <= key < len(ordered) else None
            else:
                name = key if type(key) is str else getattr(key, "name", None)
                position = positions.get(name) if type(name) is str else None
            if position is None or ordered[position] is not _MISSING:
                return None
            ordered[position] = value
        return ordered

    def _values_by_position(self, api: str, feed: dict | Sequence, partial: bool) -> list[Any]:
        """The fed value of each input in feed order (`_MISSING` where partial feeding skips one)."""
        if not isinstance(feed, (dict, list, tuple)):
            raise self._error(api, f"feed must be a dict or a list, got {type(feed).__name__}")
        if not feed:
            raise self._error(api, "feed is empty; only feed_data with DATA_FLOW_FLAG_EOS set in "
                                   "flow_info may feed nothing")
        if isinstance(feed, dict):
            values = [_MISSING] * len(self._inputs)
            for key, value in feed.items():
                position = self._position(api, key)
                if values[position] is not _MISSING:
                    raise self._error(api, f"input '{self._input_names[position]}' is fed twice")
                values[position] = value
        elif isinstance(feed, (list, tuple)):
            if len(feed) != len(self._inputs):
                raise self._error(api, f"feed lists {len(feed)} values but the model has "
                                       f"{len(self._inputs)} inputs {self._input_names}")
            values = list(feed)
        missing = [name for name, value in zip(self._input_names, values) if value is _MISSING]
        if missing and not partial:
            raise self._error(api, f"feed is missing input '{missing[0]}'; expected inputs "
                                   f"{self._input_names}")
        return values

    def _position(self, api: str, key: Any) -> int:
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self._inputs):
                raise self._error(api, f"input index {key} is out of range; the model has "
                                       f"{len(self._inputs)} inputs {self._input_names}")
            return key
        name = key if isinstance(key, str) else getattr(key, "name", None)
        if not isinstance(name, str) or name not in self._name_positions:
            raise self._error(api, f"feed names input {name if name is not None else repr(key)!r}, "
                                   f"but the model's inputs are {self._input_names}")
        return self._name_positions[name]

    def _check_graph_inputs(self, arrays: Sequence[Any]) -> None:
        """GeError naming the input fed a tensor its GE graphs cannot take (`FedInputChecks`)."""
        if not self._graph_checks.needed:
            return
        for position, array in enumerate(arrays):
            if array is not _MISSING and (problem := self._graph_checks.problem(position, array)):
                raise self._error("feed_data", f"input '{self._input_names[position]}' {problem}")

    def _as_array(self, spec: Input, value: Any) -> np.ndarray:
        """`value` as an array of the input's schema dtype; GeError if it is no tensor or misfits."""
        data = value.numpy() if isinstance(value, Tensor) else value
        dtype = None if spec.dtype is None else dt.to_numpy(dt.from_name(spec.dtype))
        try:
            array = np.asarray(data, dtype=dtype)
        except (TypeError, ValueError) as exc:
            raise self._error("feed_data", f"input '{spec.name}' cannot be a {spec.dtype} "
                                           f"tensor: {exc}") from exc
        if array.dtype == object:
            raise self._error("feed_data", f"input '{spec.name}' got a {type(value).__name__}, "
                                           f"not a tensor; feed() carries Python objects")
        if spec.shape is not None and not _shape_fits(spec.shape, array.shape):
            raise self._error("feed_data", f"input '{spec.name}' expects shape {list(spec.shape)}, "
                                           f"got {list(array.shape)}")
        return array


def _ready_checks(inputs: Sequence[Input]) -> list[tuple[np.dtype | None, tuple[int, ...] | None]]:
    """Per input, the dtype (None: any but object) and shape (None: any) a fed array must have
    for `_as_array` to return it unchanged."""
    return [(None if spec.dtype is None else np.dtype(dt.to_numpy(dt.from_name(spec.dtype))), spec.shape)
            for spec in inputs]


def _feed_timeout(timeout: int) -> RetCode:
    return RetCode(FEED_TIMEOUT, f"no room in the input channels within {timeout} ms")


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


def _shape_fits(expected: Sequence[int], actual: Sequence[int]) -> bool:
    return len(expected) == len(actual) and all(e in (-1, a) for e, a in zip(expected, actual))


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


def _check_timeout(timeout: int) -> None:
    if not isinstance(timeout, int) or timeout < -1:
        raise GeError(f"timeout must be -1 (wait forever) or a number of milliseconds >= 0, "
                      f"got {timeout!r}")
