"""What the native core does with a put's arena blocks and with numpy's arrays
(runtime/native/channel_io.h, message_codec.h, arena_allocator.h): a put that fails or times out
holds no block, and the arena allocator gives arena homes to large arrays only, keeping their
values through a resize; and the aligned, zero-filled buffers UDF projects allocate."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.ge.error import GeError
from dfir.runtime import _native, channels
from dfir.runtime.channels import READY, TIMEOUT, ChannelSpec
from dfir.core.messages import Kind, Message, TransactionMeta

BIG = 4096  # float64 elements: 32 KiB, above INLINE_BYTES, so the tensor travels as an arena block


def region_with(*specs: ChannelSpec, arena_bytes: int = 16 << 20):
    return channels.open_region(1 + max(spec.bell for spec in specs), list(specs), 1, arena_bytes, "test")


def big_tensor(i: int) -> Message:
    return Message.tensor(TransactionMeta(i), np.full(BIG, i, dtype=np.float64))


def test_a_put_whose_message_cannot_be_encoded_holds_no_block():
    region = region_with(ChannelSpec(True, 2, 1), ChannelSpec(True, 2, 1), ChannelSpec(False, 2, 1))
    message = big_tensor(1)
    bad = Message(TransactionMeta(1), Kind.TENSOR, [1, 2])
    with pytest.raises(GeError, match="a tensor message must hold a numpy array, got list"):
        region.put([(0, message), (2, message), (1, bad)], 0)
    assert [region.size(c) for c in range(3)] == [0, 0, 0]
    assert region.arena_stats()["live_blocks"] == 0


def test_a_put_that_finds_no_room_holds_no_block():
    region = region_with(ChannelSpec(True, 1, 1), ChannelSpec(True, 1, 1))
    assert region.put([(1, big_tensor(1))], 0) == READY  # channel 1 is full now
    message = big_tensor(2)
    assert region.put([(0, message), (1, message)], 20) == TIMEOUT
    assert (region.size(0), region.size(1), region.arena_stats()["live_blocks"]) == (0, 1, 1)
    assert region.take([1], 1, 1, 0)[0][0].meta.transaction_id == 1
    assert region.put([(0, message), (1, message)], 0) == READY
    (first, second), = region.take([0, 1], 1, 1, 0)
    assert np.shares_memory(first.payload, second.payload)  # one body, a reference per channel
    del first, second
    assert region.arena_stats()["live_blocks"] == 0


def test_the_arena_allocator_homes_large_arrays_and_gives_their_blocks_back():
    region = region_with(ChannelSpec(True, 2, 1))
    seen: dict[str, object] = {}

    def allocate():  # the allocator is numpy's for the calling thread only
        region.use_arena_allocator(1024)
        zeros, small = np.zeros(BIG), np.arange(4.0)
        seen["zeros"] = (region.locate(zeros)[0] != 0, bool((zeros == 0).all()))
        seen["small"] = region.locate(small)
        grown = np.arange(BIG, dtype=np.float64)
        grown.resize(4 * BIG, refcheck=False)  # realloc: a larger block, the values moved along
        seen["grown"] = (region.locate(grown)[0] != 0, bool((grown[:BIG] == np.arange(BIG)).all()))
        seen["live"] = region.arena_stats()["live_blocks"]

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    assert seen == {"zeros": (True, True), "small": (0, 0), "grown": (True, True), "live": 2}
    assert region.arena_stats()["live_blocks"] == 0


# -- aligned buffers of UDF projects -----------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 5), max_size=4),
       dtype=st.sampled_from(["int8", "int32", "float16", "float64", "bool", "uint64"]),
       align=st.sampled_from([1, 2, 8, 64, 128, 4096]))
def test_aligned_zeros_are_zero_filled_writable_and_aligned(shape, dtype, align):
    array = _native.aligned_zeros(shape, np.dtype(dtype), align)
    assert (array.shape, array.dtype, array.flags.c_contiguous, array.flags.writeable) == (
        tuple(shape), np.dtype(dtype), True, True)
    assert array.ctypes.data % align == 0 and not array.any()
    array[...] = 1
    assert array.all() or array.size == 0


@pytest.mark.parametrize("shape, align, problem", [
    ([2], 48, "align must be a power of two"), ([2], 0, "align must be a power of two"),
    ([2, -1], 64, "negative dimension")])
def test_aligned_zeros_refuse_a_bad_align_or_shape(shape, align, problem):
    with pytest.raises(ValueError, match=f"^{problem}$"):
        _native.aligned_zeros(shape, np.dtype(np.int32), align)
