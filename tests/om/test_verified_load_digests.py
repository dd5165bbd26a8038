"""A path's `.om` is copied into its sealed memfd and hashed in one pass (`_native.copy_sealed`):
the content digest it computes is that of the copy's bytes, the reader's checks and messages are
the same as for the same bytes given in memory, and a digest that disagrees with its bytes is
still refused; one that the matching content digest covers is vouched for."""
from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
import random
import struct
import threading

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dfir.core.errors import GeError
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om.schema import HEADER_OFFSETS, HEADER_SIZE, PartitionType
from dfir.om.keys import signing_key
from dfir.om.signature import signed, unsigned
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


def content_digest_of(data: bytes) -> tuple[int, bytes]:
    """(size, SHA-256) of the bytes after the header of `data`, its signature trailer left out."""
    content = bytes(unsigned(data))[HEADER_SIZE:]
    return len(content), hashlib.sha256(content).digest()


# -- the one-pass digest --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pyflow_chain", "bundle", "long names"])
def test_the_copy_is_sealed_and_its_digest_is_the_content_digest(samples, tmp_path, name):  # noqa: F811
    data = samples[name].data
    path = written(tmp_path, data)
    with open(path, "rb") as file:
        fd, copied, content = _native.copy_sealed(file.fileno(), len(data), "dfir-om:test")
    try:
        assert copied == len(data) and os.pread(fd, len(data) + 1, 0) == data
        assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) == SEALS
        with pytest.raises(PermissionError):
            os.pwrite(fd, b"x", 0)
    finally:
        os.close(fd)
    assert (content.size, content.digest) == content_digest_of(data)
    layout = _native.read_om(unsigned(data), content)  # as read_om gives it, the signature split off
    assert [[(p.offset, p.size) for p in m.partitions] for m in layout.models] == \
        [[(p.offset, p.size) for p in m.partitions] for m in read_om(data).models]


@pytest.mark.parametrize("size", [(1 << 20) - 1000, 3 << 20, (3 << 20) + 77])
def test_a_signed_file_copied_in_pieces_is_hashed_up_to_its_signature(tmp_path, size):
    """Files past the one-thread size, ending on a piece or not: the digest covers the bytes after
    the header up to where the copy's header says the model ends, not the signature after it."""
    body = write_om([[(PartitionType.WEIGHTS_DATA, random.Random(size).randbytes(size))]], name="pieces")
    data = signed(body, signing_key(Ed25519PrivateKey.generate()))
    path = written(tmp_path, data)
    with open(path, "rb") as file:
        fd, copied, content = _native.copy_sealed(file.fileno(), len(data), "dfir-om:test")
    try:
        assert copied == len(data) > len(body) and os.pread(fd, len(data) + 1, 0) == data
    finally:
        os.close(fd)
    assert (content.size, content.digest) == content_digest_of(data)
    assert bytes(read_om(path).data) == body


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
    digests are recomputed to match: none, the header's two ("header": the content digest then
    vouches for the stale partition digest), or all ("all")."""
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
    ("header", None),
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
    bundle = bytearray(write_bundle([samples["pyflow_chain"].data, samples["ge_graph_node"].data], ["chain", "ge"],
                                    name="set"))
    member = read_om(bytes(bundle)).models[0].partitions[2]
    bundle[member.offset + member.size // 2] ^= 0x5A
    message = error_of(bytes(bundle))
    assert message.startswith("header checksum mismatch: the SHA-256 of the ")
    assert error_of(written(tmp_path, bytes(bundle))) == message


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


def test_a_file_of_many_partitions_names_the_one_changed_from_a_path_as_from_its_bytes(tmp_path):
    """The content digest fails, so the reader hashes the partitions to name the one changed."""
    tables = [[(PartitionType.IR_TEXT, struct.pack("<Q", i))] * 1500 for i in range(3)]
    data = write_om(tables, name="many")
    path = written(tmp_path, data)
    assert error_of(path) is None and bytes(read_om(path).data) == data
    changed = bytearray(data)
    last = read_om(data).models[2].partitions[-2]
    changed[last.offset] ^= 1
    changed = bytes(changed)
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
            fd, copied, content = _native.copy_sealed(file.fileno(), len(data), "dfir-om:race")
    finally:
        stop.set()
        thread.join()
    try:
        assert copied == len(data) and os.pread(fd, len(data) + 1, 0) == data
    finally:
        os.close(fd)
    assert refused  # the writer found the memfd while the copy was taken, and was refused
    assert (content.size, content.digest) == content_digest_of(data)
    assert _native.read_om(data, content).models[0].partitions[0].size == 48 << 20


def test_a_file_shorter_than_its_size_gives_what_it_holds(samples, tmp_path):  # noqa: F811
    """The size the copy was asked for is past the end: the file shrank while it was copied."""
    data = samples["ge_graph_node"].data
    path = written(tmp_path, data[:len(data) // 2])
    with open(path, "rb") as file:
        fd, copied, content = _native.copy_sealed(file.fileno(), len(data), "dfir-om:test")
    try:
        assert copied == len(data) // 2 and content is None
        assert os.pread(fd, len(data) + 1, 0) == data[:copied] + bytes(len(data) - copied)  # a zero tail
        assert fcntl.fcntl(fd, fcntl.F_GET_SEALS) == SEALS
    finally:
        os.close(fd)
