"""Streams that relay a channel between the places of a model on a cluster (the driver, each
server's Ray actor): one TCP connection per relayed channel and producing place, carrying that
place's messages of the channel, in order (runtime/driver/ray_cluster.py opens them).

A connection starts with HELLO: the model's token (a secret the driver made, so that nothing but
the model's own places can speak on its streams), the channel and the producing place (-1: the
driver). Then the producer writes frames, each a batch of up to RELAY_BATCH messages that ends
early once its array bodies reach FRAME_BYTES (so a large tensor travels in a frame of its own
and is delivered before the next one is read):

    FRAME (the pickle's length, the count of raw bodies), each raw body's length (8 bytes),
    the messages pickled (protocol 5), the raw bodies

A buffer of at least OUT_OF_BAND_BYTES (a tensor's body) leaves the pickle as one of pickle's
out-of-band buffers: the producer writes it to the socket from where it lies (the arena block its
node filled) and the consumer reads it from the socket straight into an arena block of its own
region, which the channel then carries without copying. So a tensor crosses with two copies, both
the kernel's: into the socket on one side, out of it on the other. (When the consumer's arena has
no room, the body is read into process memory and the channel copies it: `StreamStats` counts
those bytes.)

A stream ends when its place closes, when its peer goes away (the end of the stream, a reset: a
frame cut short is dropped), or when its place stops it (`stop`: its peer's actor died): a send
loop that was told to stop takes no message after it returned.
"""
from __future__ import annotations

import hmac
import pickle
import socket
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import cloudpickle
import numpy as np

from dfir.runtime import channels

RELAY_BATCH = 64                # messages one frame carries at most
FRAME_BYTES = 1 << 20           # a frame ends once its messages' array bodies reach this many bytes
OUT_OF_BAND_BYTES = 64 << 10    # buffers this large or larger travel raw, after their frame's pickle
HELLO_TIMEOUT_S = 10.0          # how long a listener waits for a new connection's HELLO
STOP_POLL_MS = 100              # how long a stoppable send loop waits for messages before it looks again
TOKEN_BYTES = 32
HELLO = struct.Struct(f"!{TOKEN_BYTES}sii")  # token, channel, producing place (-1: the driver)
FRAME = struct.Struct("!QI")                 # pickle bytes, raw bodies
BODY = struct.Struct("!Q")
DRIVER_PLACE = -1

# What a peer that went away looks like on a socket: its end closed, reset, or our own shutdown.
PEER_GONE = (ConnectionError, EOFError)


@dataclass
class StreamStats:
    """What one place's streams received: frames, and the bytes of raw bodies read straight into
    the arena (`arena_bytes`) or, the arena being full, into process memory (`copied_bytes`, which
    the channel copies into the arena)."""

    frames: int = 0
    arena_bytes: int = 0
    copied_bytes: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def count(self, arena_bytes: int, copied_bytes: int) -> None:
        with self._lock:
            self.frames += 1
            self.arena_bytes += arena_bytes
            self.copied_bytes += copied_bytes

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {"frames": self.frames, "arena_bytes": self.arena_bytes, "copied_bytes": self.copied_bytes}


class Sockets:
    """The stream sockets of one place, shut down together when the place closes (which wakes
    every thread blocked on one of them)."""

    def __init__(self):
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False

    def add(self, sock: socket.socket) -> bool:
        """Track `sock`; False (and `sock` closed) once the place closed."""
        with self._lock:
            if not self._closed:
                self._open.add(sock)
                return True
        sock.close()
        return False

    def interrupt(self, sock: socket.socket) -> None:
        """Shut `sock` down without closing it: the thread relaying over it sees the stream end
        and closes it (`discard`), so its descriptor is never reused under that thread."""
        _shutdown(sock)

    def discard(self, sock: socket.socket) -> None:
        """Stop tracking `sock`, shut it down and close it."""
        with self._lock:
            self._open.discard(sock)
        _shutdown(sock)  # the peer sees the end even while a forked worker still holds the descriptor
        sock.close()

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _shutdown(sock)


class Listener:
    """Accepts the streams of one place on (`host`, a free port): each connection whose HELLO
    carries `token` goes to `on_stream(sock, channel, source)` (source None: the driver), on a
    thread of its own; any other is closed."""

    def __init__(self, host: str, token: bytes, sockets: Sockets,
                 on_stream: Callable[[socket.socket, int, int | None], None]):
        self._token = token
        self._sockets = sockets
        self._on_stream = on_stream
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._server = socket.create_server((host, 0), family=family, backlog=64)
        self.address: tuple[str, int] = self._server.getsockname()[:2]
        threading.Thread(target=self._accept, daemon=True, name="dfir:streams:accept").start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._greet, args=(conn,), daemon=True, name="dfir:streams:relay").start()

    def _greet(self, conn: socket.socket) -> None:
        if not self._sockets.add(conn):
            return
        try:
            conn.settimeout(HELLO_TIMEOUT_S)
            hello = read_exact(conn, HELLO.size)
            token, channel, source = HELLO.unpack(hello)
            if not hmac.compare_digest(token, self._token):
                raise ConnectionError("wrong token")
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, EOFError):
            self._sockets.discard(conn)
            return
        self._on_stream(conn, channel, None if source == DRIVER_PLACE else source)

    def close(self) -> None:
        _shutdown(self._server)  # wakes the accept
        self._server.close()


def dial(address: tuple[str, int], token: bytes, channel: int, source: int | None, timeout_s: float) -> socket.socket:
    """A stream to the place listening at `address` for `channel` as produced in `source` (None:
    the driver), its HELLO sent; OSError when it cannot connect within `timeout_s`."""
    sock = socket.create_connection(address, timeout=timeout_s)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(HELLO.pack(token, channel, DRIVER_PLACE if source is None else source))
        sock.settimeout(None)
    except BaseException:
        sock.close()
        raise
    return sock


def send_loop(region, channel: int, bell: int, sock: socket.socket, fail: Callable[[Exception], None],
              stop: threading.Event | None = None) -> None:
    """Write `channel`'s messages (this place's copy, its consumer's doorbell `bell`) to `sock`,
    in frames of up to RELAY_BATCH, until the region closes, the peer goes away or `stop` is set
    (looked at every STOP_POLL_MS: once the loop has returned it takes nothing more); any other
    error goes to `fail`."""
    wait_ms = -1 if stop is None else STOP_POLL_MS
    while stop is None or not stop.is_set():
        sets = region.take([channel], bell, RELAY_BATCH, wait_ms)
        if sets is None:
            return
        try:
            for frame in frames_of([s[0] for s in sets]):
                write_frame(sock, frame)
        except PEER_GONE:
            return
        except OSError as error:
            return None if region.closing or _is_set(stop) else fail(error)
        except Exception as error:  # a message that does not pickle
            return fail(error)


def receive_loop(region, channel: int, sock: socket.socket, stats: StreamStats,
                 fail: Callable[[Exception], None], stop: threading.Event | None = None) -> None:
    """Put the messages of the frames read from `sock` on `channel` (this place's copy), in
    order, until the peer goes away, the region closes or `stop` is set (and `sock` shut down);
    any other error goes to `fail`. A frame cut short by the end of the stream is dropped."""
    region.use_arena_allocator(OUT_OF_BAND_BYTES)  # this thread's large arrays: the raw bodies
    while True:
        try:
            messages = read_frame(sock, region, stats)
        except PEER_GONE:
            return
        except OSError as error:
            return None if region.closing or _is_set(stop) else fail(error)
        except Exception as error:  # a frame that does not unpickle
            return fail(error)
        try:
            if not put_all(region, channel, messages):
                return
        except Exception as error:
            return fail(error)


def _is_set(stop: threading.Event | None) -> bool:
    return stop is not None and stop.is_set()


def frames_of(messages: list) -> list[list]:
    """`messages` cut into frames, in order: a frame ends once its array bodies reach FRAME_BYTES,
    so a large tensor travels alone and its consumer gets it before the next is read."""
    frames, frame, size = [], [], 0
    for message in messages:
        frame.append(message)
        size += message.payload.nbytes if isinstance(message.payload, np.ndarray) else 0
        if size >= FRAME_BYTES:
            frames.append(frame)
            frame, size = [], 0
    return frames + [frame] if frame else frames


def write_frame(sock: socket.socket, messages: list) -> None:
    """One frame of `messages` (see the module docstring); raw bodies are written from where they lie."""
    bodies: list[memoryview] = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        view = buffer.raw()
        if view.nbytes < OUT_OF_BAND_BYTES:
            return True  # in the pickle
        bodies.append(view)
        return False

    pickled = cloudpickle.dumps(messages, protocol=5, buffer_callback=out_of_band)
    head = FRAME.pack(len(pickled), len(bodies)) + b"".join(BODY.pack(body.nbytes) for body in bodies)
    sock.sendall(head + pickled)
    for body in bodies:
        sock.sendall(body)


def read_frame(sock: socket.socket, region, stats: StreamStats) -> list:
    """The messages of one frame; raw bodies are read into numpy arrays, which this thread's
    allocator places in the arena. EOFError when the stream ends."""
    length, count = FRAME.unpack(read_exact(sock, FRAME.size))
    sizes = [size for (size,) in BODY.iter_unpack(read_exact(sock, BODY.size * count))]
    pickled = read_exact(sock, length)
    bodies = [np.empty(size, dtype=np.uint8) for size in sizes]
    in_arena = 0
    for body in bodies:
        read_into(sock, memoryview(body))
        in_arena += body.nbytes if region.locate(body)[0] else 0
    stats.count(in_arena, sum(sizes) - in_arena)
    return cloudpickle.loads(pickled, buffers=bodies)


def read_exact(sock: socket.socket, size: int) -> bytearray:
    """`size` bytes from `sock`; EOFError when it ends first."""
    data = bytearray(size)
    read_into(sock, memoryview(data))
    return data


def read_into(sock: socket.socket, view: memoryview) -> None:
    """Fill `view` from `sock`; EOFError when it ends first."""
    done = 0
    while done < len(view):
        got = sock.recv_into(view[done:])
        if got == 0:
            raise EOFError("the stream ended")
        done += got


def put_all(region, channel: int, messages: list) -> bool:
    """Put each message on `channel`, in order, waiting for room; False once the region closed."""
    return all(region.put([(channel, message)], -1) != channels.CLOSED for message in messages)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # not connected, or closed already
        pass

