"""Large tensors between the places of a model on Ray: the relay streams (runtime/driver/relay_streams.py)
carry a tensor body with two copies, both the kernel's (into the socket, out of it straight into an arena
block), and a model over two Ray nodes moves a 64 MiB tensor that way on every hop."""
from __future__ import annotations

import os
import re
import socket
import threading
import tracemalloc

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # every Ray process on the loopback (test_ray_cluster's fixture)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import ray  # noqa: E402

import dfir  # noqa: E402
import dfir.dataflow as df  # noqa: E402
import test_ray_cluster  # noqa: E402
from dfir.core.messages import Kind, Message, TransactionMeta  # noqa: E402
from dfir.ge.error import GeError  # noqa: E402
from dfir.runtime import channels  # noqa: E402
from dfir.runtime.driver import ray_cluster, relay_streams  # noqa: E402
from dfir.runtime.driver.relay_streams import StreamStats  # noqa: E402
from test_ray_cluster import WAIT_MS, chain, ray_options, server_actors_alive, wait_until  # noqa: E402

cluster = test_ray_cluster.cluster  # its fixture: two Ray nodes on the loopback, for this module too

MIB = 1 << 20
BIG = 64 * MIB


def region(arena_bytes: int = 256 * MIB):
    """A region with one shared channel (consumer doorbell 1)."""
    return channels.open_region(2, [channels.ChannelSpec(True, 8, 1)], 1, arena_bytes, "test-streams")


def taken(source, count: int = 1) -> list:
    """`count` messages off `source`'s channel."""
    sets = source.take([0], 1, count, 5000)
    assert len(sets) == count
    return [s[0] for s in sets]


class RecordingSocket:
    """A socket whose `sendall` remembers the address of every raw body it was given."""

    def __init__(self, sock: socket.socket):
        self._sock = sock
        self.raw_addresses: list[int] = []

    def sendall(self, data) -> None:
        view = memoryview(data)
        if view.nbytes >= relay_streams.OUT_OF_BAND_BYTES:
            self.raw_addresses.append(np.frombuffer(view, dtype=np.uint8).ctypes.data)
        self._sock.sendall(data)


def on_thread(target, *args):
    """`target(*args)` on a thread of its own (a receiving thread's numpy allocator is the arena's)."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(target(*args)))
    thread.start()
    return thread, result


def read_in_arena(sock: socket.socket, into, stats: StreamStats) -> list:
    into.use_arena_allocator(relay_streams.OUT_OF_BAND_BYTES)
    return relay_streams.read_frame(sock, into, stats)


def test_a_64_mib_tensor_crosses_a_stream_with_no_copy_but_the_kernels():
    """The sender hands the socket the producer's arena block itself; the receiver reads the body
    into an arena block of its own region, which its channel then carries without copying; and
    nothing on either side copies the body anywhere else: tracemalloc sees every numpy buffer
    (the arena's too) and Python's, and the most alive at once is that one block."""
    source, target = region(), region()
    body = np.arange(BIG // 4, dtype=np.float32)
    assert source.put([(0, Message.tensor(TransactionMeta(7, 1, 2), body))], -1) == channels.READY
    (message,) = taken(source)
    sent_from = message.payload.ctypes.data
    assert source.locate(message.payload)[0] != 0  # the producer's arena block
    ours, theirs = socket.socketpair()
    recording, stats = RecordingSocket(ours), StreamStats()
    tracemalloc.start()
    try:
        reader, received = on_thread(read_in_arena, theirs, target, stats)
        relay_streams.write_frame(recording, [message])
        reader.join(30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        ours.close()
        theirs.close()
    assert peak < BIG + MIB, f"{peak} bytes at once: the body was copied"
    assert recording.raw_addresses == [sent_from]
    ((arrived,),) = received
    assert (arrived.meta.transaction_id, arrived.meta.start_time, arrived.meta.end_time) == (7, 1, 2)
    assert np.array_equal(arrived.payload, body)
    block, offset = target.locate(arrived.payload)
    assert block != 0
    assert relay_streams.put_all(target, 0, [arrived])
    (delivered,) = taken(target)
    assert target.locate(delivered.payload) == (block, offset)  # the channel carried the same block
    assert stats.as_dict() == {"frames": 1, "arena_bytes": BIG, "copied_bytes": 0}


def test_small_tensors_objects_and_errors_travel_inside_the_frame():
    source, target = region(), region()
    messages = [Message.tensor(TransactionMeta(1), np.array([[1, 2]], dtype=np.int32)),
                Message(TransactionMeta(2, user_data=b"abc"), Kind.OBJECT, {"k": [1, 2.5]}),
                Message.failure(TransactionMeta(3), 564000, "UDF f raised ValueError: no"),
                Message.tensor(TransactionMeta(4), np.ones(1000, dtype=np.float64))]
    assert source.put([(0, m) for m in messages[:1]], -1) == channels.READY
    ours, theirs = socket.socketpair()
    stats = StreamStats()
    recording = RecordingSocket(ours)
    reader, received = on_thread(read_in_arena, theirs, target, stats)
    relay_streams.write_frame(recording, taken(source) + messages[1:])
    reader.join(30)
    ours.close()
    theirs.close()
    (arrived,) = received
    assert recording.raw_addresses == []
    assert [m.meta for m in arrived] == [m.meta for m in messages]
    assert arrived[0].payload.tolist() == [[1, 2]] and arrived[0].payload.dtype == np.int32
    assert arrived[1].kind == Kind.OBJECT and arrived[1].payload == {"k": [1, 2.5]}
    assert (arrived[2].ret_code, arrived[2].error) == (564000, "UDF f raised ValueError: no")
    assert np.array_equal(arrived[3].payload, np.ones(1000))
    assert stats.as_dict() == {"frames": 1, "arena_bytes": 0, "copied_bytes": 0}


def test_a_large_tensor_ends_its_frame_and_small_messages_share_one():
    small, large = np.zeros(10, dtype=np.int32), np.zeros(relay_streams.FRAME_BYTES, dtype=np.uint8)
    messages = [Message.tensor(TransactionMeta(t), large if t in (3, 4) else small) for t in range(7)]
    messages.insert(1, Message.failure(TransactionMeta(9), 564000, "no"))
    frames = relay_streams.frames_of(messages)
    assert [[m.meta.transaction_id for m in frame] for frame in frames] == [[0, 9, 1, 2, 3], [4], [5, 6]]


def test_a_stream_relays_in_order_and_ends_quietly_when_its_peer_goes_away():
    """send_loop and receive_loop between two regions: messages arrive in order; closing the
    sending region ends both loops without calling `fail`."""
    source, target = region(), region()
    ours, theirs = socket.socketpair()
    failures: list = []
    sender = threading.Thread(target=relay_streams.send_loop, args=(source, 0, 1, ours, failures.append))
    receiver = threading.Thread(target=relay_streams.receive_loop,
                                args=(target, 0, theirs, StreamStats(), failures.append))
    arrived: list = []
    fetcher = threading.Thread(target=lambda: arrived.extend(m for _ in range(20) for m in taken(target)))
    sender.start()
    receiver.start()
    fetcher.start()  # the channels hold 8 messages each: the stream must be read as it is written
    for t in range(20):
        payload = np.full(t * 10_000, t, dtype=np.int32)  # some inside the frame, some raw
        assert source.put([(0, Message.tensor(TransactionMeta(t), payload))], 5000) == channels.READY
    fetcher.join(10)
    assert [(m.meta.transaction_id, m.payload.size) for m in arrived] == [(t, t * 10_000) for t in range(20)]
    assert all((m.payload == t).all() for t, m in enumerate(arrived))
    source.close()
    sender.join(10)
    ours.close()
    receiver.join(10)
    theirs.close()
    assert not sender.is_alive() and not receiver.is_alive()
    assert failures == []


def test_a_listener_serves_only_streams_that_carry_the_models_token():
    token = b"t" * relay_streams.TOKEN_BYTES
    served: list = []
    sockets = relay_streams.Sockets()
    listener = relay_streams.Listener("127.0.0.1", token, sockets,
                                      lambda sock, channel, source: served.append((channel, source)))
    try:
        stranger = relay_streams.dial(listener.address, b"x" * relay_streams.TOKEN_BYTES, 3, None, 5.0)
        stranger.settimeout(5.0)
        assert stranger.recv(1) == b""  # closed on us
        stranger.close()
        friend = relay_streams.dial(listener.address, token, 3, None, 5.0)
        other = relay_streams.dial(listener.address, token, 4, 1, 5.0)
        wait_until(lambda: len(served) == 2, seconds=10.0)
        assert sorted(served, key=str) == [(3, None), (4, 1)]
        friend.close()
        other.close()
    finally:
        listener.close()
        sockets.shutdown()


# -- on two Ray nodes -------------------------------------------------------------------------

@df.pyflow
def double(x):
    return x * 2


@df.pyflow
def add_one(x):
    return x + 1


def test_a_64_mib_tensor_crosses_each_hop_straight_into_the_arena(cluster, tmp_path):
    """driver -> server 0 -> server 1 -> driver: every place reads the body from its stream
    straight into its arena (nothing copied into process memory), and the result is right."""
    first, second = double.fnode(), add_one.fnode()
    options = ray_options(tmp_path, {first.name: "0:0:0", second.name: "0:1:0"})
    x = np.arange(BIG // 4, dtype=np.float32)
    with dfir.load(dfir.compile(chain(first, second), options).om) as model:
        model.feed_data([x])
        tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
        assert ret == 0, ret.message
        assert np.array_equal(tensors[0].numpy(), x * 2 + 1)
        scheduler = model._scheduler
        stats = ray.get([actor.stream_stats.remote() for actor in scheduler.actors], timeout=WAIT_MS / 1000)
        one_frame = {"frames": 1, "arena_bytes": BIG, "copied_bytes": 0}
        assert stats == [one_frame, one_frame]  # server 0 from the driver, server 1 from server 0
        assert scheduler.stream_stats() == one_frame  # the driver from server 1


def test_a_stream_that_cannot_connect_fails_the_load_naming_it_and_leaves_no_actors(cluster, tmp_path, monkeypatch):
    def refuse(address, *args):
        raise ConnectionRefusedError(111, "Connection refused")
    monkeypatch.setattr(ray_cluster, "dial", refuse)  # the driver's streams; the actors' are their own
    node = add_one.fnode()
    om = dfir.compile(chain(node), ray_options(tmp_path, {node.name: "0:1:0"})).om
    with pytest.raises(GeError) as error:
        dfir.load(om)
    assert re.fullmatch(r"relaying channel \d+ from (the driver to server index 0|server index 0 to the driver): "
                        r"cannot connect to 127\.0\.0\.1:\d+ \(ConnectionRefusedError: \[Errno 111\] Connection "
                        r"refused\)", error.value.error_message), error.value.error_message
    wait_until(lambda: server_actors_alive() == 0)
