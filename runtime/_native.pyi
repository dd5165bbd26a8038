"""The private native core of `dfir.runtime` (pybind11). Use `dfir.runtime.om`, not this module."""
from typing import Any, Callable, Sequence

import numpy
from typing_extensions import Buffer

OM_SCHEMA: dict[str, Any]
"""The `.om` schema constants, named as in `dfir.om.schema` (offsets and type tables as dicts)."""

class OmHeader:
    """The 256-byte header of a validated .om file."""

    @property
    def magic(self) -> int: ...
    @property
    def headsize(self) -> int: ...
    @property
    def version(self) -> int: ...
    @property
    def checksum(self) -> bytes: ...
    @property
    def length(self) -> int: ...
    @property
    def is_encrypt(self) -> int: ...
    @property
    def is_checksum(self) -> int: ...
    @property
    def modeltype(self) -> int: ...
    @property
    def genmode(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def ops(self) -> int: ...
    @property
    def userdefineinfo(self) -> bytes: ...
    @property
    def om_ir_version(self) -> int: ...
    @property
    def model_num(self) -> int: ...
    @property
    def platform_version(self) -> str: ...
    @property
    def platform_type(self) -> int: ...
    @property
    def model_length(self) -> int: ...
    @property
    def need_check_os_cpu_info(self) -> int: ...
    @property
    def is_unknow_model(self) -> int: ...

class OmPartition:
    """A partition table entry; offset counts from its file's start."""

    @property
    def type(self) -> int: ...
    @property
    def offset(self) -> int: ...
    @property
    def size(self) -> int: ...

class OmModel:
    """One partition table with its partitions."""

    @property
    def partitions(self) -> list[OmPartition]: ...

class OmFile:
    """The layout of a validated .om file (bundle members nested)."""

    @property
    def base(self) -> int:
        """Where this file starts in the buffer given to read_om (non-zero for bundle members)."""
    @property
    def size(self) -> int: ...
    @property
    def header(self) -> OmHeader: ...
    @property
    def models(self) -> list[OmModel]: ...
    @property
    def var_size(self) -> int: ...
    @property
    def bundle(self) -> list[OmFile]: ...
    @property
    def member_names(self) -> list[str]:
        """The full names of the bundle members, in `bundle` order (empty for a flow file)."""

class ContentDigest:
    """The SHA-256 of the bytes after a file's header, as copy_sealed computed it."""
    @property
    def size(self) -> int: ...
    @property
    def digest(self) -> bytes: ...

def read_om(buffer: Buffer, content_digest: ContentDigest | None = None) -> OmFile:
    """Validate a contiguous buffer as an .om file and return its layout; raises GeError.
    `content_digest`: the one copy_sealed computed of the copy the buffer maps."""

def copy_sealed(fd: int, size: int, name: str) -> tuple[int, int, ContentDigest | None]:
    """Copy the first `size` bytes of the file open at `fd` into a new memfd named `name`, sealed
    against any change, hashing its content as it copies: (memfd, bytes copied, its digest)."""

def sha256(buffer: Buffer) -> bytes:
    """The SHA-256 digest (32 bytes) of a contiguous buffer."""

# -- the runtime core (runtime/bindings/: codec, region, ledger, arena, driver port); use dfir.runtime.channels

INLINE_BYTES: int
"""Message bodies up to this size travel inside a channel record; larger ones in arena blocks."""
MAX_DIMS: int
"""Tensors of at most this many dimensions travel flat; others are pickled."""

def configure_codec(message_type: type, meta_type: type, kinds: tuple[Any, ...], object_kind: Any,
                    other_fields: dict[str, Any], dumps: Any, loads: Any) -> None:
    """Set the Python types channel records decode to (done once by dfir.runtime.channels)."""

def set_user_types(user_types: dict[type, tuple[int, Any]], user_loaders: dict[int, Any]) -> None:
    """Set the user message types (msg_type_register): {class: (msg type, serialize_func)} and
    {msg type: deserialize_func}, dicts the registry keeps filling (done by dfir.runtime.driver.model)."""

def set_udf_tensor(udf_tensor: Any, tensor_type: type) -> None:
    """Set what a Python UDF receives for a tensor message's array, udf_tensor(array)
    (dfir.core.tensor.udf_tensor), and the Tensor type it makes (done once by dfir.runtime.channels)."""

def exit_when_process_ends(pid: int, exit_code: int) -> None:
    """End this process with `exit_code` as soon as process `pid` has exited (a native thread)."""

def aligned_zeros(shape: Sequence[int], dtype: Any, align: int) -> numpy.ndarray:
    """A zero-filled array of `shape` and `dtype` whose data start on an `align`-byte boundary
    (a power of two); ValueError for another align or a negative dimension."""

class SetStep:
    """A plain func's step in the set loop (runtime/bindings/set_steps.h): the loop waits until each
    input holds a message, takes up to `max_sets` sets and fires them through the step, each set's
    outputs put before the next set runs, the sinks' consumers rung every 8 sets and at the end."""

    inputs: list[int]
    sinks: list[int]
    def fire(self, max_sets: int, timeout_ms: int) -> int | None:
        """One batch: the number of sets fired (0 on timeout), None once the region closes."""
    def run(self, max_sets: int) -> None:
        """Fire batches as they come until the region closes."""

class LeanStep(SetStep):
    """A chain of plain single-output Python functions, (node, fn) each, whose last array result goes
    to every channel of `targets`; `emit(meta, outcome, raised, data_label, step) -> status` takes over
    a set at the function that raised or returned no array, `fire_set(messages)` runs a set holding
    an error message."""

    def __init__(self, region: Region, inputs: list[int], bell: int, worker: int,
                 functions: list[tuple[int, Callable[..., Any]]], targets: list[int],
                 emit: Callable[[Any, Any, bool, int, int], int], fire_set: Callable[[tuple], None]) -> None: ...

class UdfStep(SetStep):
    """A plain C++ UDF func on the records of its inputs, output i put as records on `targets[i]`
    (shared channels); `fire_set(messages)` runs any other set, `emit(output_sets, data_label)`
    delivers a call that did not succeed cleanly."""

    def __init__(self, region: Region, inputs: list[int], bell: int, worker: int, node: int, caller: UdfCaller,
                 targets: list[list[int]], fire_set: Callable[[tuple], None],
                 emit: Callable[[Any, int], None]) -> None: ...

class OutputsStep(SetStep):
    """A func whose outputs go to fixed channels: `run(messages)`'s output sets put natively on
    `targets[k]` for port `ports[k]`; `fire_set(messages)` runs a set holding an error message,
    `emit(output_sets, messages)` delivers what cannot be put natively."""

    def __init__(self, region: Region, inputs: list[int], bell: int, worker: int, node: int,
                 run: Callable[[list], Any], ports: list[int], targets: list[list[int]],
                 fire_set: Callable[[list], None], emit: Callable[[Any, list], None]) -> None: ...

class MessageStep(SetStep):
    """The general path: each set, as a list of Messages, to `fire_set(messages)`."""

    def __init__(self, region: Region, inputs: list[int], bell: int, worker: int, node: int,
                 fire_set: Callable[[list], None]) -> None: ...

class FiringGroups:
    """Per unit of a worker's firing pool: its input channels and its sinks (the channels its
    outputs go to)."""

    def __init__(self, inputs: list[list[int]], sinks: list[list[int]]) -> None: ...

class Region:
    """The shared region of one loaded model: doorbells, channels, worker slots, tensor arena.

    Wait statuses: 0 ready, 1 timeout, 2 closed. `timeout_ms` -1 waits forever.
    """

    def __init__(self, bells: int, channels: list[tuple[str, int, int]], workers: int, arena_bytes: int,
                 name: str) -> None:
        """`channels`: ("shared" | "local", capacity, consumer doorbell) each."""
    def put(self, targets: list[tuple[int, Any]], timeout_ms: int) -> int:
        """Put each message on its channel, all or nothing, once every channel has room."""
    def put_arrays(self, routes: list[tuple[int, ...]], arrays: list[Any], fields: tuple, timeout_ms: int,
                   ledger: TransactionLedger | None = None) -> int:
        """Put `arrays[k]` (None: not fed) on every shared channel of `routes[k]` as tensors of the
        transaction `fields` (transaction_id, start_time, end_time, flow_flags, user_data), all or
        nothing; the `ledger` opens the transaction once it is put."""
    def take(self, channels: list[int], bell: int, max_sets: int, timeout_ms: int) -> list[tuple[Any, ...]] | None:
        """Up to `max_sets` sets of one message per channel; [] on timeout; None once closed."""
    def take_tensors(self, channels: list[int], bell: int, timeout_ms: int,
                     ledger: TransactionLedger | None = None) -> tuple[tuple, list[Any]] | list[Any] | None:
        """One set: (fields, arrays) when every message is a plain tensor of one transaction, else its
        Messages (a list); [] on timeout; None once closed. The `ledger` settles the first message's
        transaction."""
    def wait_for_change(self, channels: list[int], bell: int, stalled: int, timeout_ms: int) -> int:
        """Until the channels hold n > 0 messages in all, n != `stalled` (-1: any n)."""
    def wait_for_close(self, bell: int, timeout_ms: int) -> int: ...
    def ready(self, groups: FiringGroups, limit: int) -> tuple[list[tuple[int, int]], bool]:
        """([(unit, sets)], blocked): each unit of `groups` whose every input holds a message and
        every sink has room, `sets` (1 to `limit`) the input sets it can take without filling a
        sink; `blocked` when some unit's inputs are ready but a sink of it is full."""
    def set_consumer_bell(self, channels: list[int], bell: int) -> None:
        """Make `bell` the doorbell the producers of `channels` ring (before messages flow)."""
    def waiting_transactions(self, channel: int) -> list[int]:
        """The transaction ids of the messages waiting in a shared channel, oldest first."""
    def size(self, channel: int) -> int: ...
    def pops(self, channel: int) -> int:
        """Messages taken from the channel since it was made."""
    def capacity(self, channel: int) -> int: ...
    def set_overwrite(self, channel: int) -> None:
        """Make the channel OVERWRITE (before any put): a push that finds it full drops its
        oldest message, counted in `dropped`, instead of waiting."""
    def overwrites(self, channel: int) -> bool: ...
    def dropped(self, channel: int) -> int:
        """Messages the OVERWRITE channel dropped since it was made."""
    def is_shared(self, channel: int) -> bool: ...
    @property
    def closing(self) -> bool: ...
    def close(self) -> None:
        """Close the region in every process that maps it: every wait returns closed."""
    def detach(self) -> None:
        """Unmap the region in this process (a forked child that does not use it)."""
    def set_pid(self, worker: int, pid: int) -> None: ...
    def running_node(self, worker: int) -> memoryview:
        """A writable one-int view of the node the worker runs now (-1: none)."""
    def set_last_words(self, worker: int, text: str) -> None: ...
    def worker_status(self, worker: int) -> tuple[int, int, str]:
        """(pid, running node, last words) of a worker."""
    def arena_stats(self) -> dict[str, int]:
        """capacity, used, live_blocks, live_bytes, cached_bytes of the tensor arena."""
    def locate(self, array: Any) -> tuple[int, int]:
        """(arena block, region offset of the data) of an array in the arena; (0, 0) otherwise."""
    def use_arena_allocator(self, threshold: int) -> None:
        """Make numpy allocate arrays of at least `threshold` bytes in the arena (this thread)."""

class TransactionLedger:
    """The fed transactions whose outputs have not shown yet (oldest first)."""

    def __init__(self, capacity: int) -> None: ...
    def open(self, meta: Any) -> None: ...
    def open_fields(self, fields: tuple) -> None: ...
    def settle(self, transaction_id: int) -> bool: ...
    def take_oldest(self) -> Any | None: ...
    @property
    def open_count(self) -> int: ...


# -- instance dispatch and input alignment (runtime/bindings/align_bindings.cc) -------------------

class InstanceDispatcher:
    """Picks the instance of a replicated node for a message by its dispatch rule."""

    def __init__(self, instances: int, rule: str = "round_robin") -> None:
        """`rule`: "round_robin" (transaction_id % instances) or "route_label" ((route_label - 1) %
        instances for a message with a route label, else round-robin); GeError otherwise."""
    @property
    def instances(self) -> int: ...
    @property
    def rule(self) -> str: ...
    def route(self, transaction_id: int, route_label: int = 0) -> int: ...

class Aligner:
    """Groups a multi-input func's messages by (transaction id, data label); holds the messages."""

    def __init__(self, inputs: int, max_groups: int, timeout_ms: int, dropout: bool) -> None:
        """GeError unless inputs >= 1, max_groups >= 1 and timeout_ms is -1 (never) or > 0."""
    def push(self, input: int, transaction_id: int, data_label: int, message: Any,
             now_ms: int) -> tuple[tuple[Any, ...] | None, tuple[int, int, tuple[Any, ...]] | None]:
        """(the group this message completed: one message per input | None, the oldest group
        evicted to make room: (transaction_id, data_label, messages with None where missing) | None)."""
    def expire(self, now_ms: int) -> list[tuple[int, int, tuple[Any, ...]]]:
        """Remove and return the groups at least `timeout_ms` old, oldest first (as evicted ones)."""
    def clear(self) -> list[tuple[int, int, tuple[Any, ...]]]:
        """Remove and return every held group."""
    def next_deadline(self) -> int | None:
        """When the oldest held group expires (None: no timeout or no group)."""
    @property
    def inputs(self) -> int: ...
    @property
    def max_groups(self) -> int: ...
    @property
    def timeout_ms(self) -> int: ...
    @property
    def dropout(self) -> bool: ...
    @property
    def held(self) -> int:
        """Incomplete groups held now."""

# -- C++ UDF libraries (runtime/bindings/udf_bindings.cc) -------------------------------------------

class UdfBuffer:
    """The bytes of a message a C++ UDF produced (buffer protocol: 1-D uint8, writable, not copied)."""

class UdfLibrary:
    """A loaded C++ UDF library."""
    @property
    def name(self) -> str: ...
    def funcs(self) -> list[str]: ...

def load_udf_library(data: Buffer, name: str) -> UdfLibrary:
    """Load a C++ UDF library from its bytes; GeError when it cannot be used."""

class UdfInstance:
    """One node's objects of a C++ UDF library."""
    def __init__(self, library: UdfLibrary, facts: dict[str, Any], params: list[tuple[str, str, Any]],
                 funcs: list[str]) -> None: ...
    def init(self) -> tuple[int, str]: ...
    def proc_stream(self, func: str, ports: list[int], input_num: int, depth: int,
                    take: Callable[[int, int], tuple[int, tuple | None]], size: Callable[[int], int],
                    meta: tuple[int, int, int, int], user_data: bytes, exception: tuple[int, int] | None,
                    invoke: Callable[..., Any] | None) -> tuple[int, list[tuple[int, tuple]], list[str],
                                                                tuple[int, int] | None, int]:
        """A stream-input func: `take(input, timeout_ms) -> (status, message tuple or None)`."""

def new_message(meta: Any, kind: Any, payload: Any, as_array: bool = False) -> Any:
    """What dfir.core.messages.new_message makes (a message without return code, error or labels)."""

class UdfCaller:
    """A plain func of a node's C++ UDF objects as the runtime calls it (runtime/bindings/udf_caller.h)."""
    def __init__(self, instance: UdfInstance, func: str, ports: list[int], exceptions: dict[int, tuple[int, int]],
                 invoke: Callable[..., Any] | None, settle: Callable[..., Any]) -> None: ...
    def __call__(self, inputs: list[Any]) -> list[list[tuple[int, Any]]]:
        """The output sets of a call on Messages; what `settle(result, error=None)` returns for a call
        that did not succeed cleanly."""
    @property
    def ports(self) -> list[int]: ...

def configure_udf_messages(message_type: type, meta_type: type, tensor: Any, raw: Any, empty: Any,
                           dtypes: dict[int, Any], kinds: tuple[int, int, int, int], type_numbers: dict[int, int],
                           typed_object: Callable[[int, bytes], Any], typed_raw: Callable[[Any], tuple[int, bytes] | None]) -> None:
    """Set the Python types a C++ UDF's Messages are read and built with, and how records name them."""
def set_udf_log_handler(handler: Callable[[int, str, str, int, str], None] | None) -> None:
    """handler(level, node, func, instance, text) receives C++ UDF log records (None: stderr)."""
