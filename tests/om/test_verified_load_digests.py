"""A path's `.om` is copied into its sealed memfd and hashed in one pass (`_native.copy_sealed`):
the digests it computes are those of the copy's bytes, the reader's checks and messages are the
same as for the same bytes given in memory, and a digest that disagrees with its bytes is still
refused, whichever other digests were renewed to match."""
from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import random
import struct
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dfir.core.errors import GeError
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om.schema import HEADER_OFFSETS, HEADER_SIZE, PartitionType
from dfir.om.signature import unsigned
from dfir.runtime import _native
from dfir.runtime.om import read_om
from test_container import resealed
from test_mutated_files import layouts, mutated, samples  # noqa: F401 (fixtures)

F_SEAL_FUTURE_WRITE = 0x0010  # <linux/fcntl.h>; Python's fcntl does not name it
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL | F_SEAL_FUTURE_WRITE


def error_of(source) -> str | None:
    try:
        read_om(source)
    except GeError as error:
        return error.error_message
    return None


def written(tmp_path, data: bytes, name: str = "model.om") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def checked_ranges(om, base: int = 0) -> list[tuple[int, int]]:
    """The ranges the reader hashes in `om` (at `base` of its file): its bytes after the header,
    each partition PARTITION_CHECKSUMS covers, then the same for each bundle member."""
    ranges = [(base + HEADER_SIZE, base + len(om.data))]
    if om.is_bundle:
        for (_, member), entry in zip(om.bundle, om.models[0].partitions_of(PartitionType.BUNDLE_MODEL_INFO)):
            ranges += checked_ranges(member, base + entry.offset)
        return ranges
    for model in om.models:
        ranges += [(base + p.offset, base + p.offset + p.size) for p in model.partitions[:-1]]
    return ranges


# -- the one-pass digests -------------------------------------------------------------------------

@pytest.mark.parametrize("length", [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 4096 + 17])
def test_a_range_digest_is_sha256_of_its_bytes_at_every_padding_boundary(length):
    data = random.Random(length).randbytes(64 + length + 64)
    assert _native.sha256_ranges(data, [(64, 64 + length)]) == [hashlib.sha256(data[64:64 + length]).digest()]


def test_nested_and_overlapping_ranges_each_get_their_own_digest():
    data = random.Random(1).randbytes(1 << 18)
    rng = random.Random(2)
    for _ in range(200):
        ranges = []
        for _ in range(rng.randint(1, 7)):
            begin = rng.randrange(0, len(data) // 64) * 64
            ranges.append((begin, rng.randint(begin, min(len(data), begin + rng.choice([70, 5000, 100_000])))))
        assert _native.sha256_ranges(data, ranges) == [hashlib.sha256(data[b:e]).digest() for b, e in ranges]


def test_a_range_must_begin_on_a_block_and_lie_in_the_buffer():
    with pytest.raises(ValueError, match="must begin at a multiple of 64"):
        _native.sha256_ranges(bytes(256), [(32, 100)])
    with pytest.raises(ValueError, match="outside the buffer"):
        _native.sha256_ranges(bytes(256), [(0, 257)])


@pytest.mark.parametrize("name", ["pyflow_chain", "bundle", "long names"])
def test_the_copy_is_sealed_and_its_digests_are_the_ranges_the_reader_checks(samples, tmp_path, name):  # noqa: F811
    data = samples[name].data
    path = written(tmp_path, data)
    with open(path, "rb") as file:
        fd, copied, digests = _native.copy_sealed(file.fileno(), len(data), "dfir-om:test")
    try:
        assert copied == len(data) and os.pread(fd, len(data) + 1, 0) == data
        assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) == SEALS
        with pytest.raises(PermissionError):
            os.pwrite(fd, b"x", 0)
    finally:
        os.close(fd)
    expected = checked_ranges(read_om(data))
    assert len(digests) == len(expected) == len(set(expected))
    layout = _native.read_om(unsigned(data), digests)  # as read_om gives it, the signature split off
    assert [[(p.offset, p.size) for p in m.partitions] for m in layout.models] == \
        [[(p.offset, p.size) for p in m.partitions] for m in read_om(data).models]


def test_a_path_and_its_bytes_read_alike(samples, tmp_path):  # noqa: F811
    for name, sample in samples.items():
        from_path, from_bytes = read_om(written(tmp_path, sample.data, f"{name}.om")), read_om(sample.data)
        assert bytes(from_path.data) == bytes(from_bytes.data)
        assert from_path.header == from_bytes.header and from_path.bundle_names == from_bytes.bundle_names
        assert [[(p.type, p.offset, p.size) for p in m.partitions] for m in from_path.models] == \
            [[(p.type, p.offset, p.size) for p in m.partitions] for m in from_bytes.models]


# -- a digest that disagrees is refused as before -------------------------------------------------

def partition_byte_flipped(data: bytes, renew: str) -> bytes:
    """`data` (a flow file) with one byte of its first partition changed; `renew` says which
    digests are recomputed to match: none, the header's two ("header"), or all ("all")."""
    om = read_om(data)
    model = om.models[0]
    first, checksums = model.partitions[0], model.partitions[-1]
    out = bytearray(data)
    out[first.offset + first.size // 2] ^= 0x5A
    if renew == "all":
        digest = hashlib.sha256(out[first.offset:first.offset + first.size]).digest()
        out[checksums.offset:checksums.offset + 32] = digest
    return resealed(bytes(out)) if renew in ("header", "all") else bytes(out)


@pytest.mark.parametrize("renew, expected", [
    ("none", "partition 0 (FLOW_MODEL) of model 0 checksum mismatch: its SHA-256 is "),
    ("header", "partition 0 (FLOW_MODEL) of model 0 checksum mismatch: its SHA-256 is "),
    ("all", None),
])
def test_a_changed_partition_is_refused_from_a_path_as_from_its_bytes(samples, tmp_path, renew, expected):  # noqa: F811
    data = partition_byte_flipped(samples["pyflow_chain"].data, renew)
    from_bytes = error_of(data)
    assert error_of(written(tmp_path, data)) == from_bytes
    assert (from_bytes is None) if expected is None else from_bytes.startswith(expected)


def test_a_wrong_content_digest_is_refused_from_a_path_as_from_its_bytes(samples, tmp_path):  # noqa: F811
    data = bytearray(samples["ge_graph_node"].data)
    checksum = HEADER_OFFSETS["checksum"]
    data[checksum] ^= 1  # the recorded content digest, its header digest renewed to match
    data[checksum + 32:checksum + 64] = bytes(32)
    data[checksum + 32:checksum + 64] = hashlib.sha256(data[:HEADER_SIZE]).digest()
    message = error_of(bytes(data))
    assert message.startswith("header checksum mismatch: the SHA-256 of the ")
    assert error_of(written(tmp_path, bytes(data))) == message


def test_a_bundle_member_partition_changed_is_refused_from_a_path_as_from_its_bytes(samples, tmp_path):  # noqa: F811
    flows = [samples["pyflow_chain"].data, partition_byte_flipped(samples["ge_graph_node"].data, "header")]
    bundle = write_bundle(flows, ["chain", "ge"], name="set")
    message = error_of(bundle)
    assert message.startswith("bundle model 1: partition 0 (FLOW_MODEL) of model 0 checksum mismatch")
    assert error_of(written(tmp_path, bundle)) == message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_mutated_file_reads_from_a_path_as_from_its_bytes(samples, layouts, tmp_path, data):  # noqa: F811
    _, om = mutated(data, samples, layouts)
    if data.draw(st.booleans()):  # a byte of a partition or table too, digests renewed or not
        out = bytearray(om)
        out[data.draw(st.integers(HEADER_SIZE, len(out) - 1))] ^= data.draw(st.integers(1, 255))
        om = resealed(bytes(out)) if data.draw(st.booleans()) else bytes(out)
    assert error_of(written(tmp_path, om)) == error_of(om)


def test_a_file_with_more_partitions_than_a_copy_plans_reads_alike(tmp_path):
    """More ranges than a copy plans (4096): the reader computes the others itself."""
    tables = [[(PartitionType.IR_TEXT, struct.pack("<Q", i))] * 1500 for i in range(3)]
    data = write_om(tables, name="many")
    path = written(tmp_path, data)
    with open(path, "rb") as file:
        fd, _, digests = _native.copy_sealed(file.fileno(), len(data), "dfir-om:test")
    os.close(fd)
    assert len(digests) == 4096 < len(checked_ranges(read_om(data)))
    assert error_of(path) is None and bytes(read_om(path).data) == data
    changed = bytearray(data)
    last = read_om(data).models[2].partitions[-2]
    changed[last.offset] ^= 1
    changed = resealed(bytes(changed))
    assert error_of(changed).startswith("partition 1499 (IR_TEXT) of model 2 checksum mismatch")
    assert error_of(written(tmp_path, changed, "changed.om")) == error_of(changed)


def test_no_one_else_can_write_the_copy_while_it_is_taken(tmp_path):
    """While the copy is taken, a writer that opens the memfd as another process could (through
    /proc) is refused, by write and by a writable mapping; the copy is the file's bytes."""
    data = write_om([[(PartitionType.WEIGHTS_DATA, random.Random(3).randbytes(48 << 20))]], name="big")
    path = written(tmp_path, data)
    refused, stop = [], threading.Event()

    def writer():
        while not stop.is_set():
            for fd in os.listdir("/proc/self/fd"):
                try:
                    if "dfir-om:race" not in os.readlink(f"/proc/self/fd/{fd}"):
                        continue
                    with open(f"/proc/self/fd/{fd}", "r+b") as memfd:
                        for attempt in (lambda: os.pwrite(memfd.fileno(), b"x" * 4096, 1 << 20),
                                        lambda: mmap.mmap(memfd.fileno(), 4096, access=mmap.ACCESS_WRITE)):
                            try:
                                attempt()
                            except PermissionError:
                                refused.append(attempt)
                except OSError:
                    continue

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with open(path, "rb") as file:
            fd, copied, digests = _native.copy_sealed(file.fileno(), len(data), "dfir-om:race")
    finally:
        stop.set()
        thread.join()
    try:
        assert copied == len(data) and os.pread(fd, len(data) + 1, 0) == data
    finally:
        os.close(fd)
    assert refused  # the writer found the memfd while the copy was taken, and was refused
    assert _native.read_om(data, digests).models[0].partitions[0].size == 48 << 20


def test_a_file_shorter_than_its_size_gives_what_it_holds(samples, tmp_path):  # noqa: F811
    """The size the copy was asked for is past the end: the file shrank while it was copied."""
    data = samples["ge_graph_node"].data
    path = written(tmp_path, data[:len(data) // 2])
    with open(path, "rb") as file:
        fd, copied, digests = _native.copy_sealed(file.fileno(), len(data), "dfir-om:test")
    try:
        assert copied == len(data) // 2
        assert os.pread(fd, len(data) + 1, 0) == data[:copied] + bytes(len(data) - copied)  # a zero tail
        assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) == SEALS
    finally:
        os.close(fd)
    layout = read_om(data)
    assert len(digests) == sum(1 for begin, end in checked_ranges(layout) if end <= copied)
