"""Partition data in pieces (`lowering.om_writer.Chunks`): laid end to end on the asked
boundaries, and written into the same `.om` bytes as the joined data, whose checksums the native
reader accepts."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.lowering.om_writer import Chunks, write_om
from dfir.om.schema import PartitionType
from dfir.runtime.om import read_om

_pieces = st.lists(st.tuples(st.binary(max_size=200), st.sampled_from([1, 8, 64])), max_size=6)


def _joined(pieces: list[tuple[bytes, int]]) -> tuple[bytes, list[int]]:
    """The bytes `Chunks` stands for, built by hand, and each piece's offset."""
    out, offsets = b"", []
    for data, alignment in pieces:
        out += bytes(-len(out) % alignment)
        offsets.append(len(out))
        out += data
    return out, offsets


@settings(max_examples=40, deadline=None)
@given(_pieces)
def test_chunks_lay_pieces_on_their_boundaries_and_write_as_the_joined_bytes(pieces):
    chunks = Chunks()
    offsets = [chunks.append(data, alignment) for data, alignment in pieces]
    joined, expected_offsets = _joined(pieces)
    assert offsets == expected_offsets and len(chunks) == len(joined)
    assert b"".join(chunks.pieces) == joined
    om = write_om([[(PartitionType.WEIGHTS_DATA, chunks), (PartitionType.IR_TEXT, b"ir")]], name="m")
    assert om == write_om([[(PartitionType.WEIGHTS_DATA, joined), (PartitionType.IR_TEXT, b"ir")]], name="m")
    assert bytes(read_om(om).models[0].partition(PartitionType.WEIGHTS_DATA).data) == joined


def test_two_models_are_hashed_whole():
    models = [[(PartitionType.WEIGHTS_DATA, Chunks([b"a" * 100, b"b" * 3]))], [(PartitionType.IR_TEXT, b"two")]]
    om = read_om(write_om(models, name="m"))
    assert [bytes(m.partitions[0].data) for m in om.models] == [b"a" * 100 + b"b" * 3, b"two"]
