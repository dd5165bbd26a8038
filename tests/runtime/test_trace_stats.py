"""Statistics of a trace (runtime/driver/trace_stats.py): nearest-rank percentiles, power-of-two
histograms that merge by adding, channel peaks."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dfir.runtime.driver.trace_model import DRIVER, ModelTrace, TraceCounter, TraceSlice, UnitTrack
from dfir.runtime.driver.trace_stats import call_stats, channel_stats, histogram, nearest_rank, node_stats


def test_each_unit_gets_its_calls_and_the_driver_s_slices_count_for_none():
    units = (UnitTrack("a", 0, 0), UnitTrack("b", 0, 1), UnitTrack("b", 1, 1))
    slices = [TraceSlice(0, 0, "node 'a' instance 0", 1, 0, 3_000, 16, 8),
              TraceSlice(0, 0, "node 'a' instance 0", 2, 0, 1_000, 16, 8),
              TraceSlice(1, 1, "node 'b' instance 0", 1, 0, 40_500, 8, 4000),
              TraceSlice(DRIVER, DRIVER, "feed", 1, 0, 99_000, 0, 16)]
    stats = node_stats(ModelTrace("m", ("host", "0:0:1"), units, slices))
    no_waits = {"calls": 0, "p50_us": None, "p99_us": None, "max_us": None, "histogram_us": {}}
    assert [{k: v for k, v in unit.items() if k != "waits"} for unit in stats] == [
        {"node": "a", "instance": 0, "device": "host", "calls": 2, "p50_us": 1.0, "p99_us": 3.0, "max_us": 3.0,
         "histogram_us": {"1": 1, "4": 1}, "bytes_in": 32, "bytes_out": 16},
        {"node": "b", "instance": 0, "device": "0:0:1", "calls": 1, "p50_us": 40.5, "p99_us": 40.5, "max_us": 40.5,
         "histogram_us": {"64": 1}, "bytes_in": 8, "bytes_out": 4000},
        {"node": "b", "instance": 1, "device": "0:0:1", "calls": 0, **no_waits, "bytes_in": 0, "bytes_out": 0}]
    assert stats[2]["waits"] == no_waits


def test_a_call_waits_from_the_end_of_its_transaction_s_previous_slice():
    """Transaction 1: fed 0-1 us, a 4-6 us (waits 3), b 5-9 us (began before a ended: waits 0),
    then c 20-21 us waits 11 from b's end; transaction 2 has no feed slice: a's first call
    has nothing to wait from."""
    units = (UnitTrack("a", 0, 0), UnitTrack("b", 0, 0), UnitTrack("c", 0, 0))
    us = 1000
    slices = [TraceSlice(DRIVER, DRIVER, "feed", 1, 0, 1 * us), TraceSlice(0, 0, "node 'a' instance 0", 1, 4 * us, 6 * us),
              TraceSlice(0, 1, "node 'b' instance 0", 1, 5 * us, 9 * us),
              TraceSlice(0, 2, "node 'c' instance 0", 1, 20 * us, 21 * us),
              TraceSlice(DRIVER, DRIVER, "fetch", 1, 2 * us, 30 * us),  # a fetch is no previous hop
              TraceSlice(0, 0, "node 'a' instance 0", 2, 40 * us, 41 * us)]
    a, b, c = (unit["waits"] for unit in node_stats(ModelTrace("m", ("host",), units, slices)))
    assert (a["calls"], a["max_us"], b["max_us"], c["max_us"]) == (1, 3.0, 0.0, 11.0)


def test_percentiles_are_nearest_rank():
    values = list(range(1, 101))
    assert [nearest_rank(values, p) for p in (1, 50, 99, 100)] == [1, 50, 99, 100]
    assert nearest_rank([7.0], 99) == 7.0


def test_histogram_buckets_are_powers_of_two_by_their_upper_bound():
    assert histogram([0.2, 1, 1.5, 2, 2.1, 1000, 1024, 1025]) == {"1": 2, "2": 2, "4": 1, "1024": 2, "2048": 1}


@given(st.lists(st.floats(0.01, 1e7), max_size=50), st.lists(st.floats(0.01, 1e7), max_size=50))
def test_two_histograms_merge_by_adding(first, second):
    merged = dict(histogram(first))
    for bound, count in histogram(second).items():
        merged[bound] = merged.get(bound, 0) + count
    assert dict(sorted(merged.items(), key=lambda kv: int(kv[0]))) == histogram(first + second)
    assert sum(call_stats(first + second)["histogram_us"].values()) == len(first) + len(second)


def test_a_channel_s_peak_is_its_deepest_sample():
    counters = [TraceCounter("depth: input 0 of node 'b' instance 0 (device host)", t, v)
                for t, v in enumerate([0, 5, 3, 9, 0])] + [TraceCounter("arena bytes in use", 0, 4096)]
    assert channel_stats(ModelTrace("m", ("host",), (), [], counters)) == {
        "input 0 of node 'b' instance 0 (device host)": 9}
