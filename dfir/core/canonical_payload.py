"""The bytes of a UDF payload that its fingerprint hashes: the payload as shipped, with the one
part that changes from process to process made canonical.

cloudpickle ships a class defined in `__main__` (or registered by value) by value, tagged with a
*class tracker id*: a random `uuid4().hex` chosen once per process, which the unpickling process
uses only to rebuild such a class once. Two processes shipping the same class therefore write
different bytes that mean the same thing; the fingerprint must not see the difference, or a
cache directory compiled in one process would never hit in another.

1. Payloads that build no class by value (no `_make_skeleton_class`/`_make_skeleton_enum` name
   in their bytes) are returned as they are.
2. Otherwise the pickle's opcodes are simulated on a symbolic stack (strings, globals, tuples;
   everything else opaque) to find each REDUCE of cloudpickle's skeleton constructors, and the
   opcode that pushed its `class_tracker_id` argument is replaced by a fixed token.
3. Bytes that are not a pickle this simulation understands are returned as they are: the key is
   then only stricter (a cache miss), never looser.
"""
from __future__ import annotations

import hashlib
import pickletools

__all__ = ["canonical_payload", "stable_tracker_ids"]

# callable -> position of `class_tracker_id` among its arguments (cloudpickle 3.x)
_SKELETONS = {
    "cloudpickle.cloudpickle._make_skeleton_class": 4,
    "cloudpickle.cloudpickle._make_skeleton_enum": 5,
}
_TOKEN = b"<class-tracker-id>"
_STRING_OPS = frozenset({"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE",
                         "SHORT_BINSTRING", "BINSTRING", "STRING"})
_MARK = object()


def canonical_payload(data: bytes) -> bytes:
    """`data` with every cloudpickle class tracker id replaced by a fixed token (see above)."""
    spans = _class_id_spans(data)
    if not spans:
        return data
    out, cursor = bytearray(), 0
    for start, end in sorted(spans):
        out += data[cursor:start] + _TOKEN
        cursor = end
    return bytes(out + data[cursor:])


def stable_tracker_ids(data: bytes) -> bytes:
    """`data` with each cloudpickle class tracker id replaced by one derived from the payload's
    canonical bytes and the id's rank, so that the same payload pickles to the same bytes in
    every process while distinct payloads keep distinct ids. The ids are 32 hex digits like the
    random ones, so the pickle's lengths and frames stay valid."""
    spans = _class_id_spans(data)
    if not spans:
        return data
    digest = hashlib.sha256(canonical_payload(data)).hexdigest()
    ids: dict[bytes, bytes] = {}
    out = bytearray(data)
    for start, end in sorted(spans):
        old = data[end - 32:end]
        new = ids.setdefault(old, hashlib.sha256(f"{digest} {len(ids)}".encode()).hexdigest()[:32].encode())
        out[end - 32:end] = new
    return bytes(out)


def _class_id_spans(data: bytes) -> set[tuple[int, int]]:
    """The byte spans of the opcodes pushing class tracker ids (steps 1 to 3 above; none for a
    payload that builds no class by value or that the simulation does not understand)."""
    if b"_make_skeleton_" not in data:
        return set()
    try:
        return _tracker_id_spans(data)
    except (ValueError, IndexError, KeyError, TypeError):
        return set()


class _Str(str):
    """A string pushed by the opcode at bytes [start, end) of the pickle."""

    span: tuple[int, int]


class _Global(str):
    """A global pushed by GLOBAL/STACK_GLOBAL, as `module.qualname`."""


def _tracker_id_spans(data: bytes) -> set[tuple[int, int]]:
    ops = list(pickletools.genops(data))
    ends = [pos for _, _, pos in ops[1:]] + [len(data)]
    stack: list = []
    memo: dict = {}
    spans: set[tuple[int, int]] = set()
    for (opcode, arg, pos), end in zip(ops, ends):
        _step(opcode, arg, (pos, end), stack, memo, spans)
    return spans


def _step(opcode, arg, span, stack: list, memo: dict, spans: set) -> None:
    """Apply one opcode to the symbolic stack; record tracker-id spans at skeleton REDUCEs."""
    name = opcode.name
    if name in _STRING_OPS:
        item = _Str(arg if isinstance(arg, str) else repr(arg))
        item.span = span
        stack.append(item)
    elif name == "GLOBAL":
        stack.append(_Global(arg.replace(" ", ".", 1)))
    elif name == "STACK_GLOBAL":
        qualname, module = stack.pop(), stack.pop()
        stack.append(_Global(f"{module}.{qualname}") if isinstance(module, str) else None)
    elif name == "MEMOIZE":
        memo[len(memo)] = stack[-1]
    elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
        memo[arg] = stack[-1]
    elif name in ("GET", "BINGET", "LONG_BINGET"):
        stack.append(memo[arg])
    elif name == "MARK":
        stack.append(_MARK)
    elif name == "TUPLE":
        stack.append(tuple(_pop_to_mark(stack)))
    elif name in ("TUPLE1", "TUPLE2", "TUPLE3", "EMPTY_TUPLE"):
        count = {"EMPTY_TUPLE": 0, "TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}[name]
        items = stack[len(stack) - count:] if count else []
        del stack[len(stack) - count:]
        stack.append(tuple(items))
    elif name == "REDUCE":
        args, func = stack.pop(), stack.pop()
        _note_tracker_id(func, args, spans)
        stack.append(None)
    else:
        _generic_step(opcode, stack)


def _note_tracker_id(func, args, spans: set) -> None:
    position = _SKELETONS.get(func) if isinstance(func, _Global) else None
    if position is not None and isinstance(args, tuple) and len(args) > position:
        tracker_id = args[position]
        if isinstance(tracker_id, _Str):
            spans.add(tracker_id.span)


def _generic_step(opcode, stack: list) -> None:
    """Any other opcode: pop what it consumes (a mark and its slice included), push opaque items."""
    before = list(opcode.stack_before)
    if pickletools.stackslice in before:
        _pop_to_mark(stack)
        before = [b for b in before if b not in (pickletools.stackslice, pickletools.markobject)]
    if len(before) > len(stack):
        raise IndexError("pickle stack underflow")
    del stack[len(stack) - len(before):]
    stack.extend([None] * len(opcode.stack_after))


def _pop_to_mark(stack: list) -> list:
    items = []
    while True:
        item = stack.pop()
        if item is _MARK:
            return items[::-1]
        items.append(item)
