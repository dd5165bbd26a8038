"""The trace file (`dfir.runtime.driver.trace_file`): models' traces as Chrome's Trace Event
Format, checked against a schema of the subset it writes and value by value on a synthetic
3-stage, 2-device pipeline whose middle node is replicated on both devices."""
from __future__ import annotations

import json
import os
from collections import defaultdict
from decimal import Decimal

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfir.runtime.driver.trace_file import chrome_trace, write_trace
from dfir.runtime.driver.trace_model import DRIVER, ModelTrace, TraceCounter, TraceSlice, UnitTrack

INTEGER = {"type": "integer", "minimum": 0}
TIME = {"type": "number", "minimum": 0}


def _event(ph: dict, required: list[str], **properties) -> dict:
    return {"type": "object", "properties": {"ph": ph, **properties}, "required": ["ph", *required],
            "additionalProperties": False}


# The subset of the Trace Event Format the file uses: every event is exactly one of these.
SCHEMA = {
    "type": "object",
    "required": ["traceEvents", "displayTimeUnit", "otherData"],
    "additionalProperties": False,
    "properties": {
        "displayTimeUnit": {"const": "ms"},
        "otherData": {
            "type": "object", "required": ["dfir_trace", "models", "clock_origin_ns"], "additionalProperties": False,
            "properties": {"dfir_trace": {"const": 1}, "models": {"type": "array", "items": {"type": "string"}},
                           "clock_origin_ns": INTEGER}},
        "traceEvents": {"type": "array", "items": {"oneOf": [
            _event({"const": "M"}, ["name", "pid", "tid", "args"],
                   name={"enum": ["process_name", "thread_name"]}, pid=INTEGER, tid=INTEGER,
                   args={"type": "object", "required": ["name"], "additionalProperties": False,
                         "properties": {"name": {"type": "string"}}}),
            _event({"const": "M"}, ["name", "pid", "tid", "args"],
                   name={"const": "process_sort_index"}, pid=INTEGER, tid=INTEGER,
                   args={"type": "object", "required": ["sort_index"], "additionalProperties": False,
                         "properties": {"sort_index": INTEGER}}),
            _event({"const": "X"}, ["cat", "name", "pid", "tid", "ts", "dur"],
                   cat={"const": "node"}, name={"type": "string", "pattern": r"^node '.+' instance \d+$"},
                   pid=INTEGER, tid={"type": "integer", "minimum": 1}, ts=TIME, dur=TIME,
                   args={"type": "object", "required": ["transaction_id"], "additionalProperties": False,
                         "properties": {"transaction_id": {"type": "integer", "minimum": 1}}}),
            _event({"const": "X"}, ["cat", "name", "pid", "tid", "ts", "dur"],
                   cat={"const": "driver"}, name={"enum": ["feed", "fetch"]}, pid=INTEGER, tid={"const": 0},
                   ts=TIME, dur=TIME,
                   args={"type": "object", "required": ["transaction_id"], "additionalProperties": False,
                         "properties": {"transaction_id": {"type": "integer", "minimum": 1}}}),
            _event({"enum": ["s", "t", "f"]}, ["cat", "name", "id", "pid", "tid", "ts", "bp"],
                   cat={"const": "transaction"}, name={"type": "string", "pattern": r"^transaction [1-9]\d*$"},
                   id=INTEGER, pid=INTEGER, tid=INTEGER, ts=TIME, bp={"const": "e"}),
            _event({"const": "C"}, ["name", "pid", "ts", "args"],
                   name={"type": "string"}, pid=INTEGER, ts=TIME,
                   args={"type": "object", "required": ["value"], "additionalProperties": False,
                         "properties": {"value": {"type": "number"}}}),
        ]}},
    },
}

DEVICES = ("0:0:0", "0:0:1")
# a on device 0, b replicated on both devices, c on device 1
UNITS = (UnitTrack("a", 0, 0), UnitTrack("b", 0, 0), UnitTrack("b", 1, 1), UnitTrack("c", 0, 1))
ORIGIN_NS = 1_100_000
TRANSACTIONS = (1, 2, 3, 4)


def _transaction_slices(t: int) -> list[TraceSlice]:
    """Feed, a, b (instance by transaction, round-robin), c, fetch: 100 us apart per transaction."""
    base = ORIGIN_NS + (t - 1) * 100_000
    b_unit = 1 + (t - 1) % 2
    return [TraceSlice(DRIVER, DRIVER, "feed", t, base, base + 2_000),
            TraceSlice(0, 0, "node 'a' instance 0", t, base + 5_000, base + 15_500),
            TraceSlice(UNITS[b_unit].worker, b_unit, UNITS[b_unit].label, t, base + 20_000, base + 40_250),
            TraceSlice(1, 3, "node 'c' instance 0", t, base + 45_000, base + 50_000),
            TraceSlice(DRIVER, DRIVER, "fetch", t, base + 55_000, base + 56_001)]


def pipeline_trace(model: str = "pipe") -> ModelTrace:
    """The synthetic pipeline after 4 transactions and a fetch that got none (transaction 0)."""
    slices = [piece for t in reversed(TRANSACTIONS) for piece in _transaction_slices(t)]  # out of order
    slices.append(TraceSlice(DRIVER, DRIVER, "fetch", 0, ORIGIN_NS + 500_000, ORIGIN_NS + 600_000))
    counters = [TraceCounter("depth: input 0 of node 'b' (device 0:0:1)", ORIGIN_NS + 250_000, 2),
                TraceCounter("depth: input 0 of node 'b' (device 0:0:1)", ORIGIN_NS + 150_000, 1),
                TraceCounter("arena bytes in use", ORIGIN_NS + 150_000, 4096)]
    return ModelTrace(model, DEVICES, UNITS, slices, counters)


def of_phase(trace: dict, *phases: str) -> list[dict]:
    return [event for event in trace["traceEvents"] if event["ph"] in phases]


def test_the_file_matches_the_schema_of_the_trace_event_subset():
    trace = chrome_trace([pipeline_trace("p"), pipeline_trace("q")])
    jsonschema.validate(trace, SCHEMA)
    assert trace["displayTimeUnit"] == "ms"
    assert trace["otherData"] == {"dfir_trace": 1, "models": ["p", "q"], "clock_origin_ns": ORIGIN_NS}


def test_processes_and_threads_are_named_the_driver_and_each_device_and_each_node_instance():
    assert of_phase(chrome_trace([pipeline_trace()]), "M") == [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "pipe driver"}},
        {"ph": "M", "name": "process_sort_index", "pid": 1, "tid": 0, "args": {"sort_index": 1}},
        {"ph": "M", "name": "process_name", "pid": 2, "tid": 0, "args": {"name": "pipe 0:0:0"}},
        {"ph": "M", "name": "process_sort_index", "pid": 2, "tid": 0, "args": {"sort_index": 2}},
        {"ph": "M", "name": "process_name", "pid": 3, "tid": 0, "args": {"name": "pipe 0:0:1"}},
        {"ph": "M", "name": "process_sort_index", "pid": 3, "tid": 0, "args": {"sort_index": 3}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 0, "args": {"name": "feed/fetch"}},
        {"ph": "M", "name": "thread_name", "pid": 2, "tid": 1, "args": {"name": "node 'a' instance 0"}},
        {"ph": "M", "name": "thread_name", "pid": 2, "tid": 2, "args": {"name": "node 'b' instance 0"}},
        {"ph": "M", "name": "thread_name", "pid": 3, "tid": 3, "args": {"name": "node 'b' instance 1"}},
        {"ph": "M", "name": "thread_name", "pid": 3, "tid": 4, "args": {"name": "node 'c' instance 0"}},
    ]


def test_a_second_models_processes_start_1024_further():
    metadata = of_phase(chrome_trace([pipeline_trace("p"), pipeline_trace("q")]), "M")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in metadata if e["name"] != "process_sort_index"}
    assert {key: name for key, name in names.items() if key[0] > 1024} == {
        (1025, 0): "feed/fetch", (1026, 0): "q 0:0:0", (1027, 0): "q 0:0:1",
        (1026, 1): "node 'a' instance 0", (1026, 2): "node 'b' instance 0",
        (1027, 3): "node 'b' instance 1", (1027, 4): "node 'c' instance 0"}
    assert names[(1025, 0)] == "feed/fetch" and {"ph": "M", "name": "process_name", "pid": 1025, "tid": 0,
                                                  "args": {"name": "q driver"}} in metadata


def test_slices_are_in_microseconds_after_the_first_begin_and_sorted_by_time():
    slices = of_phase(chrome_trace([pipeline_trace()]), "X")
    assert slices[:6] == [
        {"ph": "X", "cat": "driver", "name": "feed", "pid": 1, "tid": 0, "ts": 0.0, "dur": 2.0,
         "args": {"transaction_id": 1}},
        {"ph": "X", "cat": "node", "name": "node 'a' instance 0", "pid": 2, "tid": 1, "ts": 5.0, "dur": 10.5,
         "args": {"transaction_id": 1}},
        {"ph": "X", "cat": "node", "name": "node 'b' instance 0", "pid": 2, "tid": 2, "ts": 20.0, "dur": 20.25,
         "args": {"transaction_id": 1}},
        {"ph": "X", "cat": "node", "name": "node 'c' instance 0", "pid": 3, "tid": 4, "ts": 45.0, "dur": 5.0,
         "args": {"transaction_id": 1}},
        {"ph": "X", "cat": "driver", "name": "fetch", "pid": 1, "tid": 0, "ts": 55.0, "dur": 1.001,
         "args": {"transaction_id": 1}},
        {"ph": "X", "cat": "driver", "name": "feed", "pid": 1, "tid": 0, "ts": 100.0, "dur": 2.0,
         "args": {"transaction_id": 2}},
    ]
    assert [(e["name"], e["pid"], e["tid"], e["ts"]) for e in slices if e["name"].startswith("node 'b'")] == [
        ("node 'b' instance 0", 2, 2, 20.0), ("node 'b' instance 1", 3, 3, 120.0),
        ("node 'b' instance 0", 2, 2, 220.0), ("node 'b' instance 1", 3, 3, 320.0)]
    assert [e["ts"] for e in slices] == sorted(e["ts"] for e in slices) and len(slices) == 21


def test_a_slice_of_no_transaction_has_no_args_and_no_flow():
    trace = chrome_trace([pipeline_trace()])
    assert of_phase(trace, "X")[-1] == {"ph": "X", "cat": "driver", "name": "fetch", "pid": 1, "tid": 0,
                                        "ts": 500.0, "dur": 100.0}
    assert {e["name"] for e in of_phase(trace, "s", "t", "f")} == {f"transaction {t}" for t in TRANSACTIONS}


def test_times_keep_every_nanosecond_an_hour_in_and_touching_slices_do_not_overlap():
    hour = 3_600 * 10 ** 9
    slices = [TraceSlice(0, 0, "node 'a' instance 0", 1, 0, 100_006),
              TraceSlice(0, 0, "node 'a' instance 0", 2, 100_006, hour + 123),
              TraceSlice(0, 0, "node 'a' instance 0", 3, hour + 123, hour + 100_124)]
    events = of_phase(chrome_trace([ModelTrace("m", ("host",), UNITS[:1], slices)]), "X")
    assert [(e["ts"], e["dur"]) for e in events] == [(0.0, 100.006), (100.006, 3599999900.117),
                                                     (3600000000.123, 100.001)]
    for first, second in zip(events, events[1:]):
        assert Decimal(repr(first["ts"])) + Decimal(repr(first["dur"])) == Decimal(repr(second["ts"]))


def test_each_transaction_is_one_chain_of_flow_events_from_its_feed_through_its_nodes_to_its_fetch():
    flows = of_phase(chrome_trace([pipeline_trace()]), "s", "t", "f")
    assert flows[:5] == [
        {"ph": "s", "cat": "transaction", "name": "transaction 1", "id": 1, "pid": 1, "tid": 0, "ts": 0.0, "bp": "e"},
        {"ph": "t", "cat": "transaction", "name": "transaction 1", "id": 1, "pid": 2, "tid": 1, "ts": 5.0, "bp": "e"},
        {"ph": "t", "cat": "transaction", "name": "transaction 1", "id": 1, "pid": 2, "tid": 2, "ts": 20.0, "bp": "e"},
        {"ph": "t", "cat": "transaction", "name": "transaction 1", "id": 1, "pid": 3, "tid": 4, "ts": 45.0, "bp": "e"},
        {"ph": "f", "cat": "transaction", "name": "transaction 1", "id": 1, "pid": 1, "tid": 0, "ts": 56.001, "bp": "e"},
    ]  # the arrow ends where the fetch ended, when it took the result
    assert [(e["ph"], e["id"], e["pid"], e["tid"]) for e in flows[5:10]] == [
        ("s", 2, 1, 0), ("t", 2, 2, 1), ("t", 2, 3, 3), ("t", 2, 3, 4), ("f", 2, 1, 0)]
    assert len(flows) == 20


def test_a_fetch_that_began_before_its_transaction_s_nodes_still_ends_the_chain():
    early = [TraceSlice(DRIVER, DRIVER, "feed", 1, ORIGIN_NS, ORIGIN_NS + 1_000),
             TraceSlice(DRIVER, DRIVER, "fetch", 1, ORIGIN_NS + 2_000, ORIGIN_NS + 90_000),
             TraceSlice(0, 0, "node 'a' instance 0", 1, ORIGIN_NS + 5_000, ORIGIN_NS + 80_000)]
    flows = of_phase(chrome_trace([ModelTrace("m", DEVICES, UNITS, early)]), "s", "t", "f")
    assert [(e["ph"], e["pid"], e["tid"], e["ts"]) for e in flows] == [
        ("s", 1, 0, 0.0), ("t", 2, 1, 5.0), ("f", 1, 0, 90.0)]


def test_flow_ids_are_distinct_across_the_models_of_one_file():
    flows = of_phase(chrome_trace([pipeline_trace("p"), pipeline_trace("q")]), "s", "t", "f")
    ids = defaultdict(set)
    for event in flows:
        ids[event["pid"] // 1024].add(event["id"])
    assert ids == {0: {1, 2, 3, 4}, 1: {2 ** 40 + t for t in TRANSACTIONS}}


def test_counters_are_on_the_drivers_process_sorted_by_time():
    counters = of_phase(chrome_trace([pipeline_trace("p"), pipeline_trace("q")]), "C")
    depth = "depth: input 0 of node 'b' (device 0:0:1)"
    assert counters == [
        {"ph": "C", "name": "arena bytes in use", "pid": 1, "ts": 150.0, "args": {"value": 4096}},
        {"ph": "C", "name": depth, "pid": 1, "ts": 150.0, "args": {"value": 1}},
        {"ph": "C", "name": "arena bytes in use", "pid": 1025, "ts": 150.0, "args": {"value": 4096}},
        {"ph": "C", "name": depth, "pid": 1025, "ts": 150.0, "args": {"value": 1}},
        {"ph": "C", "name": depth, "pid": 1, "ts": 250.0, "args": {"value": 2}},
        {"ph": "C", "name": depth, "pid": 1025, "ts": 250.0, "args": {"value": 2}},
    ]


def test_a_counter_sampled_before_every_slice_sets_the_origin_so_no_time_is_negative():
    trace = pipeline_trace()
    trace.counters.append(TraceCounter("arena bytes in use", ORIGIN_NS - 7_000, 0))
    written = chrome_trace([trace])
    assert written["otherData"]["clock_origin_ns"] == ORIGIN_NS - 7_000
    assert of_phase(written, "C")[0]["ts"] == 0.0 and of_phase(written, "X")[0]["ts"] == 7.0


def test_the_events_run_metadata_slices_flows_counters():
    phases = [event["ph"] for event in chrome_trace([pipeline_trace("p"), pipeline_trace("q")])["traceEvents"]]
    groups = [phases[0]] + [b for a, b in zip(phases, phases[1:]) if {a, b} - {"s", "t", "f"} and a != b]
    assert groups == ["M", "X", "s", "C"]


def test_no_traces_make_a_file_with_no_events():
    assert chrome_trace([]) == {"traceEvents": [], "displayTimeUnit": "ms",
                                "otherData": {"dfir_trace": 1, "models": [], "clock_origin_ns": 0}}


def test_a_model_with_no_slices_has_its_named_tracks_only():
    trace = chrome_trace([ModelTrace("idle", ("host",), (UnitTrack("a", 0, 0),))])
    assert {e["ph"] for e in trace["traceEvents"]} == {"M"}
    assert [e["args"]["name"] for e in trace["traceEvents"] if e["name"] != "process_sort_index"] == [
        "idle driver", "idle host", "feed/fetch", "node 'a' instance 0"]


def test_write_trace_writes_the_json_atomically_and_the_same_bytes_for_the_same_traces(tmp_path):
    path = tmp_path / "run.json"
    write_trace(path, [pipeline_trace()])
    first = path.read_bytes()
    write_trace(str(path), [pipeline_trace()])
    assert path.read_bytes() == first
    assert json.loads(first) == chrome_trace([pipeline_trace()])
    assert os.listdir(tmp_path) == ["run.json"]


def test_write_trace_into_a_missing_folder_raises_and_leaves_nothing(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_trace(tmp_path / "missing" / "run.json", [pipeline_trace()])
    assert os.listdir(tmp_path) == []


# -- any slices: the flow chains follow their transaction's slices ------------------------------

@st.composite
def random_trace(draw) -> ModelTrace:
    units = (UnitTrack("a", 0, 0), UnitTrack("b", 0, 1), UnitTrack("b", 1, 1))
    slices = []
    for _ in range(draw(st.integers(0, 40))):
        unit = draw(st.integers(DRIVER, len(units) - 1))
        worker = DRIVER if unit == DRIVER else units[unit].worker
        name = draw(st.sampled_from(["feed", "fetch"])) if unit == DRIVER else units[unit].label
        begin = draw(st.integers(0, 10 ** 9))
        end = begin + draw(st.integers(0, 10 ** 6))
        slices.append(TraceSlice(worker, unit, name, draw(st.integers(0, 6)), begin, end))
    return ModelTrace("r", ("host", "0:0:1"), units, slices)


@settings(max_examples=100, deadline=None)
@given(random_trace())
def test_every_transaction_of_two_slices_or_more_gives_one_s_then_t_then_one_f_at_its_slices(trace):
    written = chrome_trace([trace])
    jsonschema.validate(written, SCHEMA)
    slices_of = defaultdict(list)
    for event in of_phase(written, "X"):
        slices_of[event.get("args", {}).get("transaction_id", 0)].append(event)
    flows_of = defaultdict(list)
    for event in of_phase(written, "s", "t", "f"):
        flows_of[event["id"]].append(event)
    chained = {t for t, events in slices_of.items() if t != 0 and len(events) >= 2}
    assert set(flows_of) == chained
    for transaction, flows in flows_of.items():
        events = slices_of[transaction]
        assert [e["ph"] for e in flows] == ["s"] + ["t"] * (len(events) - 2) + ["f"]
        # each slice once: the s and t at their slices' begins, the f at its slice's end
        at = [(e["pid"], e["tid"], e["ts"]) for e in flows[:-1]] + \
             [(flows[-1]["pid"], flows[-1]["tid"], flows[-1]["ts"], "end")]
        assert sorted(map(str, at)) == sorted(map(str, _places(events, flows[-1])))
        names = [_names_at(events, e, at_end=k == len(flows) - 1) for k, e in enumerate(flows)]
        assert all(names)  # every flow event sits at a slice's begin, the last at one's end
        kinds = {e["name"] for e in events}
        assert "feed" in names[0] or "feed" not in kinds  # a feed starts the chain
        assert "fetch" in names[-1] or "fetch" not in kinds  # a fetch ends it
    assert len(of_phase(written, "X")) == len(trace.slices)


def _places(events: list[dict], last: dict) -> list[tuple]:
    """Where the flows of `events` should be: each slice's begin, but one slice (the chain's last,
    the one `last` sits in) at its end."""
    places = [(e["pid"], e["tid"], e["ts"]) for e in events]
    # of two slices ending there (one may take no time), the chain's last began last
    for k, e in sorted(enumerate(events), key=lambda item: item[1]["ts"], reverse=True):
        if (e["pid"], e["tid"], round(e["ts"] + e["dur"], 3)) == (last["pid"], last["tid"], last["ts"]):
            places[k] = (e["pid"], e["tid"], last["ts"], "end")
            return places
    raise AssertionError(f"no slice ends where the chain's last flow event is: {last}")


def _names_at(events: list[dict], flow: dict, at_end: bool) -> set[str]:
    """The names of the slices a flow event may sit in: those of its thread that begin where it is
    (end, for the chain's last); slices that share that point cannot be told apart in the file."""
    return {e["name"] for e in events if (e["pid"], e["tid"]) == (flow["pid"], flow["tid"])
            and (round(e["ts"] + e["dur"], 3) if at_end else e["ts"]) == flow["ts"]}


@pytest.mark.parametrize("change", [
    lambda e: e["traceEvents"][0].update(ph="B"),                           # an event kind it never writes
    lambda e: of_phase(e, "X")[0]["args"].update(transaction_id=0),         # transaction 0 has no args
    lambda e: of_phase(e, "s")[0].pop("bp"),                                # a flow not bound to its slice
    lambda e: of_phase(e, "X")[0].update(ts=-1.0),                          # before the origin
    lambda e: of_phase(e, "X")[1].update(name="a"),                         # a node slice not named by instance
])
def test_the_schema_refuses_what_the_file_must_not_hold(change):
    written = chrome_trace([pipeline_trace()])
    change(written)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(written, SCHEMA)
