"""The driver port's two calls per message and the locks it shares with Python: `DriverPort.feed`
and `.fetch` take their arguments as any method does (positional or by keyword, the same
refusals), and a `PortLock` behaves as the `threading.Lock` it replaces (timeouts, errors, any
thread may release it, a wait lets signal handlers run)."""
from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.frontend.dataflow import names
from dfir.runtime import _native
from dfir.runtime.driver.model import RuntimeModel
from dfir.runtime.driver.status import FEED_TIMEOUT

WAIT_MS = 5000


def inc(x):
    return x + 1


@pytest.fixture(scope="module")
def model():
    """A loaded model of x + 1."""
    names.reset()
    x = df.FlowData(name="x")
    with dfir.load(dfir.compile(df.FlowGraph([df.pyflow(inc).fnode()(x)])).om) as loaded:
        yield loaded


def test_feed_and_fetch_take_keywords_and_default_values(model: RuntimeModel):
    port = model._port
    assert port.feed(feed=[np.array([1], np.int32)], flow_info=None, timeout=-1, partial_inputs=False) == 0
    arrays, info, ret = port.fetch(None, timeout=WAIT_MS, values=True)
    assert ([a.tolist() for a in arrays], info.transaction_id, ret) == ([[2]], 1, 0)
    assert port.feed([np.array([5], np.int32)], None, -1, 0) == 0  # what numbers say of their truth
    tensors, _, _ = port.fetch(indexes=[0], timeout=WAIT_MS)
    assert tensors[0].numpy().tolist() == [6]


@pytest.mark.parametrize("call, message", [
    (lambda port: port.feed([1]), "feed() missing required argument 'flow_info'"),
    (lambda port: port.feed([1], None, -1, False, 5), "feed() takes at most 4 arguments (5 given)"),
    (lambda port: port.feed([1], None, -1, partial=True), "feed() got an unexpected keyword argument 'partial'"),
    (lambda port: port.feed([1], None, -1, False, feed=[1]), "feed() got multiple values for argument 'feed'"),
    (lambda port: port.feed([1], None, -1, "yes"), "feed(): partial_inputs must be a bool, not str"),
    (lambda port: port.fetch(None), "fetch() missing required argument 'timeout'"),
    (lambda port: port.fetch(None, -1, []), "fetch(): values must be a bool, not list"),
])
def test_arguments_that_do_not_fit_are_a_type_error(model: RuntimeModel, call, message):
    with pytest.raises(TypeError) as error:
        call(model._port)
    assert str(error.value) == message


def test_a_port_lock_acquires_and_refuses_as_a_threading_lock():
    lock = _native.PortLock()
    assert (lock.acquire(), lock.locked(), lock.acquire(False), lock.acquire(timeout=0.02)) == (True, True, False, False)
    lock.release()
    assert not lock.locked()
    with pytest.raises(RuntimeError, match="^release unlocked lock$"):
        lock.release()
    with pytest.raises(ValueError, match="^timeout value must be positive$"):
        lock.acquire(timeout=-2)
    with pytest.raises(ValueError, match="^can't specify a timeout for a non-blocking call$"):
        lock.acquire(False, 1)
    with lock:
        assert lock.locked()
    assert not lock.locked()


def test_another_thread_may_release_a_port_lock_and_wakes_its_waiter():
    lock = _native.PortLock()
    lock.acquire()
    releaser = threading.Timer(0.05, lock.release)
    releaser.start()
    start = time.monotonic()
    assert lock.acquire(timeout=5)
    assert 0.04 <= time.monotonic() - start < 4
    lock.release()
    releaser.join()


def test_a_wait_for_a_port_lock_runs_signal_handlers():
    lock = _native.PortLock()
    lock.acquire()

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            lock.acquire()
        assert time.monotonic() - start < 2
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert lock.locked()  # still the first holder's


def test_a_feed_waits_for_the_feed_lock_python_holds(model: RuntimeModel):
    scheduler_lock = model._scheduler._submit_lock
    assert type(scheduler_lock) is _native.PortLock
    scheduler_lock.acquire()
    try:
        ret = model.feed_data([np.array([1], np.int32)], timeout=30)
        assert ret == FEED_TIMEOUT
    finally:
        scheduler_lock.release()
    assert model.feed_data([np.array([1], np.int32)]) == 0
    tensors, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert (tensors[0].numpy().tolist(), ret) == ([2], 0)
