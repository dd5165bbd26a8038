"""The native channels (runtime/native): FIFO order under random interleavings of producers and
consumers in threads and in forked processes, zero-copy tensors, backpressure, closing, the
dispatcher, the transaction ledger, and the errors their misuse raises."""
from __future__ import annotations

import os
from dataclasses import replace
import pickle
import threading
import time
import traceback

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.core.messages import Kind, Message, TransactionMeta
from dfir.ge.error import GeError
from dfir.runtime import _native, channels
from dfir.runtime.channels import CLOSED, READY, TIMEOUT, ChannelSpec

WAIT_S = 10.0
BIG = 4096  # float64 elements: 32 KiB, above INLINE_BYTES, so the tensor travels as an arena block


def region_with(*specs: ChannelSpec, arena_bytes: int = 64 << 20):
    bells = 1 + max(spec.bell for spec in specs)
    return channels.open_region(bells, list(specs), 1, arena_bytes, "test")


def tensor(i: int, size: int = 2) -> Message:
    return Message.tensor(TransactionMeta(i), np.full(size, i, dtype=np.float64))


def sent_value(message: Message) -> int:
    return message.meta.transaction_id


def in_child(body) -> int:
    """Fork a process that runs `body()` and exits (1 if it raised); returns its pid."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            body()
            code = 0
        except BaseException:  # noqa: BLE001 - the parent sees the exit code, stderr the reason
            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


def child_succeeded(pid: int) -> bool:
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# -- schedules --------------------------------------------------------------------------------

# A side's schedule: per step, how many messages to move (a put moves one) and whether to pause.
steps = st.lists(st.tuples(st.integers(1, 8), st.booleans()), min_size=1, max_size=12)


def produce(region, channel: int, count: int, schedule, size: int = 2) -> None:
    sent = 0
    for _, pause in _cycle(schedule):
        if sent == count:
            return
        assert region.put([(channel, tensor(sent, size))], int(WAIT_S * 1000)) == READY
        sent += 1
        if pause:
            time.sleep(0.0005)


def consume(region, channel: int, bell: int, count: int, schedule) -> list[int]:
    received: list[int] = []
    for batch, pause in _cycle(schedule):
        if len(received) == count:
            return received
        sets = region.take([channel], bell, min(batch, count - len(received)), int(WAIT_S * 1000))
        assert sets, "no message within the wait"
        for (message,) in sets:
            assert float(message.payload[0]) == message.meta.transaction_id  # the body matches
            received.append(sent_value(message))
        if pause:
            time.sleep(0.0005)
    return received


def _cycle(schedule):
    while True:
        yield from schedule


# -- FIFO under interleavings -----------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(capacity=st.integers(1, 6), count=st.integers(1, 60), shared=st.booleans(), big=st.booleans(),
       producer=steps, consumer=steps)
def test_threads_move_every_message_once_in_order(capacity, count, shared, big, producer, consumer):
    region = region_with(ChannelSpec(shared, capacity, 1))
    thread = threading.Thread(target=produce, args=(region, 0, count, producer, BIG if big else 2))
    thread.start()
    received = consume(region, 0, 1, count, consumer)
    thread.join(WAIT_S)
    assert received == list(range(count))
    assert region.take([0], 1, 1, 0) == []
    assert region.arena_stats()["live_blocks"] == 0  # every body's block came back


@settings(max_examples=20, deadline=None)
@given(capacity=st.integers(1, 6), count=st.integers(1, 60), big=st.booleans(), producer=steps,
       consumer=steps, child_produces=st.booleans())
def test_processes_move_every_message_once_in_order(capacity, count, big, producer, consumer,
                                                    child_produces):
    region = region_with(ChannelSpec(True, capacity, 1))
    size = BIG if big else 2
    if child_produces:
        pid = in_child(lambda: produce(region, 0, count, producer, size))
        received = consume(region, 0, 1, count, consumer)
        assert child_succeeded(pid)
    else:
        read_end, write_end = os.pipe()

        def consume_and_report():
            os.write(write_end, pickle.dumps(consume(region, 0, 1, count, consumer)))
            os.close(write_end)
        pid = in_child(consume_and_report)
        os.close(write_end)
        produce(region, 0, count, producer, size)
        assert child_succeeded(pid)
        with os.fdopen(read_end, "rb") as report:
            received = pickle.loads(report.read())
    assert received == list(range(count))
    assert region.arena_stats()["live_blocks"] == 0


@settings(max_examples=10, deadline=None)
@given(count=st.integers(1, 40), producers=st.integers(2, 3))
def test_several_producer_processes_lose_and_duplicate_nothing(count, producers):
    region = region_with(ChannelSpec(True, 4, 1))

    def produce_tagged(tag):
        for i in range(count):
            message = Message.tensor(TransactionMeta(tag * 1000 + i), np.array([tag * 1000 + i], dtype=np.float64))
            assert region.put([(0, message)], int(WAIT_S * 1000)) == READY
    pids = [in_child(lambda tag=tag: produce_tagged(tag)) for tag in range(producers)]
    received = consume(region, 0, 1, count * producers, [(3, False)])
    assert all(child_succeeded(pid) for pid in pids)
    for tag in range(producers):  # each producer's messages arrive once each, in its order
        assert [r for r in received if r // 1000 == tag] == [tag * 1000 + i for i in range(count)]


def test_a_put_to_several_channels_is_all_or_nothing():
    region = region_with(ChannelSpec(True, 1, 1), ChannelSpec(False, 1, 1))
    assert region.put([(1, tensor(0))], 0) == READY  # the local channel is full now
    assert region.put([(0, tensor(1)), (1, tensor(1))], 30) == TIMEOUT
    assert (region.size(0), region.size(1)) == (0, 1)  # nothing of the second put went in
    assert region.take([1], 1, 1, 0)[0][0].meta.transaction_id == 0
    assert region.put([(0, tensor(2)), (1, tensor(2))], 0) == READY
    (first, second), = region.take([0, 1], 1, 4, 0)
    assert (first.meta.transaction_id, second.meta.transaction_id) == (2, 2)


def test_take_waits_until_every_channel_holds_a_message():
    region = region_with(ChannelSpec(True, 2, 1), ChannelSpec(True, 2, 1))
    region.put([(0, tensor(1))], 0)
    assert region.take([0, 1], 1, 1, 20) == []
    assert region.size(0) == 1  # nothing was taken
    threading.Timer(0.05, lambda: region.put([(1, tensor(2))], 0)).start()
    sets = region.take([0, 1], 1, 1, int(WAIT_S * 1000))
    assert [[m.meta.transaction_id for m in pair] for pair in sets] == [[1, 2]]


# -- what travels -----------------------------------------------------------------------------

def test_every_kind_of_message_keeps_its_fields_across_processes():
    region = region_with(ChannelSpec(True, 8, 1))
    meta = TransactionMeta(77, 5, 9, 2, b"UserData123")
    sent = [Message.tensor(meta, np.arange(6, dtype=np.int16).reshape(2, 3)),
            Message.tensor(meta, np.arange(BIG, dtype=np.float32)),
            Message.tensor(meta, np.array(["a", "bc"])),  # no flat layout: pickled
            Message.tensor(meta, np.zeros((1,) * 9, dtype=np.uint8)),  # more dims than a record holds
            Message.from_object(meta, {"boxes": [(1, 2)], "text": "x" * 1000}),
            Message.empty(meta),
            Message.failure(meta, 564000, "UDF n.f raised ValueError: " + "e" * 500),
            Message(meta, Kind.RAW, np.frombuffer(b"raw bytes", np.uint8), route_label=3, data_label=4)]
    pid = in_child(lambda: [region.put([(0, m)], int(WAIT_S * 1000)) for m in sent])
    received = [m for (m,) in region.take([0], 1, 8, int(WAIT_S * 1000))]
    while len(received) < len(sent):
        received += [m for (m,) in region.take([0], 1, 8, int(WAIT_S * 1000))]
    assert child_succeeded(pid)
    for got, want in zip(received, sent):
        assert (got.meta, got.kind, got.ret_code, got.error, got.route_label, got.data_label) == (
            want.meta, want.kind, want.ret_code, want.error, want.route_label, want.data_label)
        if isinstance(want.payload, np.ndarray):
            assert got.payload.dtype == want.payload.dtype
            np.testing.assert_array_equal(got.payload, want.payload)
        else:
            assert got.payload == want.payload


def test_a_non_contiguous_array_arrives_as_its_values():
    region = region_with(ChannelSpec(True, 2, 1))
    array = np.arange(BIG * 2, dtype=np.float64).reshape(2, BIG)[:, ::3]
    region.put([(0, Message.tensor(TransactionMeta(1), array))], 0)
    np.testing.assert_array_equal(region.take([0], 1, 1, 0)[0][0].payload, array)


def test_put_arrays_sends_what_put_sends_for_tensor_messages():
    region = region_with(ChannelSpec(True, 4, 1), ChannelSpec(True, 4, 1), ChannelSpec(True, 4, 1))
    fields = (9, 5, 7, 2, b"user")
    small, big = np.arange(6, dtype=np.int16).reshape(2, 3), np.arange(BIG, dtype=np.float32)[::2]
    assert region.put_arrays([(0,), (1, 2)], [small, big], fields, 0) == READY
    assert region.arena_stats()["live_blocks"] == 1  # the big array: one copy, two references
    (first, second, third), = region.take([0, 1, 2], 1, 1, 0)
    for got, want in ((first, small), (second, big), (third, big)):
        assert (got.meta, got.kind, got.ret_code, got.error, got.route_label, got.data_label) == (
            TransactionMeta(*fields), Kind.TENSOR, 0, "", 0, 0)
        assert got.payload.dtype == want.dtype
        np.testing.assert_array_equal(got.payload, want)
    assert np.shares_memory(second.payload, third.payload)
    assert region.put_arrays([(0,), (1,)], [None, small], fields, 0) == READY  # None: not fed
    assert (region.size(0), region.size(1)) == (0, 1)


def test_put_arrays_is_all_or_nothing_and_holds_nothing_after_a_timeout():
    region = region_with(ChannelSpec(True, 1, 1), ChannelSpec(True, 1, 1))
    assert region.put_arrays([(1,)], [np.zeros(BIG)], (1, 0, 0, 0, b""), 0) == READY  # channel 1 is full
    assert region.put_arrays([(0, 1)], [np.ones(BIG)], (2, 0, 0, 0, b""), 30) == TIMEOUT
    assert (region.size(0), region.size(1)) == (0, 1)
    assert region.arena_stats()["live_blocks"] == 1  # only the first put's block
    region.close()
    assert region.put_arrays([(0,)], [np.ones(2)], (3, 0, 0, 0, b""), 0) == CLOSED


def test_misuse_of_put_arrays_is_an_error_naming_it():
    region = region_with(ChannelSpec(True, 2, 1), ChannelSpec(False, 2, 1))
    cases = [
        (lambda: region.put_arrays([(0,)], [], (1, 0, 0, 0, b""), 0),
         "put_arrays needs one route per array: 1 routes, 0 arrays"),
        (lambda: region.put_arrays([(1,)], [np.ones(2)], (1, 0, 0, 0, b""), 0),
         "put_arrays needs shared channels; 1 is local"),
        (lambda: region.put_arrays([(0,)], [[1, 2]], (1, 0, 0, 0, b""), 0),
         "a tensor message must hold a numpy array, got list"),
        (lambda: region.put_arrays([(0,)], [np.ones(2)], (1, 0, 0), 0),
         "transaction fields must be (transaction_id, start_time, end_time, flow_flags, user_data), "
         "got 3 items"),
        (lambda: region.put_arrays([(0,)], [np.ones(2)], (1, 0, 0, 0, b"u" * 65), 0),
         "transaction user data has 65 bytes; at most 64 travel with a message"),
    ]
    for call, expected in cases:
        with pytest.raises(GeError) as error:
            call()
        assert str(error.value) == expected
    assert region.size(0) == 0 and region.arena_stats()["live_blocks"] == 0



def test_put_arrays_opens_the_transaction_in_a_ledger_only_once_it_is_put():
    region = region_with(ChannelSpec(True, 1, 1))
    ledger = channels.TransactionLedger(8)
    assert region.put_arrays([(0,)], [np.ones(2)], (1, 5, 0, 0, b"u"), 0, ledger) == READY
    assert region.put_arrays([(0,)], [np.ones(2)], (2, 0, 0, 0, b""), 0, ledger) == TIMEOUT  # full
    assert region.put_arrays([()], [np.ones(2)], (3, 0, 0, 0, b""), 0, ledger) == READY  # no channel
    assert ledger.open_count == 1
    assert ledger.take_oldest() == TransactionMeta(1, start_time=5, user_data=b"u")


def test_take_tensors_gives_arrays_and_fields_for_plain_tensors_and_messages_otherwise():
    region = region_with(ChannelSpec(True, 4, 1), ChannelSpec(True, 4, 1))
    ledger = channels.TransactionLedger(8)
    small, big = np.arange(6, dtype=np.int16).reshape(2, 3), np.arange(BIG, dtype=np.float32)
    region.put_arrays([(0,), (1,)], [small, big], (7, 1, 2, 3, b"user"), 0, ledger)
    fields, arrays = region.take_tensors([0, 1], 1, 0, ledger)
    assert fields == (7, 1, 2, 3, b"user") and ledger.open_count == 0
    assert [a.dtype for a in arrays] == [np.int16, np.float32]
    np.testing.assert_array_equal(arrays[0], small)
    np.testing.assert_array_equal(arrays[1], big)
    assert region.locate(arrays[1])[0] != 0  # the big one views its arena block
    failure = Message.failure(TransactionMeta(8), 564000, "broken")
    cases = [(failure, tensor(8)), (Message(TransactionMeta(8), Kind.OBJECT, {"a": 1}), tensor(8)),
             (Message.empty(TransactionMeta(8)), tensor(8)), (tensor(8), tensor(9))]  # 9: another transaction
    for first, second in cases:
        ledger.open(first.meta)
        region.put([(0, first), (1, second)], 0)
        got = region.take_tensors([0, 1], 1, 0, ledger)
        assert type(got) is list and len(got) == 2  # the set's messages, in channel order
        assert (got[0].meta, got[0].kind, got[0].ret_code, got[0].error, got[1].meta) == (
            first.meta, first.kind, first.ret_code, first.error, second.meta)
        assert ledger.open_count == 0  # the first message's transaction is settled
    assert region.take_tensors([0, 1], 1, 20, ledger) == []
    region.close()
    assert region.take_tensors([0, 1], 1, -1, ledger) is None


# -- zero copy --------------------------------------------------------------------------------

def test_a_consumer_in_another_process_reads_the_producers_buffer():
    region = region_with(ChannelSpec(True, 2, 1), ChannelSpec(True, 2, 2))
    read_end, write_end = os.pipe()

    def produce_in_arena():
        region.use_arena_allocator(1024)
        array = np.arange(BIG, dtype=np.float64) * 2  # allocated in the arena by numpy itself
        os.write(write_end, pickle.dumps(region.locate(array)))
        os.close(write_end)
        region.put([(0, Message.tensor(TransactionMeta(1), array[1:]))], int(WAIT_S * 1000))
        (reply,), = region.take([1], 2, 1, int(WAIT_S * 1000))  # the parent wrote into the buffer
        assert array[1] == -1.0 and reply.meta.transaction_id == 2
    pid = in_child(produce_in_arena)
    os.close(write_end)
    (message,), = region.take([0], 1, 1, int(WAIT_S * 1000))
    with os.fdopen(read_end, "rb") as report:
        block, offset = pickle.loads(report.read())
    assert block != 0
    assert region.locate(message.payload) == (block, offset + 8)  # the view starts one float in
    np.testing.assert_array_equal(message.payload[:3], [2.0, 4.0, 6.0])
    message.payload[0] = -1.0
    region.put([(1, tensor(2))], 0)
    assert child_succeeded(pid)


def test_a_block_is_freed_when_the_last_array_viewing_it_goes():
    region = region_with(ChannelSpec(True, 2, 1), ChannelSpec(True, 2, 1))
    message = tensor(1, BIG)
    region.put([(0, message), (1, message)], 0)  # one copy into the arena, two references
    assert region.arena_stats()["live_blocks"] == 1
    (first, second), = region.take([0, 1], 1, 1, 0)
    assert np.shares_memory(first.payload, second.payload)
    view = first.payload[10:20]
    del first, second
    assert region.arena_stats()["live_blocks"] == 1  # `view` still reads the block
    del view
    assert region.arena_stats()["live_blocks"] == 0


def test_small_tensors_travel_inside_the_record():
    region = region_with(ChannelSpec(True, 2, 1))
    region.put([(0, Message.tensor(TransactionMeta(1), np.zeros(channels.INLINE_BYTES, np.uint8)))], 0)
    assert region.arena_stats()["live_blocks"] == 0
    (message,), = region.take([0], 1, 1, 0)
    assert region.locate(message.payload) == (0, 0)


# -- backpressure and closing -----------------------------------------------------------------

def test_a_slow_consumer_bounds_what_is_in_flight():
    capacity, count = 3, 40
    region = region_with(ChannelSpec(True, capacity, 1))
    peak = []

    def slow_consumer():
        for _ in range(count):
            (message,), = region.take([0], 1, 1, int(WAIT_S * 1000))
            peak.append(region.arena_stats()["live_blocks"])
            del message
            time.sleep(0.002)
    thread = threading.Thread(target=slow_consumer)
    thread.start()
    for i in range(count):
        assert region.put([(0, tensor(i, BIG))], int(WAIT_S * 1000)) == READY
    thread.join(WAIT_S)
    # the channel's messages plus the one the consumer holds (and one being encoded)
    assert max(peak) <= capacity + 2
    assert region.arena_stats()["live_blocks"] == 0


def test_a_full_arena_makes_the_producer_wait():
    region = region_with(ChannelSpec(True, 8, 1), arena_bytes=1 << 20)
    assert region.put([(0, tensor(0, 65536))], 0) == READY  # 512 KiB of the 1 MiB arena
    assert region.put([(0, tensor(1, 65536))], 30) == TIMEOUT  # no room for a second one
    threading.Timer(0.05, lambda: region.take([0], 1, 1, 0)).start()
    assert region.put([(0, tensor(1, 65536))], int(WAIT_S * 1000)) == READY


def test_close_wakes_waiters_in_other_processes():
    region = region_with(ChannelSpec(True, 1, 1), ChannelSpec(True, 1, 2))
    region.put([(1, tensor(0))], 0)  # channel 1 is full

    def wait_both():
        assert region.take([0], 1, 1, -1) is None
        assert region.put([(1, tensor(1))], -1) == CLOSED
    pid = in_child(wait_both)
    time.sleep(0.05)
    start = time.monotonic()
    region.close()
    assert child_succeeded(pid) and time.monotonic() - start < 1.0
    assert region.closing and region.take([0], 1, 1, 0) is None
    assert region.take([1], 2, 1, 0)[0][0].meta.transaction_id == 0  # what waits can still be taken


def test_wait_for_change_ignores_a_count_it_already_saw():
    region = region_with(ChannelSpec(True, 4, 1))
    region.put([(0, tensor(0))], 0)
    assert region.wait_for_change([0], 1, -1, 0) == READY
    assert region.wait_for_change([0], 1, 1, 20) == TIMEOUT
    region.put([(0, tensor(1))], 0)
    assert region.wait_for_change([0], 1, 1, 0) == READY


def test_ready_finds_the_units_whose_inputs_hold_a_message_and_whose_sinks_have_room():
    from dfir.runtime import _native
    region = region_with(ChannelSpec(True, 4, 1), ChannelSpec(True, 4, 1), ChannelSpec(True, 2, 2))
    groups = _native.FiringGroups([[0, 1], [1], [2]], [[], [2], []])
    assert region.ready(groups, 64) == ([], False)
    for k in range(3):
        region.put([(1, tensor(k))], 0)
    region.put([(0, tensor(9))], 0)
    # unit 0: one full set; unit 1: three inputs but room for two in its sink; unit 2: nothing yet
    assert region.ready(groups, 64) == ([(0, 1), (1, 2)], False)
    assert region.ready(groups, 1) == ([(0, 1), (1, 1)], False)
    region.put([(2, tensor(0)), (2, tensor(1))], 0)  # the sink is full, its consumer can take two
    assert region.ready(groups, 64) == ([(0, 1), (2, 2)], True)


def test_a_firing_pool_needs_sinks_per_unit_and_doorbells_that_exist():
    from dfir.runtime import _native
    with pytest.raises(GeError) as caught:
        _native.FiringGroups([[0], [1]], [[]])
    assert str(caught.value) == "a firing pool needs the sinks of each of its 2 units, got 1"
    region = region_with(ChannelSpec(True, 4, 1))
    with pytest.raises(GeError) as caught:
        region.set_consumer_bell([0], 5)
    assert str(caught.value) == "doorbell 5 is out of range; the region has 2"


def test_a_put_rings_the_doorbell_set_for_its_channel():
    region = region_with(ChannelSpec(True, 4, 1), ChannelSpec(True, 4, 2))
    region.set_consumer_bell([0, 1], 2)
    woke = []
    waiter = threading.Thread(target=lambda: woke.append(region.wait_for_change([0, 1], 2, -1, 5000)))
    waiter.start()
    time.sleep(0.05)
    region.put([(0, tensor(0))], 0)
    waiter.join(2)
    assert woke == [READY]


def test_a_put_without_ring_leaves_a_sleeping_consumer_asleep_until_ring():
    region = region_with(ChannelSpec(True, 4, 1))
    got = []
    waiter = threading.Thread(target=lambda: got.append(region.take([0], 1, 1, int(WAIT_S * 1000))))
    waiter.start()
    time.sleep(0.1)  # the consumer sleeps on its doorbell
    assert region.put([(0, tensor(7))], 0, False) == READY
    waiter.join(0.3)
    assert waiter.is_alive(), "a put without ring woke the consumer"
    start = time.monotonic()
    region.ring([0])
    waiter.join(WAIT_S)
    assert time.monotonic() - start < WAIT_S / 2
    assert [sent_value(m) for sets in got for m in sets[0]] == [7]


def test_a_put_without_ring_rings_before_it_waits_for_room():
    region = region_with(ChannelSpec(True, 1, 1))
    taken = []

    def consume():
        while len(taken) < 3:
            sets = region.take([0], 1, 1, int(WAIT_S * 1000))
            taken.extend(sent_value(m) for m in sets[0]) if sets else None
    consumer = threading.Thread(target=consume)
    consumer.start()
    time.sleep(0.1)
    start = time.monotonic()
    for k in range(3):  # each put after the first waits for room: the consumer must wake first
        assert region.put([(0, tensor(k))], int(WAIT_S * 1000), False) == READY
    region.ring([0])
    consumer.join(WAIT_S)
    assert taken == [0, 1, 2] and time.monotonic() - start < WAIT_S / 2


def _lean_region():
    """Inputs 0 and 1 (shared), a shared output 2 and a local output 3; worker 0."""
    return region_with(ChannelSpec(True, 8, 1), ChannelSpec(True, 8, 1), ChannelSpec(True, 8, 2),
                       ChannelSpec(False, 8, 2))


def _unexpected(*args):
    raise AssertionError(f"Python was asked to take over: {args!r}")


def test_a_lean_step_runs_the_steps_natively_on_the_latest_transaction_and_the_first_label():
    region = _lean_region()
    big = np.arange(BIG, dtype=np.float64)
    first = Message(TransactionMeta(4, 1, 2, 0, b"u"), Kind.TENSOR, big, data_label=7)
    second = Message.tensor(TransactionMeta(9, 5, 6, 0, b"v"), np.ones(BIG))
    assert region.put([(0, first), (1, second)], 0) == READY
    steps = [(3, lambda a, b: a + b), (4, lambda x: x * 2)]
    step = _native.LeanStep(region, [0, 1], 1, 0, steps, [2, 3], _unexpected, _unexpected)
    assert step.fire(8, 0) == 1
    for channel in (2, 3):
        (out,), = region.take([channel], 2, 8, 0)
        assert (out.meta, out.kind, out.ret_code, out.data_label) == (second.meta, Kind.TENSOR, 0, 7)
        assert out.payload.tolist() == ((big + 1) * 2).tolist()
    assert region.worker_status(0)[1] == -1
    assert step.fire(8, 0) == 0  # nothing waits
    region.close()
    assert step.fire(8, 0) is None


def test_a_lean_step_hands_python_a_step_that_raised_or_returned_no_array_and_a_set_with_an_error():
    region = _lean_region()
    calls = []

    def emit(meta, outcome, raised, data_label, step):
        calls.append(("emit", meta.transaction_id, type(outcome).__name__, raised, data_label, step))
        return READY

    def fire_set(messages):
        calls.append(("fire_set", [(m.meta.transaction_id, m.ret_code, m.error) for m in messages]))

    def second(x):
        if int(x[0]) == 2:
            raise ValueError("two")
        return int(x[0]) if int(x[0]) == 3 else x
    puts = [(0, Message(TransactionMeta(k), Kind.TENSOR, np.array([k]), data_label=k)) for k in (1, 2, 3)]
    puts.append((0, Message.failure(TransactionMeta(4), 5, "upstream")))
    for channel, message in puts:
        assert region.put([(channel, message)], 0) == READY
    steps = [(0, np.asarray), (1, second)]  # the first step gets a Tensor (a fed tensor), as in GE
    assert _native.LeanStep(region, [0], 1, 0, steps, [2], emit, fire_set).fire(8, 0) == 4
    assert calls == [("emit", 2, "ValueError", True, 2, 1), ("emit", 3, "int", False, 3, 1),
                     ("fire_set", [(4, 5, "upstream")])]
    (out,), = region.take([2], 2, 8, 0)
    assert out.payload.tolist() == [1]  # only the set the steps finished natively was put here


def test_a_lean_step_gives_the_raised_exception_its_traceback_and_lets_base_exceptions_through():
    region = _lean_region()
    seen = []

    def emit(meta, outcome, raised, data_label, step):
        seen.append(outcome.__traceback__ is not None)
        return READY

    def boom(x):
        raise ValueError("boom")

    def stop(x):
        raise KeyboardInterrupt
    for k in (1, 2):
        region.put([(0, tensor(k))], 0)
    assert _native.LeanStep(region, [0], 1, 0, [(0, boom)], [2], emit, _unexpected).fire(1, 0) == 1
    assert seen == [True]
    with pytest.raises(KeyboardInterrupt):
        _native.LeanStep(region, [0], 1, 0, [(0, stop)], [2], emit, _unexpected).fire(1, 0)


def test_a_set_step_refuses_what_it_cannot_fire():
    region = _lean_region()

    def refusal(make) -> str:
        with pytest.raises(GeError) as caught:
            make()
        return str(caught.value)
    assert refusal(lambda: _native.LeanStep(region, [], 1, 0, [(0, abs)], [2], _unexpected, _unexpected)) \
        == "a lean step needs at least one input channel"
    assert refusal(lambda: _native.LeanStep(region, [0], 1, 0, [], [2], _unexpected, _unexpected)) \
        == "a lean step needs at least one function"
    assert refusal(lambda: _native.OutputsStep(region, [0], 1, 0, 0, abs, [0, 1], [[2]], _unexpected, _unexpected)) \
        == "an outputs step needs one list of channels per port: 2 ports, 1 lists"
    assert refusal(lambda: _native.MessageStep(region, [], 1, 0, 0, _unexpected)) \
        == "a message step needs at least one input channel"
    assert refusal(lambda: _native.MessageStep(region, [0], 1, 3, 0, _unexpected)) \
        == "worker 3 is out of range; the region has 1"
    assert refusal(lambda: _native.MessageStep(region, [0], 1, 0, 0, _unexpected).fire(0, 0)) \
        == "a set loop fires at least one set at a time"


def test_a_message_step_hands_each_set_to_python_and_its_loop_ends_when_the_region_closes():
    region = _lean_region()
    fired = []

    def fire_set(messages):
        fired.append(([sent_value(m) for m in messages], region.worker_status(0)[1]))
    for k in (1, 2, 3):
        assert region.put([(0, tensor(k)), (1, tensor(10 + k))], 0) == READY
    step = _native.MessageStep(region, [0, 1], 1, 0, 5, fire_set)
    assert step.fire(2, 0) == 2 and step.fire(8, 0) == 1
    assert fired == [([1, 11], 5), ([2, 12], 5), ([3, 13], 5)]  # node 5 runs while a set fires
    assert region.worker_status(0)[1] == -1
    loop = threading.Thread(target=step.run, args=(64,))
    loop.start()
    assert region.put([(0, tensor(4)), (1, tensor(14))], 0) == READY
    deadline = time.monotonic() + WAIT_S
    while len(fired) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    region.close()
    loop.join(WAIT_S)
    assert not loop.is_alive() and fired[3] == ([4, 14], 5)


def test_an_outputs_step_puts_the_output_sets_natively_and_hands_python_the_rest():
    region = _lean_region()
    handed = []

    def run(messages):
        k = sent_value(messages[0])
        if k == 2:
            return iter([[(7, Message.tensor(messages[0].meta, np.array([k * 100])))]])  # no list
        return [[(7, Message.tensor(messages[0].meta, np.array([k * 100])))]]

    def emit(output_sets, messages):
        handed.append(("emit", [[(port, m.payload.tolist()) for port, m in s] for s in output_sets]))

    def fire_set(messages):
        handed.append(("fire_set", [m.error for m in messages]))
    for message in (tensor(1), tensor(2), Message.failure(TransactionMeta(3), 9, "upstream")):
        assert region.put([(0, replace(message, data_label=6))], 0) == READY
    step = _native.OutputsStep(region, [0], 1, 0, 0, run, [7], [[2]], fire_set, emit)
    assert step.sinks == [2] and step.fire(8, 0) == 3
    assert handed == [("emit", [[(7, [200])]]), ("fire_set", ["upstream"])]
    (out,), = region.take([2], 2, 8, 0)  # relabelled with its input's data label on the way
    assert (sent_value(out), out.payload.tolist(), out.data_label) == (1, [100], 6)


# -- routing and bookkeeping ------------------------------------------------------------------

def test_the_ledger_returns_the_unsettled_transactions_oldest_first():
    ledger = channels.TransactionLedger(3)
    for i in (1, 2, 3, 2):  # a repeated id opens a second entry; four entries, capacity 3
        ledger.open(TransactionMeta(i, start_time=i * 10, user_data=b"u%d" % i))
    assert ledger.open_count == 3  # transaction 1 was forgotten
    assert ledger.settle(2) and not ledger.settle(9)
    assert ledger.take_oldest() == TransactionMeta(3, start_time=30, user_data=b"u3")
    assert ledger.take_oldest() == TransactionMeta(2, start_time=20, user_data=b"u2")
    assert ledger.take_oldest() is None and ledger.open_count == 0


def test_the_ledger_opens_a_transaction_from_its_fields():
    ledger = channels.TransactionLedger(2)
    ledger.open_fields((4, 1, 2, 3, b"ud"))
    assert ledger.take_oldest() == TransactionMeta(4, 1, 2, 3, b"ud")


def test_recovery_replaces_each_open_transaction_once_and_keeps_what_it_is_told():
    ledger = channels.TransactionLedger(8)
    for i in (1, 2, 3, 4):
        ledger.open(TransactionMeta(i))
    replaced = ledger.replace_open({2}, {3: 564001}, 545000)
    assert [(meta.transaction_id, code) for meta, code in replaced] == [(1, 545000), (3, 564001), (4, 545000)]
    assert ledger.is_stale(1, 0) and not ledger.is_stale(1, 545000) and not ledger.is_stale(2, 0)
    ledger.open(TransactionMeta(5))
    again = ledger.replace_open(set(), {}, 545000)  # a second death: 1, 3 and 4 have their failures on the way
    assert [(meta.transaction_id, code) for meta, code in again] == [(2, 545000), (5, 545000)]
    assert not ledger.settle_result(3, 0)  # a late result of a replaced transaction does not settle it
    assert ledger.settle_result(3, 564001) and ledger.settle_result(5, 545000)
    assert [meta.transaction_id for meta in ledger.open_transactions()] == [1, 2, 4]


# -- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("specs, bells, expected", [
    ([("shared", 0, 0)], 1, "channel 0 has capacity 0; expected >= 1"),
    ([("shared", 2, 0), ("local", 2, 5)], 2, "channel 1 rings doorbell 5 but the region has 2"),
    ([("pipe", 2, 0)], 1, "channel kind 'pipe' is not 'shared' or 'local'"),
])
def test_a_malformed_region_is_refused(specs, bells, expected):
    from dfir.runtime import _native
    with pytest.raises(GeError) as error:
        _native.Region(bells, specs, 1, 1 << 20, "bad")
    assert str(error.value) == expected


def test_misuse_of_channels_is_an_error_naming_it():
    region = region_with(ChannelSpec(True, 2, 1), arena_bytes=1 << 20)
    cases = [
        (lambda: region.take([], 1, 1, 0), "take needs at least one channel and one set"),
        (lambda: region.take([5], 1, 1, 0), "channel 5 is out of range; the region has 1"),
        (lambda: region.take([0], 9, 1, 0), "doorbell 9 is out of range; the region has 2"),
        (lambda: region.put([(0, Message(TransactionMeta(1), Kind.TENSOR, [1, 2]))], 0),
         "a tensor message must hold a numpy array, got list"),
        (lambda: region.put([(0, tensor(1, 1 << 18))], 0),
         "a message body of 2097152 bytes does not fit in the tensor arena of 1048576 bytes"),
        (lambda: region.put([(0, Message.empty(TransactionMeta(1, user_data=b"u" * 65)))], 0),
         "transaction user data has 65 bytes; at most 64 travel with a message"),
    ]
    for call, expected in cases:
        with pytest.raises(GeError) as error:
            call()
        assert str(error.value) == expected
    assert region.size(0) == 0 and region.arena_stats()["live_blocks"] == 0
