"""What is verified is what runs: a loaded model uses a private sealed copy of its `.om`, so a file
overwritten (by `save()` or in place), truncated or raced while it loads changes no result, kills
no worker and runs no code; and every `.om` dfir writes is replaced atomically."""
from __future__ import annotations

import os
import pickle
import random
import stat
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import dfir
import dfir.dataflow as df
from dfir.core import data_type as dt
from dfir.core.atomic_file import TEMP_PREFIX, write_atomic
from dfir.ge.error import GeError
from dfir.ge.graph import Graph
from dfir.ge.offline_compile import build_finalize, build_initialize, build_model, save_model
from dfir.om.keys import SIGNING_KEY_ENV, TRUSTED_KEYS_ENV
from dfir.om.schema import PartitionType
from dfir.om.signature import unsigned
from dfir.runtime.om import read_om

WAIT_MS = 30_000
SHAPE = (64, 64)


@pytest.fixture(autouse=True)
def no_key_env(monkeypatch):
    monkeypatch.delenv(SIGNING_KEY_ENV, raising=False)
    monkeypatch.delenv(TRUSTED_KEYS_ENV, raising=False)


def plus_pyflow(value: float, name: str = "plus"):
    """A FlowGraph of one Python UDF node, x + value (its code in a UDF_PAYLOAD partition)."""
    @df.pyflow
    def plus(x):
        return x + np.float32(value)
    x = df.FlowData(name="x")
    return df.FlowGraph([plus.fnode()(x)], name=name)


def plus_weights(value: float, name: str = "plus_w") -> Graph:
    """A GE graph x + w, w a constant (its bytes in the WEIGHTS_DATA partition) full of `value`."""
    graph = Graph(name)
    x = graph.data(0, list(SHAPE), dt.DT_FLOAT, name="x")
    graph.set_outputs([graph.add(x, graph.const(np.full(SHAPE, value, np.float32), name="w"))])
    return graph


MODELS = {
    "pyflow": (lambda value: plus_pyflow(value), {}, PartitionType.UDF_PAYLOAD),
    **{f"ge_weights_{backend}": (lambda value: plus_weights(value), {"dfir.ge.backend": backend},
                                 PartitionType.WEIGHTS_DATA)
       for backend in ("reference", "onnxruntime", "iree-cpu")},
}


@pytest.fixture(scope="module")
def compiled():
    """Per kind of model: the compiled x + 1 and x + 5 (`CompiledModel`s) and the partition type
    whose bytes the workers read after the load (the payload or the weights)."""
    out = {}
    for kind, (build, options, ptype) in MODELS.items():
        out[kind] = (dfir.compile(build(1.0), options), dfir.compile(build(5.0), options), ptype)
    return out


def run(model, x: np.ndarray) -> np.ndarray:
    assert model.feed_data([x]) == 0
    outputs, _, ret = model.fetch_data(timeout=WAIT_MS)
    assert ret == 0, getattr(ret, "message", ret)
    return outputs[0].numpy()


def region(om: bytes, ptype: PartitionType) -> tuple[int, int]:
    """(offset, size) in the file of the first partition of type `ptype`."""
    partition = read_om(om).models[0].partitions_of(ptype)[0]
    return partition.offset, partition.size


def overwrite_in_place(path: Path, offset: int, data: bytes) -> None:
    """A plain, non-atomic write over part of the file (the inode the loader opened)."""
    with open(path, "r+b") as file:
        file.seek(offset)
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def tamper(how: str, path: Path, other, ptype: PartitionType) -> None:
    if how == "save":
        other.save(path)
    elif how == "rewrite":  # what a writer that is not dfir does: the same inode, truncated, rewritten
        with open(path, "wb") as file:
            file.write(other.om)
    elif how == "overwrite":
        offset, size = region(path.read_bytes(), ptype)
        overwrite_in_place(path, offset, np.full(size // 4, 100.0, np.float32).tobytes())
    else:
        os.truncate(path, 0)


@pytest.mark.parametrize("how", ["save", "rewrite", "overwrite", "truncate"])
@pytest.mark.parametrize("kind", list(MODELS))
def test_changing_the_file_of_a_loaded_model_changes_no_result(compiled, tmp_path, kind, how):
    first, other, ptype = compiled[kind]
    path = tmp_path / "model.om"
    first.save(path)
    x = np.arange(SHAPE[0] * SHAPE[1], dtype=np.float32).reshape(SHAPE)
    with dfir.load(path) as model:
        tamper(how, path, other, ptype)  # before the first input: the workers read what they need after this
        for _ in range(3):
            assert np.array_equal(run(model, x), x + 1)
    expected = {"save": other.om, "rewrite": other.om, "overwrite": None, "truncate": b""}[how]
    assert expected is None or path.read_bytes() == expected


def test_a_model_loaded_after_save_runs_the_new_file(compiled, tmp_path):
    first, other, _ = compiled["ge_weights_reference"]
    path = tmp_path / "model.om"
    first.save(path)
    with dfir.load(path) as before:
        other.save(path)
        with dfir.load(path) as after:
            x = np.zeros(SHAPE, np.float32)
            assert np.array_equal(run(before, x), x + 1) and np.array_equal(run(after, x), x + 5)


def test_the_views_of_read_om_outlive_changes_to_the_file(compiled, tmp_path):
    first, _, _ = compiled["ge_weights_reference"]
    path = tmp_path / "model.om"
    first.save(path)
    om = read_om(path)
    overwrite_in_place(path, 0, bytes(1024))
    os.truncate(path, 0)
    assert bytes(om.data) == unsigned(first.om)  # read after the truncation: no SIGBUS, the original bytes
    assert bytes(om.models[0].partition(PartitionType.WEIGHTS_DATA).data) == np.full(SHAPE, 1.0, np.float32).tobytes()
    with pytest.raises(TypeError):
        om.data[0] = 1  # read-only


def test_an_empty_file_and_a_missing_one_read_as_before(tmp_path):
    empty = tmp_path / "empty.om"
    empty.write_bytes(b"")
    with pytest.raises(GeError) as caught:
        read_om(empty)
    assert caught.value.context == {"file": str(empty)}
    with pytest.raises(GeError) as caught:
        read_om(tmp_path / "missing.om")
    assert caught.value.error_message == "cannot open the file: No such file or directory"


# ---------------------------------------------------------------- the race, with trusted keys


class _Trap:
    """Unpickling this runs `os.system`, which creates the file at `path`."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


RACE_LOADS = int(os.environ.get("DFIR_TEST_RACE_LOADS", "50"))


def test_a_payload_overwritten_while_the_model_loads_never_runs(keys, tmp_path):
    signed_model = dfir.compile(plus_pyflow(1.0, "raced"), sign_with=keys.dev.private)
    offset, size = region(signed_model.om, PartitionType.UDF_PAYLOAD)
    marker = tmp_path / "marker"
    crafted = pickle.dumps(_Trap(str(marker)))
    assert len(crafted) <= size
    crafted += bytes(size - len(crafted))  # pickle ignores what follows its STOP
    x = np.ones(SHAPE, np.float32)
    outcomes = {"loaded": 0, "refused": 0}
    rng = random.Random(35)
    for attempt in range(RACE_LOADS):
        path = tmp_path / f"model{attempt}.om"
        signed_model.save(path)
        delay = rng.uniform(0.0, 0.020)
        writer = threading.Timer(delay, overwrite_in_place, (path, offset, crafted))
        writer.start()
        try:
            with dfir.load(path, trusted_keys=keys.dev.public) as model:
                writer.join()
                assert np.array_equal(run(model, x), x + 1)
            outcomes["loaded"] += 1
        except GeError:
            outcomes["refused"] += 1
        finally:
            writer.join()
        assert not marker.exists(), f"the crafted payload ran (attempt {attempt}, {delay * 1000:.1f} ms)"
    assert sum(outcomes.values()) == RACE_LOADS
    # the crafted file itself is refused: its payload does not match the signed digests
    with pytest.raises(GeError):
        dfir.load(path, trusted_keys=keys.dev.public)
    assert not marker.exists()


# ---------------------------------------------------------------- atomic writes


def test_save_is_atomic_for_a_reader_of_the_path(compiled, tmp_path):
    first, other, _ = compiled["pyflow"]
    path = tmp_path / "model.om"
    first.save(path)
    names = {read_om(first.om).name, read_om(other.om).name}
    stop = threading.Event()

    def save_again_and_again():
        while not stop.is_set():
            first.save(path)
            other.save(path)

    saver = threading.Thread(target=save_again_and_again)
    saver.start()
    try:
        deadline = time.monotonic() + 2.0
        reads = 0
        while time.monotonic() < deadline:
            assert read_om(path).name in names  # a GeError here would be a partial file
            reads += 1
    finally:
        stop.set()
        saver.join()
    assert reads > 10
    assert [name for name in os.listdir(tmp_path) if name.startswith(TEMP_PREFIX)] == []


def test_write_atomic_keeps_what_open_would_give(tmp_path):
    target = tmp_path / "real.om"
    link = tmp_path / "link.om"
    target.write_bytes(b"old")
    link.symlink_to(target)
    write_atomic(link, b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"  # written through the link, as open() does
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~mask
    write_atomic(tmp_path / "private", b"x", private=True)
    assert stat.S_IMODE(os.stat(tmp_path / "private").st_mode) == 0o600
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "such.om", b"x")
    assert sorted(os.listdir(tmp_path)) == ["link.om", "private", "real.om"]


def test_save_model_replaces_the_file_atomically(compiled, tmp_path):
    first, _, _ = compiled["ge_weights_reference"]
    path = tmp_path / "model.om"
    first.save(path)
    inode = os.stat(path).st_ino
    build_initialize({})
    try:
        buffer = build_model(plus_weights(5.0))
    finally:
        build_finalize()
    with dfir.load(path) as model:
        save_model(str(tmp_path / "model"), buffer)
        assert os.stat(path).st_ino != inode and read_om(path).models[0].partition(
            PartitionType.WEIGHTS_DATA).data == np.full(SHAPE, 5.0, np.float32).tobytes()
        assert np.array_equal(run(model, np.zeros(SHAPE, np.float32)), np.ones(SHAPE, np.float32))
