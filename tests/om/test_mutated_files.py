"""Real `.om` files with their headers and partition tables mutated, digests recomputed.

The compiled pipelines of tests/om/plan_samples.py, a bundle of them and a bundle whose member
names do not fit the header (BUNDLE_MODEL_NAMES) are changed at one to three places: a header
field, a table's count or pad, an entry's type, pad, offset or size, the padding between
partitions, a bundle member's header or table, the bundle's variable size. The digests of every
file that holds a change are recomputed, as a writer would, so the change reaches the checks
behind them. Each result is refused with a GeError, the same one from `read_om`, `dfir.load`
and `dfir inspect`, or loads cleanly (and a flow model then runs a feed) — never another
exception, never a crash.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import dfir
from dfir.core.errors import GeError
from dfir.frontend.dataflow import names
from dfir.lowering.om_writer import write_bundle
from dfir.om.schema import (
    HEADER_FIELDS, HEADER_SIZE, TABLE_ENTRY_SIZE, TABLE_HEADER_SIZE, PartitionType, align_up,
)
from dfir.runtime.driver.loader import Bundle
from dfir.runtime.om import OmFile, read_om
from dfir.tools.inspect_om import inspect_om
from plan_samples import SAMPLES
from test_container import resealed

WAIT_MS = 300
LONG = "a_pipeline_name_longer_than_the_header_holds_"  # 46 bytes


class Sample(NamedTuple):
    data: bytes
    feed: list[np.ndarray] | None  # None for a bundle


class Site(NamedTuple):
    """A place to mutate: its byte offset in the file, its struct format, and where the `.om`
    whose digests cover it starts (0: the file itself; else a bundle member's offset)."""

    offset: int
    fmt: str
    owner: int


def sites_of(om: OmFile, base: int = 0) -> list[Site]:
    """Every header field (but the digests), table field, padding run, and BUNDLE_MODEL_VAR_INFO
    value of `om` (which starts at `base` of the file), and of its bundle members."""
    found = [Site(base + f.offset, f.format, base) for f in HEADER_FIELDS if f.name != "checksum"]
    end = HEADER_SIZE
    for model in om.models:
        table = HEADER_SIZE if om.is_bundle else align_up(end)
        if table > end:
            found.append(Site(base + end, f"{table - end}s", base))
        found += [Site(base + table, "I", base), Site(base + table + 4, "I", base)]
        cursor = table + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * len(model.partitions)
        for index, partition in enumerate(model.partitions):
            entry = table + TABLE_HEADER_SIZE + TABLE_ENTRY_SIZE * index
            found += [Site(base + entry + at, fmt, base) for at, fmt in ((0, "I"), (4, "I"), (8, "Q"), (16, "Q"))]
            if partition.offset > cursor:
                found.append(Site(base + cursor, f"{partition.offset - cursor}s", base))
            cursor = partition.offset + partition.size
        end = cursor
    if om.is_bundle:
        table = om.models[0]
        found.append(Site(base + table.partitions[0].offset, "Q", base))
        for (_, member), entry in zip(om.bundle, table.partitions_of(PartitionType.BUNDLE_MODEL_INFO)):
            found += sites_of(member, base + entry.offset)
    return found


def owners_of(om: OmFile) -> list[int]:
    """Where each bundle member starts in the file (members before the file: inner digests first)."""
    if not om.is_bundle:
        return [0]
    return [entry.offset for entry in om.models[0].partitions_of(PartitionType.BUNDLE_MODEL_INFO)] + [0]


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Sample]:
    built = {}
    for name, build in SAMPLES.items():
        names.reset()
        sample = build(tmp_path_factory.mktemp(name))
        built[name] = Sample(sample.om, sample.feed)
    flows = [built["pyflow_chain"].data, built["ge_graph_node"].data]
    built["bundle"] = Sample(write_bundle(flows, ["chain", "ge"], var_size=64, name="set"), None)
    built["long names"] = Sample(write_bundle(flows, [LONG + "chain", LONG + "ge"]), None)
    return built


@pytest.fixture(scope="module")
def layouts(samples) -> dict[str, tuple[list[Site], list[int]]]:
    return {name: (sites_of(read_om(sample.data)), owners_of(read_om(sample.data))) for name, sample in samples.items()}


SPECIAL = [0, 1, 2, 3, 5, 6, 7, 24, 25, 31, 32, 63, 64, 65, 255, 256, 4095, 4096, 4097, 0x1000, 0x1001, 0x1005,
           0x1010, 2**31, 2**32 - 1, 2**63, 2**64 - 1]


def new_value(data, original: bytes, site: Site):
    """A value for `site` (packed by its format), drawn from `data`."""
    if site.fmt.endswith("s"):
        size = int(site.fmt[:-1])
        current = bytearray(original[site.offset:site.offset + size])
        kind = data.draw(st.sampled_from(["poke", "random", "text"]))
        if kind == "poke":
            current[data.draw(st.integers(0, size - 1))] = data.draw(st.integers(1, 255))
            return bytes(current)
        if kind == "random":
            return data.draw(st.binary(min_size=size, max_size=size))
        return data.draw(st.text(max_size=size)).encode()[:size]  # struct pads with zeros
    bits = 8 * struct.calcsize("<" + site.fmt)
    (current,) = struct.unpack_from("<" + site.fmt, original, site.offset)
    near = [current + delta for delta in (-64, -1, 1, 8, 64) if 0 <= current + delta < 2**bits]
    nearby = [v for v in SPECIAL + near + [len(original), len(original) - HEADER_SIZE] if v < 2**bits]
    return data.draw(st.one_of(st.sampled_from(nearby), st.integers(0, 2**bits - 1)))


def mutated(data, samples, layouts) -> tuple[str, bytes]:
    name = data.draw(st.sampled_from(sorted(samples)))
    original = samples[name].data
    sites, owners = layouts[name]
    out = bytearray(original)
    for _ in range(data.draw(st.integers(1, 3))):
        site = data.draw(st.sampled_from(sites))
        struct.pack_into("<" + site.fmt, out, site.offset, new_value(data, original, site))
    result = bytes(out)
    for owner in owners:  # renew the digests of every member, then of the file, as a writer would
        result = resealed(result, owner)
    return name, result


def error_of(call, data) -> str | None:
    try:
        call(data)
    except GeError as error:
        return str(error)
    return None


def close(loaded) -> None:
    loaded.close()


def test_the_samples_load_and_run_as_written(samples):
    for name, sample in samples.items():
        with dfir.load(sample.data, trust="any") as loaded:
            if sample.feed is None:
                assert isinstance(loaded, Bundle) and len(loaded) == 2
            else:
                assert loaded.feed_data(sample.feed, timeout=5000) == 0
                assert loaded.fetch_data(timeout=5000)[2] == 0
        inspect_om(sample.data)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(data=st.data())
def test_a_mutated_file_is_refused_with_one_ge_error_or_loads_cleanly(samples, layouts, data):
    name, om = mutated(data, samples, layouts)
    read_error = error_of(read_om, om)
    if read_error is not None:  # the native reader refused it: every entry point says the same
        event("refused by the reader")
        assert error_of(inspect_om, om) == read_error
        assert error_of(lambda d: close(dfir.load(d, trust="any")), om) == read_error
        return
    try:
        inspect_om(om)
    except GeError:
        pass  # the container is sound but its plan is not (a FLOW_MODEL entry retyped, say)
    try:
        loaded = dfir.load(om, trust="any")  # past the signature: what the loader itself checks
    except GeError:
        event("refused by dfir.load")
        return
    event("loaded")
    with loaded:
        feed = samples[name].feed
        if feed is not None and loaded.feed_data(feed, timeout=WAIT_MS) == 0:
            loaded.fetch_data(timeout=WAIT_MS)
