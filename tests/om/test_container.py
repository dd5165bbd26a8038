"""The `.om` container: writer, native reader, Python facade, and the schema they share."""
from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dfir.ge.error import GeError
from dfir.lowering.om_writer import write_bundle, write_om
from dfir.om import schema as om_schema
from dfir.om.schema import (
    HEADER_OFFSETS, HEADER_SIZE, MAX_PARTITIONS, TABLE_ENTRY_SIZE, TABLE_HEADER_SIZE, ModelType,
    PartitionType, align_up,
)
from dfir.runtime import _native
from dfir.runtime.om import read_om

PLAN = json.dumps({"format": 1, "name": "pipeline", "inputs": [], "outputs": [], "nodes": [], "order": []},
                  sort_keys=True, separators=(",", ":")).encode()
WEIGHTS = np.arange(100, dtype=np.float32)


def sample_partitions() -> list[tuple[PartitionType, bytes]]:
    return [(PartitionType.FLOW_MODEL, PLAN), (PartitionType.UDF_PAYLOAD, b"udf-0" * 30),
            (PartitionType.WEIGHTS_DATA, WEIGHTS.tobytes()), (PartitionType.IR_TEXT, b"builtin.module {}")]


FLOW_OM = write_om([sample_partitions()], name="pipeline", platform_version="Ascend910B", ops=7)
TWO_MODEL_OM = write_om([sample_partitions(), [(PartitionType.FLOW_MODEL, PLAN)]], name="two")
BUNDLE_OM = write_bundle([FLOW_OM, TWO_MODEL_OM], ["init", "infer"], var_size=4096, name="set")


# ---------------------------------------------------------------- helpers that craft files


def entry_at(index: int, field: str, table: int = HEADER_SIZE) -> int:
    """The byte offset of `field` of partition table entry `index` of the table at `table`."""
    return table + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * index + {"type": 0, "offset": 8, "size": 16}[field]


def patched(data: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(data)
    struct.pack_into("<" + fmt, out, offset, value)
    return bytes(out)


def header_field(name: str, fmt: str) -> tuple[int, str]:
    return HEADER_OFFSETS[name], fmt


def resealed(data: bytes, start: int = 0) -> bytes:
    """`data` with the digests of the .om at `start` recomputed, as a writer would."""
    out = bytearray(data)
    model_length = struct.unpack_from("<Q", out, start + HEADER_OFFSETS["model_length"])[0]
    end = min(len(out), start + HEADER_SIZE + model_length)
    checksum = start + HEADER_OFFSETS["checksum"]
    out[checksum:checksum + 32] = hashlib.sha256(out[start + HEADER_SIZE:end]).digest()
    out[checksum + 32:checksum + 64] = bytes(32)
    out[checksum + 32:checksum + 64] = hashlib.sha256(out[start:start + HEADER_SIZE]).digest()
    return bytes(out)


def raw_bundle(members: list[bytes], var_size: int = 0, extra: list[tuple[int, bytes]] = ()) -> bytes:
    """A bundle assembled byte by byte, without the writer's checks: BUNDLE_OM's header (name
    "set") over a table of BUNDLE_MODEL_VAR_INFO, the `members` as they are, then `extra`."""
    entries = [(PartitionType.BUNDLE_MODEL_VAR_INFO, struct.pack("<Q", var_size))]
    entries += [(PartitionType.BUNDLE_MODEL_INFO, member) for member in members] + list(extra)
    body = bytearray(struct.pack("<II", len(entries), 0) + bytes(TABLE_ENTRY_SIZE * len(entries)))
    for index, (ptype, data) in enumerate(entries):
        start = align_up(len(body))  # the body starts at byte 256: aligned in it, aligned in the file
        body += bytes(start - len(body))
        struct.pack_into("<IIQQ", body, TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * index, ptype, 0, start, len(data))
        body += data
    header = bytearray(BUNDLE_OM[:HEADER_SIZE])
    struct.pack_into("<I", header, HEADER_OFFSETS["model_num"], len(members))
    struct.pack_into("<I", header, HEADER_OFFSETS["length"], len(body))
    struct.pack_into("<Q", header, HEADER_OFFSETS["model_length"], len(body))
    return resealed(bytes(header) + bytes(body))


def error_of(data) -> str:
    with pytest.raises(GeError) as caught:
        read_om(data)
    return str(caught.value)


def digest_prefix(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16] + "..."


# ---------------------------------------------------------------- round trips and layout


def test_flow_round_trip_returns_header_fields_and_partition_data():
    om = read_om(FLOW_OM)
    header = om.header
    assert (header.magic, header.headsize, header.version) == (0x444F4D49, 256, 0x20000000)
    assert (header.modeltype, header.name, header.model_num, header.ops) == (ModelType.FLOW, "pipeline", 1, 7)
    assert (header.platform_version, header.om_ir_version) == ("Ascend910B", om_schema.OM_IR_VERSION)
    assert (header.is_encrypt, header.is_checksum, header.genmode) == (0, 1, 0)
    assert header.model_length == header.length == len(FLOW_OM) - HEADER_SIZE
    assert not om.is_bundle and om.bundle == () and om.var_size == 0
    [model] = om.models
    assert [(p.type, bytes(p.data)) for p in model.partitions[:-1]] == sample_partitions()
    assert model.partitions[-1].type == PartitionType.PARTITION_CHECKSUMS
    assert np.array_equal(np.frombuffer(model.partition(PartitionType.WEIGHTS_DATA).data, np.float32), WEIGHTS)


def test_partitions_sit_on_64_byte_boundaries_with_offsets_from_the_table_end():
    [model] = read_om(FLOW_OM).models
    table_end = HEADER_SIZE + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * len(model.partitions)
    assert struct.unpack_from("<I", FLOW_OM, HEADER_SIZE)[0] == len(model.partitions)
    previous_end = table_end
    for index, partition in enumerate(model.partitions):
        assert partition.offset == align_up(previous_end) and partition.offset % 64 == 0
        assert struct.unpack_from("<IIQQ", FLOW_OM, entry_at(index, "type")) == (
            partition.type, 0, partition.offset - table_end, partition.size)
        assert FLOW_OM[previous_end:partition.offset] == bytes(partition.offset - previous_end)
        previous_end = partition.offset + partition.size
    assert previous_end == len(FLOW_OM)


def test_partition_checksums_hold_the_sha256_of_each_other_partition_in_order():
    [model] = read_om(FLOW_OM).models
    expected = b"".join(hashlib.sha256(p.data).digest() for p in model.partitions[:-1])
    assert bytes(model.partition(PartitionType.PARTITION_CHECKSUMS).data) == expected


def test_header_checksum_holds_the_content_digest_then_the_header_digest():
    header = read_om(FLOW_OM).header
    assert header.content_digest == hashlib.sha256(FLOW_OM[HEADER_SIZE:]).digest()
    zeroed = bytearray(FLOW_OM[:HEADER_SIZE])
    zeroed[HEADER_OFFSETS["checksum"] + 32:HEADER_OFFSETS["checksum"] + 64] = bytes(32)
    assert header.header_digest == hashlib.sha256(zeroed).digest()
    assert header.checksum == header.content_digest + header.header_digest


def test_several_models_each_start_on_a_boundary_after_the_previous_one():
    om = read_om(TWO_MODEL_OM)
    assert om.header.model_num == 2 and [len(m.partitions) for m in om.models] == [5, 2]
    second_table = align_up(om.models[0].partitions[-1].offset + om.models[0].partitions[-1].size)
    assert struct.unpack_from("<I", TWO_MODEL_OM, second_table)[0] == 2
    assert bytes(om.models[1].partition(PartitionType.FLOW_MODEL).data) == PLAN


def test_same_inputs_give_the_same_bytes_whatever_the_buffer_type():
    as_bytearrays = [(t, bytearray(d)) for t, d in sample_partitions()]
    as_views = [(t, memoryview(d)) for t, d in sample_partitions()]
    with_array = [(t, WEIGHTS if t == PartitionType.WEIGHTS_DATA else d) for t, d in sample_partitions()]
    outputs = {write_om([parts], name="pipeline", platform_version="Ascend910B", ops=7)
               for parts in (sample_partitions(), as_bytearrays, as_views, with_array)}
    assert outputs == {FLOW_OM}
    assert write_bundle([FLOW_OM, TWO_MODEL_OM], ["init", "infer"], var_size=4096, name="set") == BUNDLE_OM


def test_partition_views_share_memory_with_a_bytearray_source():
    source = bytearray(FLOW_OM)
    weights = read_om(source).models[0].partition(PartitionType.WEIGHTS_DATA)
    array = np.frombuffer(weights.data, dtype=np.float32)
    assert np.shares_memory(array, np.frombuffer(source, dtype=np.uint8))
    assert weights.data.obj is source


def test_a_path_is_memory_mapped_and_weights_are_64_byte_aligned_in_memory(tmp_path):
    path = tmp_path / "model.om"
    path.write_bytes(FLOW_OM)
    om = read_om(path)
    weights = np.frombuffer(om.models[0].partition(PartitionType.WEIGHTS_DATA).data, dtype=np.float32)
    assert weights.ctypes.data % 64 == 0 and not weights.flags.writeable
    assert np.array_equal(weights, WEIGHTS)
    assert read_om(str(path)).header == om.header


def test_bundle_round_trip_follows_ge_layout_and_names_members():
    om = read_om(BUNDLE_OM)
    assert om.is_bundle and om.header.modeltype == ModelType.BUNDLE and om.header.model_num == 2
    assert om.name == "set" and om.bundle_names == ("init", "infer") and om.var_size == 4096
    [table] = om.models
    assert [p.type for p in table.partitions] == [PartitionType.BUNDLE_MODEL_VAR_INFO] + 2 * [
        PartitionType.BUNDLE_MODEL_INFO]
    for index, partition in enumerate(table.partitions):  # offsets count from the table start
        assert struct.unpack_from("<Q", BUNDLE_OM, entry_at(index, "offset"))[0] == partition.offset - HEADER_SIZE
    init, infer = om.bundle_model("init"), om.bundle_model(1)
    assert init.name == "init" and infer.header.model_num == 2 and om.bundle[1].om is infer
    assert bytes(init.data[HEADER_SIZE:]) == FLOW_OM[HEADER_SIZE:]  # only the header name changed
    assert bytes(infer.models[1].partition(PartitionType.FLOW_MODEL).data) == PLAN
    assert init.models[0].partitions[0].offset == read_om(FLOW_OM).models[0].partitions[0].offset


def test_the_hand_assembled_bundle_is_the_writers():
    init, infer = (bytes(member.om.data) for member in read_om(BUNDLE_OM).bundle)
    assert raw_bundle([init, infer], var_size=4096) == BUNDLE_OM


def test_bundles_do_not_nest_neither_writer_nor_reader_accepts_one():
    inner = write_bundle([FLOW_OM], ["leaf"], name="inner")
    with pytest.raises(GeError) as caught:
        write_bundle([FLOW_OM, inner], ["flow", "inner"])
    assert str(caught.value) == ("bundle model 1 ('inner') is itself a bundle: bundles do not nest, a bundle's "
                                 "members are flow models")
    nested = raw_bundle([bytes(read_om(BUNDLE_OM).bundle[0].om.data), inner])
    assert error_of(nested) == ("bundle model 1: model type 5 (BUNDLE) is not allowed in a bundle: bundles do not "
                                "nest, a bundle's members are flow models (model type 3)")


# ---------------------------------------------------------------- names longer than the header


@pytest.mark.parametrize("name, in_header", [
    ("n" * 32, "n" * 32),
    ("n" * 40, "n" * 32),
    ("\u00e9" * 20, "\u00e9" * 16),             # 40 bytes of 2-byte characters: cut after 32
    ("a" + "\u00e9" * 20, "a" + "\u00e9" * 15),  # byte 32 would split a character: cut after 31
    ("\U0001F600" * 9, "\U0001F600" * 8),       # 4-byte characters
])
def test_a_long_name_is_cut_to_the_header_on_a_character_boundary(name, in_header):
    assert om_schema.header_name(name) == in_header.encode()
    assert read_om(write_om([sample_partitions()], name=name)).header.name == in_header


LONG = "resnet50_v1_with_preprocessing_stage_"  # 37 bytes: two names that agree in the header


def test_long_bundle_member_names_are_kept_whole_in_bundle_model_names():
    bundle = write_bundle([FLOW_OM, TWO_MODEL_OM, FLOW_OM], [LONG + "a", LONG + "b", "short"], name="set")
    om = read_om(bundle)
    assert om.bundle_names == (LONG + "a", LONG + "b", "short")
    assert [member.om.name for member in om.bundle] == [LONG[:32], LONG[:32], "short"]
    assert om.bundle_model(LONG + "b").header.model_num == 2 and om.bundle_model(2).name == "short"
    names = om.models[0].partitions[-1]
    assert [p.type for p in om.models[0].partitions] == [PartitionType.BUNDLE_MODEL_VAR_INFO] + 3 * [
        PartitionType.BUNDLE_MODEL_INFO] + [PartitionType.BUNDLE_MODEL_NAMES]
    assert bytes(names.data) == f"{LONG}a\0{LONG}b\0short\0".encode()
    members = [bytes(member.om.data) for member in om.bundle]
    assert raw_bundle(members, extra=[(PartitionType.BUNDLE_MODEL_NAMES, bytes(names.data))]) == bundle
    # names that fit leave the layout as it was: no BUNDLE_MODEL_NAMES
    assert len(read_om(BUNDLE_OM).models[0].partitions) == 3


def test_loader_checks_bundle_model_names():
    init, infer = (bytes(member.om.data) for member in read_om(BUNDLE_OM).bundle)
    long_a, long_b = (bytes(member.om.data) for member in read_om(
        write_bundle([FLOW_OM, FLOW_OM], [LONG + "a", LONG + "b"])).bundle)
    names = PartitionType.BUNDLE_MODEL_NAMES
    cases = [
        ([init, infer], b"init\0infer\0",
         "BUNDLE_MODEL_NAMES is present but every name fits the 32-byte header name (it is written only when one "
         "does not)"),
        ([long_a, long_b], f"{LONG}a\0{LONG}b".encode(),
         "BUNDLE_MODEL_NAMES (77 bytes) does not end with a NUL byte, expected one NUL-terminated name per bundle "
         "model"),
        ([long_a, long_b], b"", "BUNDLE_MODEL_NAMES (0 bytes) does not end with a NUL byte, expected one "
                                "NUL-terminated name per bundle model"),
        ([long_a, long_b], f"{LONG}a\0".encode(),
         "BUNDLE_MODEL_NAMES holds 1 names, expected 2 (one NUL-terminated name per bundle model)"),
        ([long_a, long_b], f"{LONG}a\0{LONG}b\0c\0".encode(),
         "BUNDLE_MODEL_NAMES holds more than 2 names, expected 2 (one NUL-terminated name per bundle model)"),
        ([long_a, long_b], f"{LONG}a\0".encode() + b"\xff\0",
         "BUNDLE_MODEL_NAMES name 1 is not valid UTF-8"),
        ([long_a, long_b], f"{LONG}a\0{LONG}a\0".encode(), f'bundle models 0 and 1 are both named "{LONG}a"'),
        ([init, long_b], f"\0{LONG}b\0".encode(), "bundle model 0 has an empty name"),
        ([init, long_b], f"{LONG}a\0{LONG}b\0".encode(),
         f'bundle model 0\'s header name "init" is not its name "{LONG}a" from BUNDLE_MODEL_NAMES cut to 32 bytes'),
        ([long_a, init], f"{LONG}a\0{LONG}b\0".encode(),
         f'bundle model 1\'s header name "init" is not its name "{LONG}b" from BUNDLE_MODEL_NAMES cut to 32 bytes'),
    ]
    for members, text, message in cases:
        assert error_of(raw_bundle(members, extra=[(names, text)])) == message
    assert error_of(raw_bundle([long_a, long_b])) == f'bundle models 0 and 1 are both named "{LONG[:32]}"'
    assert error_of(raw_bundle([init, infer], extra=[(PartitionType.IR_TEXT, b"x")])) == (
        "bundle table entry 3 is IR_TEXT, expected BUNDLE_MODEL_NAMES (the one entry allowed after the "
        "BUNDLE_MODEL_INFO entries)")
    assert error_of(resealed(patched(FLOW_OM, entry_at(1, "type"), "I", names))) == (
        "partition 1 (BUNDLE_MODEL_NAMES) of model 0 is a bundle partition, which only a bundle's table may hold")


def test_lookup_errors_name_what_exists():
    om = read_om(BUNDLE_OM)
    with pytest.raises(GeError, match=r"^bundle has no model named 'train'; its models are 'init', 'infer'$"):
        om.bundle_model("train")
    with pytest.raises(GeError, match=r"^bundle model index 2 is out of range: the bundle holds 2 models$"):
        om.bundle_model(2)
    with pytest.raises(GeError, match=r"^\.om file 'init' is not a bundle \(model type FLOW\)$"):
        om.bundle_model(0).bundle_model(0)
    model = om.bundle_model("init").models[0]
    with pytest.raises(GeError, match=r"^model 0 has no SO_BINS partitions, expected one$"):
        model.partition(PartitionType.SO_BINS)
    assert model.partitions_of(PartitionType.SO_BINS) == ()
    doubled = read_om(write_om([[(PartitionType.UDF_PAYLOAD, b"a"), (PartitionType.UDF_PAYLOAD, b"b")]], name="u"))
    with pytest.raises(GeError, match=r"^model 0 has 2 UDF_PAYLOAD partitions, expected one$"):
        doubled.models[0].partition(PartitionType.UDF_PAYLOAD)


# ---------------------------------------------------------------- writer errors


@pytest.mark.parametrize("call, message", [
    (lambda: write_om([[(99, b"")]], name="m"),
     "partition 0 of model 0 has unknown partition type 99; expected one of MODEL_DEF, WEIGHTS_DATA, SO_BINS, "
     "FLOW_MODEL, FLOW_SUBMODEL, BUNDLE_MODEL_INFO, BUNDLE_MODEL_VAR_INFO, IR_TEXT, UDF_PAYLOAD, RESOURCE_CONFIG, "
     "DEPLOY_CONFIG, CACHE_MANIFEST, PARTITION_CHECKSUMS, GE_EXECUTABLE, BUNDLE_MODEL_NAMES"),
    (lambda: write_om([[(PartitionType.PARTITION_CHECKSUMS, b"")]], name="m"),
     "partition 0 of model 0 has type PARTITION_CHECKSUMS, which the writer adds itself"),
    (lambda: write_om([[], [(PartitionType.BUNDLE_MODEL_INFO, b"")]], name="m"),
     "partition 0 of model 1 has type BUNDLE_MODEL_INFO, which the writer adds itself"),
    (lambda: write_om([[(PartitionType.BUNDLE_MODEL_NAMES, b"a\0")]], name="m"),
     "partition 0 of model 0 has type BUNDLE_MODEL_NAMES, which the writer adds itself"),
    (lambda: write_om([[(PartitionType.IR_TEXT, "text")]], name="m"),
     "partition 0 (IR_TEXT) of model 0: data must be bytes-like (C-contiguous), got str"),
    (lambda: write_om([[PartitionType.IR_TEXT]], name="m"),
     "partition 0 of model 0 must be a (partition_type, data) pair, got <PartitionType.IR_TEXT: 4096>"),
    (lambda: write_om([], name="m"), "an .om file holds 1 to 1024 models, got 0"),
    (lambda: write_om([[]], name="a\0b"), ".om header name 'a\\x00b' must not contain NUL"),
    (lambda: write_om([[]], name=7), ".om header name must be a str, got int"),
    (lambda: write_bundle([FLOW_OM], ["m"], name="n" * 33),
     ".om header name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn' must be at most 32 bytes of UTF-8 without NUL, got 33 bytes"),
    (lambda: write_bundle([FLOW_OM], ["a\0b"]), "bundle model 0 name 'a\\x00b' must not contain NUL"),
    (lambda: write_bundle([FLOW_OM], ["\udc80"]), "bundle model 0 name '\\udc80' cannot be encoded as UTF-8"),
    (lambda: write_om([[]], name="m", platform_version="Ascend" * 4),
     ".om header platform_version 'AscendAscendAscendAscend' must be at most 20 bytes of UTF-8 without NUL, got 24 bytes"),
    (lambda: write_om([[]], name="m", ops=-1), ".om header ops must be an int in [0, 2**32), got -1"),
    (lambda: write_om([[]], name="m", model_type=ModelType.BUNDLE),
     "write_om writes flow models (model type 3), got model type 5; bundles are written by write_bundle"),
    (lambda: write_om([[(PartitionType.IR_TEXT, b"")] * MAX_PARTITIONS], name="m"),
     "model 0 has 4096 partitions; at most 4095 fit beside its PARTITION_CHECKSUMS partition"),
    (lambda: write_bundle([FLOW_OM], ["a", "b"]), "write_bundle got 1 models but 2 names"),
    (lambda: write_bundle([], []), "an .om file holds 1 to 1024 bundle models, got 0"),
    (lambda: write_bundle([FLOW_OM, FLOW_OM], ["a", "a"]), "bundle models 0 and 1 are both named 'a'"),
    (lambda: write_bundle([FLOW_OM], [""]), "bundle model 0 needs a non-empty name, got ''"),
    (lambda: write_bundle([b"not an om"], ["a"]), "bundle model 0 ('a') is not .om bytes (no .om header)"),
    (lambda: write_bundle([FLOW_OM], ["a"], var_size=-1), "bundle var_size must be in [0, 2**64), got -1"),
])
def test_writer_rejects_bad_arguments_with_a_message(call, message):
    with pytest.raises(GeError) as caught:
        call()
    assert str(caught.value) == message


def test_a_model_may_hold_4095_partitions_beside_its_checksums():
    om = read_om(write_om([[(PartitionType.IR_TEXT, b"")] * (MAX_PARTITIONS - 1)], name="m"))
    assert len(om.models[0].partitions) == MAX_PARTITIONS


# ---------------------------------------------------------------- loader errors


def flow_partition(index: int):
    return read_om(FLOW_OM).models[0].partitions[index]


def test_loader_reports_empty_short_and_foreign_files():
    assert error_of(b"") == "file is empty"
    assert error_of(bytes(100)) == "file has 100 bytes, shorter than the 256-byte header"
    png = b"\x89PNG\r\n\x1a\n" + bytes(300)
    assert error_of(png) == "bad magic 0x474E5089, expected 0x444F4D49 (not a dfir/GE .om file)"


@pytest.mark.parametrize("field, fmt, value, message", [
    ("headsize", "I", 128, "header size is 128, expected 256"),
    ("version", "I", 0x10000000, "format version 0x10000000 is not supported, expected 0x20000000"),
    ("om_ir_version", "I", 2,
     "om_ir_version 2 is not supported, expected 1 (the revision of dfir's partition contents this reader knows)"),
    ("om_ir_version", "I", 0,
     "om_ir_version 0 is not supported, expected 1 (the revision of dfir's partition contents this reader knows)"),
    ("length", "I", 5, "header length is 5 but model_length is {length}; expected length {length}"),
    ("is_encrypt", "B", 1, "the model is encrypted (is_encrypt=1); dfir reads only unencrypted .om files"),
    ("is_checksum", "B", 0, "is_checksum is 0, expected 1: dfir .om files always carry checksums"),
    ("model_length", "Q", 2**64 - 1,
     "file has {size} bytes but its header says 18446744073709551871 (256-byte header + model_length "
     "18446744073709551615): the file is truncated"),
])
def test_loader_checks_the_header_frame(field, fmt, value, message):
    bad = patched(FLOW_OM, HEADER_OFFSETS[field], fmt, value)
    assert error_of(bad) == message.format(length=len(FLOW_OM) - HEADER_SIZE, size=len(FLOW_OM))


def test_loader_reports_truncation_and_trailing_bytes():
    length = len(FLOW_OM) - HEADER_SIZE
    assert error_of(FLOW_OM[:-10]) == (f"file has {len(FLOW_OM) - 10} bytes but its header says {len(FLOW_OM)} "
                                       f"(256-byte header + model_length {length}): the file is truncated")
    assert error_of(FLOW_OM + bytes(3)) == (f"file has {len(FLOW_OM) + 3} bytes but its header says {len(FLOW_OM)} "
                                            f"(256-byte header + model_length {length}): the file has 3 unexpected "
                                            f"trailing bytes")


def test_loader_detects_a_modified_header_and_modified_content():
    renamed = patched(FLOW_OM, HEADER_OFFSETS["name"], "4s", b"evil")
    assert error_of(renamed).startswith("header digest mismatch: the header's SHA-256 is ")
    assert error_of(renamed).endswith(" (the header was modified)")
    var_info = read_om(BUNDLE_OM).models[0].partitions[0]  # its u64 is free: only the digest covers it
    bad = patched(BUNDLE_OM, var_info.offset, "Q", 1)
    after = len(BUNDLE_OM) - HEADER_SIZE
    assert error_of(bad) == (f"header checksum mismatch: the SHA-256 of the {after} bytes after the header is "
                             f"{digest_prefix(bad[HEADER_SIZE:])}, the header records "
                             f"{digest_prefix(BUNDLE_OM[HEADER_SIZE:])}")
    assert read_om(resealed(bad)).var_size == 1


@pytest.mark.parametrize("offset, fmt, value, message", [
    (HEADER_OFFSETS["genmode"], "B", 1, "genmode is 1, expected 0"),
    (HEADER_OFFSETS["platform_type"], "B", 2, "platform_type is 2, expected 0"),
    (HEADER_OFFSETS["need_check_os_cpu_info"], "B", 1, "need_check_os_cpu_info is 1, expected 0"),
    (HEADER_OFFSETS["is_unknow_model"], "B", 255, "is_unknow_model is 255, expected 0"),
    (HEADER_OFFSETS["padd"] + 1, "B", 7, "header padd holds 0x07 at byte 182, expected zero bytes"),
    (HEADER_OFFSETS["reserved"], "B", 1, "header reserved holds 0x01 at byte 194, expected zero bytes"),
    (HEADER_SIZE - 1, "B", 0xFF, "header reserved holds 0xFF at byte 255, expected zero bytes"),
    (HEADER_OFFSETS["name"] + 9, "B", ord("x"),  # "pipeline", its NUL, then "x"
     "header name holds 0x78 at byte 93 after its terminating NUL, expected zero padding"),
    (HEADER_OFFSETS["platform_version"] + 19, "B", 1,
     "header platform_version holds 0x01 at byte 179 after its terminating NUL, expected zero padding"),
])
def test_loader_refuses_unknown_flags_and_non_zero_padding_behind_a_valid_digest(offset, fmt, value, message):
    assert error_of(resealed(patched(FLOW_OM, offset, fmt, value))) == message


def test_loader_refuses_non_zero_table_pads_and_gaps():
    padding_at = flow_partition(0).offset + flow_partition(0).size  # zeros before partition 1
    assert padding_at < flow_partition(1).offset
    two = write_om([[(PartitionType.FLOW_MODEL, PLAN)], [(PartitionType.IR_TEXT, b"x")]], name="two")
    first = read_om(two).models[0].partitions[-1]  # 32 bytes of checksums, then 32 bytes to the next table
    var_info = read_om(BUNDLE_OM).models[0].partitions[0]
    cases = [
        (FLOW_OM, HEADER_SIZE + 4, "I", 7, "model 0's partition table pad is 7, expected 0"),
        (FLOW_OM, entry_at(2, "type") + 4, "I", 1, "partition 2 (WEIGHTS_DATA) of model 0 has pad 1, expected 0"),
        (FLOW_OM, padding_at, "B", 1,
         f"padding before partition 1 (UDF_PAYLOAD) of model 0 holds 0x01 at byte {padding_at}, expected zero bytes"),
        (two, first.offset + first.size + 31, "B", 0x80,
         f"padding before model 1's partition table holds 0x80 at byte {first.offset + first.size + 31}, "
         f"expected zero bytes"),
        (BUNDLE_OM, HEADER_SIZE + 4, "I", 1, "the bundle table's partition table pad is 1, expected 0"),
        (BUNDLE_OM, var_info.offset + 8, "B", 1,
         f"padding before partition 1 (BUNDLE_MODEL_INFO) of the bundle table holds 0x01 at byte "
         f"{var_info.offset + 8}, expected zero bytes"),
    ]
    for data, offset, fmt, value, message in cases:
        assert error_of(resealed(patched(data, offset, fmt, value))) == message


def test_loader_names_the_corrupted_partition():
    udf = flow_partition(1)
    bad = patched(FLOW_OM, udf.offset, "B", ord("X"))
    assert error_of(bad) == (f"partition 1 (UDF_PAYLOAD) of model 0 checksum mismatch: its SHA-256 is "
                             f"{digest_prefix(bad[udf.offset:udf.offset + udf.size])}, PARTITION_CHECKSUMS records "
                             f"{digest_prefix(FLOW_OM[udf.offset:udf.offset + udf.size])}")


def test_a_matching_content_digest_vouches_for_the_partition_digests():
    """The content digest covers PARTITION_CHECKSUMS: once it matches, the partitions are not
    hashed again, so a file resealed over a stale partition digest reads (its bytes are what its
    header, and a signature over it, say)."""
    udf = flow_partition(1)
    resealed_over_stale = resealed(patched(FLOW_OM, udf.offset, "B", ord("X")))
    om = read_om(resealed_over_stale)
    assert bytes(om.models[0].partitions[1].data)[:1] == b"X"


@pytest.mark.parametrize("field, fmt, value, message", [
    ("modeltype", "B", 4, "model type 4 is not supported, expected 3 (FLOW) or 5 (BUNDLE)"),
    ("model_num", "I", 0, "model_num is 0, expected 1 to 1024"),
    ("model_num", "I", 2**32 - 1, "model_num is 4294967295, expected 1 to 1024"),
    ("model_num", "I", 2, "model 1's partition table at byte {next_table} runs past the end of the {size}-byte file"),
    ("name", "2s", b"\xff\xfe", "header name is not valid UTF-8"),
])
def test_loader_checks_header_fields_behind_a_valid_digest(field, fmt, value, message):
    bad = resealed(patched(FLOW_OM, HEADER_OFFSETS[field], fmt, value))
    assert error_of(bad) == message.format(size=len(FLOW_OM), next_table=align_up(len(FLOW_OM)))


def test_loader_bounds_every_table_and_partition_overflow_safely():
    size = len(FLOW_OM)
    weights = flow_partition(2)
    table_end = HEADER_SIZE + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * 5
    cases = [
        (HEADER_SIZE, "I", 2**32 - 1, "model 0 has 4294967295 partitions, more than the limit of 4096"),
        (HEADER_SIZE, "I", 4096,
         f"model 0's partition table of 4096 entries ends at byte {HEADER_SIZE + 8 + 24 * 4096} but the file has "
         f"{size} bytes"),
        (entry_at(0, "type"), "I", 77, "partition 0 of model 0 has unknown type 77"),
        (entry_at(2, "offset"), "Q", weights.offset - table_end + 8,
         f"partition 2 (WEIGHTS_DATA) of model 0 starts at byte {weights.offset + 8}, expected {weights.offset} "
         f"(partitions follow one another on 64-byte boundaries)"),
        (entry_at(2, "offset"), "Q", 2**64 - 1,
         f"partition 2 (WEIGHTS_DATA) of model 0 starts at byte {table_end + 2**64 - 1}, expected {weights.offset} "
         f"(partitions follow one another on 64-byte boundaries)"),
        (entry_at(2, "size"), "Q", size,
         f"partition 2 (WEIGHTS_DATA) of model 0 ends at byte {weights.offset + size} but the file has {size} bytes"),
        (entry_at(2, "size"), "Q", 2**64 - 1,
         f"partition 2 (WEIGHTS_DATA) of model 0 ends at byte {weights.offset + 2**64 - 1} but the file has "
         f"{size} bytes"),
        (entry_at(4, "size"), "Q", 64,
         "PARTITION_CHECKSUMS of model 0 has 64 bytes, expected 128 (a 32-byte SHA-256 for each of its other 4 "
         "partitions)"),
        (entry_at(4, "type"), "I", PartitionType.IR_TEXT,
         "model 0's last partition is IR_TEXT, expected PARTITION_CHECKSUMS"),
        (entry_at(0, "type"), "I", PartitionType.PARTITION_CHECKSUMS,
         "partition 0 of model 0 is PARTITION_CHECKSUMS, which only the last partition may be"),
        (entry_at(1, "type"), "I", PartitionType.BUNDLE_MODEL_INFO,
         "partition 1 (BUNDLE_MODEL_INFO) of model 0 is a bundle partition, which only a bundle's table may hold"),
    ]
    for offset, fmt, value, message in cases:
        assert error_of(resealed(patched(FLOW_OM, offset, fmt, value))) == message


def test_loader_rejects_bytes_after_the_last_model():
    longer = bytearray(FLOW_OM + bytes(64))
    struct.pack_into("<I", longer, HEADER_OFFSETS["length"], len(longer) - HEADER_SIZE)
    struct.pack_into("<Q", longer, HEADER_OFFSETS["model_length"], len(longer) - HEADER_SIZE)
    assert error_of(resealed(bytes(longer))) == (
        f"model 0 ends at byte {len(FLOW_OM)} but the file has {len(longer)} bytes (64 unexpected trailing bytes)")


def test_loader_checks_the_bundle_table():
    member = read_om(BUNDLE_OM).models[0].partitions[2]
    cases = [
        (header_field("model_num", "I"), 3, "bundle has model_num 3 but its table has 3 entries, expected 4 "
                                            "(BUNDLE_MODEL_VAR_INFO and one BUNDLE_MODEL_INFO per model) or 5 "
                                            "(with BUNDLE_MODEL_NAMES last)"),
        (header_field("model_num", "I"), 1, "bundle table entry 2 is BUNDLE_MODEL_INFO, expected BUNDLE_MODEL_NAMES "
                                            "(the one entry allowed after the BUNDLE_MODEL_INFO entries)"),
        ((entry_at(0, "type"), "I"), PartitionType.BUNDLE_MODEL_INFO,
         "bundle table entry 0 is BUNDLE_MODEL_INFO, expected BUNDLE_MODEL_VAR_INFO"),
        ((entry_at(0, "size"), "Q"), 16, "BUNDLE_MODEL_VAR_INFO has 16 bytes, expected 8 (a u64 variable memory size)"),
        ((entry_at(2, "type"), "I"), PartitionType.FLOW_MODEL,
         "bundle table entry 2 is FLOW_MODEL, expected BUNDLE_MODEL_INFO"),
        ((member.offset, "I"), 0x474E5089,
         "bundle model 1: bad magic 0x474E5089, expected 0x444F4D49 (not a dfir/GE .om file)"),
        ((entry_at(2, "size"), "Q"), 2**63,
         f"partition 2 (BUNDLE_MODEL_INFO) of the bundle table ends at byte {member.offset + 2**63} but the file "
         f"has {len(BUNDLE_OM)} bytes"),
    ]
    for (offset, fmt), value, message in cases:
        assert error_of(resealed(patched(BUNDLE_OM, offset, fmt, value))) == message


def test_loader_prefixes_member_errors_and_checks_member_names():
    member = read_om(BUNDLE_OM).models[0].partitions[2]
    plan = read_om(BUNDLE_OM).bundle_model(1).models[0].partitions[0]
    corrupt = patched(BUNDLE_OM, member.offset + plan.offset, "B", ord("["))
    assert error_of(corrupt).startswith("header checksum mismatch: the SHA-256 of the ")
    # the bundle's content digest vouches for its members' digests: they are not hashed again
    assert read_om(resealed(corrupt)).bundle_model(1).models[0].partitions[0].data[0] == ord("[")
    name_at = member.offset + HEADER_OFFSETS["name"]
    duplicate = resealed(resealed(patched(BUNDLE_OM, name_at, "6s", b"init"), member.offset))
    assert error_of(duplicate) == 'bundle models 0 and 1 are both named "init"'
    unnamed = resealed(resealed(patched(BUNDLE_OM, name_at, "6s", b""), member.offset))
    assert error_of(unnamed) == "bundle model 1 has an empty name"


def test_path_errors_carry_the_file(tmp_path):
    missing = tmp_path / "missing.om"
    assert error_of(missing) == f"file={missing}; cannot open the file: No such file or directory"
    assert error_of(tmp_path) == f"file={tmp_path}; cannot open the file: Is a directory"
    empty = tmp_path / "empty.om"
    empty.write_bytes(b"")
    assert error_of(empty) == f"file={empty}; file is empty"
    with pytest.raises(GeError) as caught:
        read_om(str(empty))
    assert caught.value.context == {"file": str(empty)} and caught.value.error_message == "file is empty"


def test_read_om_rejects_sources_that_are_not_bytes():
    assert error_of(12) == "read_om expects a path, bytes, bytearray or a C-contiguous memoryview, got int"
    strided = memoryview(bytearray(FLOW_OM * 2))[::2]
    assert error_of(strided) == ("read_om expects a path, bytes, bytearray or a C-contiguous memoryview, "
                                 "got memoryview")


# ---------------------------------------------------------------- any corruption is a GeError


# Header fields whose value the reader accepts as written: informational, not layout.
FREE_HEADER_FIELDS = ("ops",)


def field_positions(data: bytes) -> list[tuple[int, str, bool]]:
    """(offset, struct format, may_stay_valid) of every header and table field of the .om `data`.

    `may_stay_valid`: once the outer digests are renewed, another value can still form a valid
    file (a free header field, the type of a flow partition, or a partition's size grown over
    the zero padding after it), in a bundle member too: a matching content digest vouches for
    the digests inside the bytes it covers, which are not hashed again.
    """
    positions = [(f.offset, f.format, f.name in FREE_HEADER_FIELDS)
                 for f in om_schema.HEADER_FIELDS if f.format in ("I", "Q", "B")]
    om = read_om(data)
    tables, end = [], HEADER_SIZE
    for model in om.models:
        tables.append(align_up(end))
        end = model.partitions[-1].offset + model.partitions[-1].size
    for table, model in zip(tables, om.models):
        positions.append((table, "I", False))
        for index in range(len(model.partitions)):
            positions += [(entry_at(index, "type", table), "I", not om.is_bundle),
                          (entry_at(index, "offset", table), "Q", False),
                          (entry_at(index, "size", table), "Q", True)]
    for member in om.models[0].partitions_of(PartitionType.BUNDLE_MODEL_INFO):
        positions += [(member.offset + at, fmt, stay) for at, fmt, stay in field_positions(bytes(member.data))]
    return positions


SAMPLES = {"flow": FLOW_OM, "two models": TWO_MODEL_OM, "bundle": BUNDLE_OM}
FIELDS = {name: field_positions(data) for name, data in SAMPLES.items()}
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_rejected(data: bytes) -> None:
    with pytest.raises(GeError):
        read_om(data)


def assert_rejected_or_read(data: bytes) -> None:
    try:
        read_om(data)
    except GeError:
        pass


@FUZZ
@given(name=st.sampled_from(sorted(SAMPLES)), where=st.floats(0, 1, exclude_max=True), mask=st.integers(1, 255))
def test_any_flipped_byte_is_rejected(name, where, mask):
    data = bytearray(SAMPLES[name])
    data[int(where * len(data))] ^= mask
    assert_rejected(bytes(data))


@FUZZ
@given(name=st.sampled_from(sorted(SAMPLES)), where=st.floats(0, 1, exclude_max=True))
def test_any_truncation_is_rejected(name, where):
    data = SAMPLES[name]
    assert_rejected(data[:int(where * len(data))])


@FUZZ
@given(name=st.sampled_from(sorted(SAMPLES)), data=st.data())
def test_any_header_or_table_field_set_to_another_value_is_rejected(name, data):
    original = SAMPLES[name]
    offset, fmt, may_stay_valid = data.draw(st.sampled_from(FIELDS[name]))
    bits = 8 * struct.calcsize(fmt)
    special = [0, 1, 2**(bits - 1), 2**bits - 1, len(original), len(original) - HEADER_SIZE, 64, 4096, 4097]
    value = data.draw(st.one_of(st.sampled_from([v for v in special if v < 2**bits]), st.integers(0, 2**bits - 1)))
    assume(struct.unpack_from("<" + fmt, original, offset)[0] != value)
    mutated = patched(original, offset, fmt, value)
    assert_rejected(mutated)
    if may_stay_valid:
        assert_rejected_or_read(resealed(mutated))
    else:  # layout fields are checked even when the digests agree
        assert_rejected(resealed(mutated))


@FUZZ
@given(name=st.sampled_from(sorted(SAMPLES)), where=st.floats(0, 1, exclude_max=True), junk=st.binary(min_size=1, max_size=64))
def test_overwritten_or_appended_bytes_are_rejected(name, where, junk):
    original = SAMPLES[name]
    start = int(where * len(original))
    overwritten = original[:start] + junk + original[start + len(junk):]
    assume(overwritten != original)
    assert_rejected(overwritten)
    assert_rejected(original + junk)


# ---------------------------------------------------------------- schema and digest agree


def test_native_schema_constants_equal_om_schema():
    native = _native.OM_SCHEMA
    for name in ("MAGIC", "HEADER_SIZE", "FORMAT_VERSION", "OM_IR_VERSION", "CHECKSUM_FIELD_SIZE", "DIGEST_SIZE",
                 "LENGTH_SATURATED", "TABLE_HEADER_SIZE", "TABLE_ENTRY_SIZE", "PARTITION_ALIGNMENT",
                 "MAX_PARTITIONS", "MAX_MODELS", "NAME_SIZE", "PLATFORM_VERSION_SIZE", "BUNDLE_VAR_INFO_SIZE"):
        assert native[name] == getattr(om_schema, name), name
    assert native["FIXED_HEADER_VALUES"] == om_schema.FIXED_HEADER_VALUES
    assert native["CONTENT_DIGEST_AT"] == om_schema.CONTENT_DIGEST_SLICE.start
    assert native["HEADER_DIGEST_AT"] == om_schema.HEADER_DIGEST_SLICE.start
    assert native["HEADER_OFFSETS"] == om_schema.HEADER_OFFSETS
    assert native["MODEL_TYPES"] == {t.name: t.value for t in ModelType}
    assert native["PARTITION_TYPES"] == {t.name: t.value for t in PartitionType}


@pytest.mark.parametrize("message", [b"", b"abc", b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                                     b"a" * 1_000_000])
def test_native_sha256_matches_the_standard_vectors(message):
    assert _native.sha256(message) == hashlib.sha256(message).digest()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_native_sha256_matches_hashlib_across_block_boundaries(message):
    assert _native.sha256(message) == hashlib.sha256(message).digest()
